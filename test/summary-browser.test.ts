// The job summary in a real browser: its Markdown rendered GitHub-flavoured (marked), loaded in
// headless Chromium, and the structure Chromium built checked: the table's columns and rows, one
// collapsed <details> per failed Job's log tail, and markup from the cluster left as text.
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { JobOutcome, RunResult } from '../src/execute/outcome.ts'
import { buildReport } from '../src/report/summary.ts'
import { PAGE_WIDTH, pngSize, renderInBrowser, screenshot, summaryPage, type RenderedSummary } from './summary/page.ts'
import { HOSTILE, richRun } from './summary/rich-run.ts'
import { testNeeding } from './cluster/prerequisites.ts'

// Skipped, and said at the start and the end of npm test, where no Chromium is found (required under CI=true).
const browserTest = testNeeding('chromium')

let rich: RenderedSummary
let page: string
beforeAll(() => {
  page = summaryPage(buildReport(richRun(true)).markdown)
  rich = renderInBrowser(page)
})

browserTest('one table: the outcome columns, one row per Job, log paths as code', () => {
  expect(rich.tables).toHaveLength(1)
  const [table] = rich.tables
  expect(table.columns).toEqual(['Job', 'Status', 'Outcome', 'Finished', 'Logs (in logs-dir)', 'Reason'])
  expect(table.rows.map((r) => [r[0], r[2]])).toEqual([
    ['shop-migrate-41', 'waited, then pruned'],
    ['shop-pre-upgrade-hook', 'kept'],
    ['shop-seed', 'pruned'],
    [HOSTILE.name, 'pruned'],
    ['shop-cleanup', '❌ failed to prune']
  ])
  expect(table.rows[0][3]).toBe('11:58:45 UTC (1m15s ago)')
  expect(table.codeCells).toEqual(['shop/shop-migrate-41/shop-migrate-41-x7k2q/migrate.log', 'shop/shop-seed/ (2 files)'])
  expect(rich.headline).toBe(`❌ 1 failed: ${HOSTILE.error}`)
})

browserTest("each failed Job's log tail is a collapsed <details> block, its lines as text", () => {
  expect(rich.details).toEqual([
    {
      summary: 'Last lines of failed Job shop-seed: shop/shop-seed/shop-seed-9bq4z/seed.log',
      open: false,
      pre: [expect.stringContaining('seed: ERROR: duplicate key value violates unique constraint "products_pkey"')]
    }
  ])
})

browserTest('markup from the cluster — in a Job name, an annotation, a log tail, an error — stays text: no element made of it, nothing ran', () => {
  expect({ scripts: rich.scripts, handlers: rich.handlers, images: rich.images, pwned: rich.pwned }).toEqual({
    scripts: 0,
    handlers: 0,
    images: 0,
    pwned: null
  })
  const cells = rich.tables[0].rows.flat().join('\n')
  expect(cells).toContain(HOSTILE.name)
  expect(cells).toContain(HOSTILE.annotation)
  expect(cells).toContain(HOSTILE.error)
  expect(rich.details[0].pre[0]).toContain(`${HOSTILE.logLine}\n${HOSTILE.annotation}`)
})

browserTest('control: the same strings unescaped do become elements and run, so the test above can fail', () => {
  const raw = renderInBrowser(summaryPage(`| Job |\n| --- |\n| ${HOSTILE.name} |\n\n${HOSTILE.annotation}\n\n<b onmouseover=x>ci</b>`))
  expect({ scripts: raw.scripts, images: raw.images, handlers: raw.handlers }).toEqual({ scripts: 1, images: 1, handlers: 2 })
  expect(raw.pwned).not.toBeNull()
})

browserTest('a screenshot of the whole page is a PNG of its size', () => {
  const dir = mkdtempSync(join(tmpdir(), 'job-sweeper-shot-'))
  try {
    const png = join(dir, 'summary.png')
    screenshot(page, png, rich.height)
    expect(pngSize(png)).toEqual({ width: PAGE_WIDTH, height: rich.height })
    expect(statSync(png).size).toBeGreaterThan(10_000)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

browserTest('5,000 Jobs: under 1 MiB, and the browser shows the rows that matter, then 50 others in a collapsed block', () => {
  const outcomes: JobOutcome[] = Array.from({ length: 5000 }, (_, i) => ({
    namespace: 'shop',
    name: `job-${String(i).padStart(4, '0')}`,
    status: 'succeeded',
    ageSeconds: 90,
    action: 'delete',
    result: i < 5 ? 'error' : 'pruned',
    waited: false,
    reason: 'succeeded; ttl 1h (the input) has expired'
  }))
  const run: RunResult = { phase: 'sweep', namespace: 'shop', dryRun: false, outcomes, errors: ['Job shop/job-0000: 500'], warnings: [] }
  const markdown = buildReport(run).markdown
  expect(Buffer.byteLength(markdown)).toBeLessThan(1024 * 1024)
  const shown = renderInBrowser(summaryPage(markdown))
  expect(shown.tables.map((t) => t.rows.length)).toEqual([5, 50])
  expect(shown.details.map((d) => [d.summary, d.open])).toEqual([['4995 other Job(s): the first 50', false]])
})
