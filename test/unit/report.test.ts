// The report: headline, rows, log tails, banners — and nothing from the cluster unescaped.
import type { JobOutcome, RunResult } from '../../src/execute/outcome.ts'
import { buildReport, summarize } from '../../src/report/summary.ts'
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
  expect(report.markdown).toContain('**2 pruned · 1 waited · 2 kept**')
  expect(report.markdown).toContain('| b | prod | succeeded | 1m30s | — | waited, pruned | r | — |')
  expect(report.outputs.pruned.map((j) => j.name)).toEqual(['a', 'b'])
  expect(report.outputs.waited).toEqual([{ namespace: 'prod', name: 'b', status: 'succeeded', reason: 'r' }])
  expect(report.outputs.kept.map((j) => j.name)).toEqual(['c', 'd'])
})

test('a run with nothing to do still writes a one-line summary', () => {
  const report = buildReport(result([]))
  expect(report.markdown).toContain('No Jobs in scope: nothing to do.')
  expect(report.outputs).toEqual({ pruned: [], kept: [], waited: [], 'ttl-set': [] })
})

test('dry run: banner, and "would be pruned"', () => {
  const report = buildReport(result([outcome({ name: 'a', result: 'would-prune' })], { dryRun: true }))
  expect(report.markdown).toContain('DRY RUN — nothing was changed')
  expect(report.markdown).toContain('**1 would be pruned · 0 waited · 0 kept**')
})

test('names, reasons and log lines from the cluster are escaped', () => {
  const report = buildReport(
    result(
      [
        outcome({
          name: 'evil|<script>alert(1)</script>',
          status: 'failed',
          reason: 'uses `backticks` and | pipes\nand a newline',
          logs: { files: ['x.log'], problems: [], tails: [{ file: 'x.log', lines: ['</pre><script>alert(2)</script>', 'a | b `c`'] }] }
        })
      ],
      { errors: ['Job prod/<b>bad</b> failed'] }
    )
  )
  expect(report.markdown).not.toMatch(/<script>|<\/pre><script>|<b>/)
  expect(report.markdown).toContain('| evil&#124;&lt;script&gt;alert(1)&lt;/script&gt; | prod | failed |')
  expect(report.markdown).toContain('uses &#96;backticks&#96; and &#124; pipes and a newline | — |')
  expect(report.markdown).toContain('<pre>&lt;/pre&gt;&lt;script&gt;alert(2)&lt;/script&gt;\na | b `c`</pre>')
  expect(report.markdown).toContain('- Job prod/&lt;b&gt;bad&lt;/b&gt; failed')
  // The JSON outputs keep the real values: they are data, not markup.
  expect(report.outputs.pruned[0].name).toBe('evil|<script>alert(1)</script>')
})

test('log tails are shown for failed Jobs only', () => {
  const tails = [{ file: 'ok.log', lines: ['all good'] }]
  const report = buildReport(result([outcome({ name: 'ok', status: 'succeeded', logs: { files: ['ok.log'], problems: [], tails } })]))
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
          logs: { files: ['f'], problems: [], tails: [{ file: 'f', lines: ['\u001b[31mred\u001b[0m'] }] }
        })
      ])
    )
  )
  expect(text).toMatch(/^Job {17}Namespace/m)
  expect(text).toMatch(/^short {15}prod /m)
  expect(text).not.toContain('\u001b')
  expect(text).toContain('  | ?[31mred?[0m')
})
