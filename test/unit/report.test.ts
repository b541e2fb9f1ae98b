// The report: headline, rows, log tails, banners — and nothing from the cluster unescaped.
import type { JobOutcome, RunResult } from '../../src/execute/outcome.ts'
import { buildReport, OUTPUT_BYTES, summarize } from '../../src/report/summary.ts'
import { renderText } from '../../src/report/text.ts'

function outcome(o: Partial<JobOutcome> & { name: string }): JobOutcome {
  return { namespace: 'prod', status: 'succeeded', ageSeconds: 90, action: 'delete', result: 'pruned', waited: false, reason: 'r', ...o }
}

function result(outcomes: JobOutcome[], extra: Partial<RunResult> = {}): RunResult {
  return { phase: 'pre', namespace: 'prod', dryRun: false, outcomes, errors: [], warnings: [], ...extra }
}

test('headline counts pruned, waited and kept; every Job has a row', () => {
  const report = buildReport(
    result([
      outcome({ name: 'a' }),
      outcome({ name: 'b', waited: true, action: 'wait' }),
      outcome({ name: 'c', result: 'kept', action: 'keep' }),
      outcome({ name: 'd', result: 'kept', action: 'keep' })
    ])
  )
  expect(report.markdown).toContain('**✅ 2 pruned (1 after waiting) · 2 kept**')
  expect(report.markdown).toContain('| b | succeeded | waited, then pruned | — | — | r |')
  const names = (output: string): string[] => (JSON.parse(report.outputs[output]) as { name: string }[]).map((j) => j.name)
  expect(names('pruned')).toEqual(['a', 'b'])
  expect(JSON.parse(report.outputs.waited)).toEqual([{ namespace: 'prod', name: 'b', status: 'succeeded', reason: 'r' }])
  expect(names('kept')).toEqual(['c', 'd'])
  expect(report.outputs['kept-count']).toBe('2')
})

test.each(['pre', 'sweep', 'post'] as const)(
  '%s: a Job someone else deleted is listed as gone, never as pruned nor counted in the headline as pruned',
  (phase) => {
    const report = buildReport(
      result(
        [
          outcome({ name: 'ours' }),
          outcome({ name: 'theirs', result: 'gone', reason: 'succeeded; … — already gone' }),
          outcome({ name: 'waited', result: 'gone', waited: true, action: 'wait', reason: 'finished, and deleted by someone else while it was waited for' }),
          outcome({ name: 'kept', result: 'kept', action: 'keep' })
        ],
        { phase }
      )
    )
    const names = (output: string): string[] => (JSON.parse(report.outputs[output]) as { name: string }[]).map((j) => j.name)
    expect(names('pruned')).toEqual(['ours'])
    expect(report.outputs['pruned-count']).toBe('1')
    expect(names('gone')).toEqual(['theirs', 'waited'])
    expect(report.outputs['gone-count']).toBe('2')
    expect(names('kept')).toEqual(['kept'])
    const counts = { pre: '1 pruned · 1 kept', sweep: '1 pruned · 1 kept', post: '0 TTL set · 1 kept' }[phase]
    expect(report.markdown).toContain(`**✅ ${counts} · 2 already gone (1 after waiting)**`)
    expect(report.markdown).toMatch(/^\| theirs \| succeeded \| already gone \|/m)
    expect(report.markdown).toMatch(/^\| waited \| succeeded \| waited, then already gone \|/m)
  }
)

test('a run with nothing to do still writes a one-line summary', () => {
  const report = buildReport(result([]))
  expect(report.markdown).toContain('**✅ No Jobs in scope: nothing to do.**')
  expect(report.outputs).toEqual({
    pruned: '[]',
    'pruned-count': '0',
    gone: '[]',
    'gone-count': '0',
    kept: '[]',
    'kept-count': '0',
    waited: '[]',
    'waited-count': '0',
    'ttl-set': '[]',
    'ttl-set-count': '0'
  })
})

test('dry run: banner, and "would be pruned"', () => {
  const report = buildReport(result([outcome({ name: 'a', result: 'would-prune' })], { dryRun: true }))
  expect(report.markdown).toContain('DRY RUN — nothing was changed')
  expect(report.markdown).toContain('**✅ 1 would be pruned · 0 kept**')
})

test('names, reasons and log lines from the cluster are escaped', () => {
  const report = buildReport(
    result(
      [
        outcome({
          name: 'evil|<script>alert(1)</script>',
          status: 'failed',
          reason: 'uses `backticks` and | pipes\nand a newline',
          logs: {
            files: [{ file: 'x.log', bytes: 3, truncated: false }],
            failures: [],
            tails: [{ file: 'x.log', lines: ['</pre><script>alert(2)</script>', 'a | b `c`'] }]
          }
        })
      ],
      { errors: ['Job prod/<b>bad</b> failed'] }
    )
  )
  expect(report.markdown).not.toMatch(/<script>|<\/pre><script>|<b>/)
  expect(report.markdown).toContain('| evil&#124;&lt;script&gt;alert(1)&lt;/script&gt; | failed | pruned |')
  expect(report.markdown).toContain('| <code>x.log</code> | uses &#96;backticks&#96; and &#124; pipes and a newline |')
  expect(report.markdown).toContain('**❌ 1 failed: Job prod/&lt;b&gt;bad&lt;/b&gt; failed**')
  expect(report.markdown).toContain('<pre>&lt;/pre&gt;&lt;script&gt;alert(2)&lt;/script&gt;\na | b `c`</pre>')
  expect(report.markdown).toContain('- Job prod/&lt;b&gt;bad&lt;/b&gt; failed')
  // The JSON outputs keep the real values: they are data, not markup.
  expect(JSON.parse(report.outputs.pruned)[0].name).toBe('evil|<script>alert(1)</script>')
})

test('log tails are shown for failed Jobs only', () => {
  const tails = [{ file: 'ok.log', lines: ['all good'] }]
  const report = buildReport(
    result([outcome({ name: 'ok', status: 'succeeded', logs: { files: [{ file: 'ok.log', bytes: 3, truncated: false }], failures: [], tails } })])
  )
  expect(report.markdown).not.toContain('all good')
})

test('the terminal rendering aligns columns and strips control characters from the cluster', () => {
  const text = renderText(
    summarize(
      result([
        outcome({ name: 'short', reason: 'ok' }),
        outcome({
          name: 'a-much-longer-name',
          status: 'failed',
          reason: 'boom',
          logs: { files: [{ file: 'f', bytes: 3, truncated: false }], failures: [], tails: [{ file: 'f', lines: ['\u001b[31mred\u001b[0m'] }] }
        })
      ])
    )
  )
  expect(text).toMatch(/^Job {17}Status/m)
  expect(text).toMatch(/^short {15}succeeded /m)
  expect(text).not.toContain('\u001b')
  expect(text).toContain('  | ?[31mred?[0m')
})

describe('at scale', () => {
  // 5,000 Jobs: 4,990 pruned, 5 errors, 3 waited, 2 failed with logs.
  const many = (): RunResult => {
    const outcomes: JobOutcome[] = []
    for (let i = 0; i < 5000; i++) {
      const name = `migrate-${String(i).padStart(4, '0')}`
      if (i < 5) outcomes.push(outcome({ name, result: 'error', reason: 'failed: 500 boom' }))
      else if (i < 8) outcomes.push(outcome({ name, waited: true, action: 'wait' }))
      else if (i < 10)
        outcomes.push(outcome({ name, status: 'failed', logs: { files: [{ file: `${name}.log`, bytes: 9, truncated: false }], failures: [], tails: [] } }))
      else outcomes.push(outcome({ name, reason: 'succeeded; a Job’s pod template is immutable, so helm upgrade fails while it exists' }))
    }
    return result(outcomes, { errors: Array.from({ length: 5 }, (_, i) => `Job prod/migrate-000${i}: 500 boom`) })
  }

  test('the summary of 5,000 Jobs stays small: counts, the rows that matter, and the first of the rest collapsed', () => {
    const report = buildReport(many())
    expect(Buffer.byteLength(report.markdown)).toBeLessThan(64 * 1024)
    expect(report.markdown).toContain(
      '**❌ 5 failed: Job prod/migrate-0000: 500 boom (and 4 more below)**\n\n4995 pruned (3 after waiting) · 0 kept · 5 failed\n'
    )
    const tableRows = report.markdown.split('\n').filter((l) => /^\| migrate-\d{4} \|/.test(l))
    // The 10 that matter, then 50 of the other 4,990 inside <details>.
    expect(tableRows.slice(0, 10).map((l) => l.split(' | ')[0])).toEqual(Array.from({ length: 10 }, (_, i) => `| migrate-000${i}`))
    expect(tableRows).toHaveLength(60)
    expect(report.markdown).toContain('<details><summary>4990 other Job(s): the first 50</summary>')
    expect(report.markdown).toContain('… and 4940 more: every Job is in the report file.')
    expect(report.markdown.match(/<details>/g)).toHaveLength(1)
    expect(report.markdown.match(/<\/details>/g)).toHaveLength(1)
  })

  test('list outputs stay valid JSON under their byte limit; the counts stay exact', () => {
    const report = buildReport(many())
    expect(report.outputs['pruned-count']).toBe('4995')
    expect(report.outputs.pruned.length).toBeLessThanOrEqual(OUTPUT_BYTES)
    const pruned = JSON.parse(report.outputs.pruned) as { name: string }[]
    expect(pruned.length).toBeGreaterThan(100)
    expect(pruned.length).toBeLessThan(4995)
    expect(pruned[0].name).toBe('migrate-0005')
  })

  test('the terminal rendering of 5,000 Jobs is as short', () => {
    const text = renderText(summarize(many()))
    expect(text.split('\n').length).toBeLessThan(100)
    expect(text).toContain('4990 other Job(s), the first 50:')
  })
})
