// What the summary tells its reader (#35 item 11): counts that add up to the Jobs, a title with
// the scope and the cluster's context, how long the run and its waits took, and a Logs column
// that names what outlasts the runner (the artifact, with its link; the bucket's keys).
import type { JobOutcome, OutcomeKind, RunResult } from '../../src/execute/outcome.ts'
import { countsOf } from '../../src/report/headline.ts'
import { buildReport, summarize } from '../../src/report/summary.ts'
import { renderText } from '../../src/report/text.ts'

function outcome(o: Partial<JobOutcome> & { name: string }): JobOutcome {
  return { namespace: 'prod', status: 'succeeded', ageSeconds: 90, action: 'delete', result: 'pruned', waited: false, reason: 'r', ...o }
}

function result(outcomes: JobOutcome[], extra: Partial<RunResult> = {}): RunResult {
  return { phase: 'pre', namespace: 'prod', dryRun: false, outcomes, errors: [], warnings: [], ...extra }
}

const sum = (counts: string): number => [...counts.matchAll(/(?:^|· )(\d+) /g)].reduce((n, m) => n + Number(m[1]), 0)

test.each<[string, RunResult['phase'], [OutcomeKind, boolean][]]>([
  [
    'pre: 3 pruned (one waited for), 1 kept, 1 failed to prune',
    'pre',
    [
      ['pruned', false],
      ['pruned', true],
      ['pruned', false],
      ['kept', false],
      ['error', false]
    ]
  ],
  [
    'post: TTL set after waiting, one gone while waited for, one blocked',
    'post',
    [
      ['ttl-set', true],
      ['gone', true],
      ['kept', false],
      ['error', true]
    ]
  ],
  [
    'sweep: pruned, kept, gone, blocked',
    'sweep',
    [
      ['pruned', false],
      ['kept', false],
      ['gone', false],
      ['blocked', false]
    ]
  ]
])('each Job is counted once, in one outcome: %s', (_, phase, kinds) => {
  const run = result(
    kinds.map(([kind, waited], i) => outcome({ name: `j${i}`, result: kind, waited })),
    { phase }
  )
  expect(sum(countsOf(run))).toBe(kinds.length)
})

test('a wait is said within the outcome it led to, not counted beside it', () => {
  const run = result([outcome({ name: 'a' }), outcome({ name: 'b', waited: true }), outcome({ name: 'c', waited: true, result: 'kept' })])
  expect(countsOf(run)).toBe('2 pruned (1 after waiting) · 1 kept (1 after waiting)')
})

test('the title names the release (or scope) and the cluster context; both escaped', () => {
  const run = result([outcome({ name: 'a' })], { scope: 'release shop', context: 'prod-eks' })
  expect(summarize(run).title).toBe('job-sweeper: pre phase in namespace prod — release shop, context prod-eks')
  const odd = buildReport(result([], { scope: 'selector app=<b>x</b>', context: 'ctx|*1*' })).markdown
  expect(odd).toContain('## job-sweeper: pre phase in namespace prod — selector app=&lt;b&gt;x&lt;/b&gt;, context ctx&#124;&#42;1&#42;')
  // Without them (a result from before), the title is as it was.
  expect(summarize(result([])).title).toBe('job-sweeper: pre phase in namespace prod')
})

test('durations: how long the run took and each wait, in the row and under the headline', () => {
  const run = result(
    [
      outcome({ name: 'a', waited: true, waitedSeconds: 125.4 }),
      outcome({ name: 'b', waited: true, waitedSeconds: 0.2, result: 'kept' }),
      outcome({ name: 'c' })
    ],
    { startedAt: '2026-12-07T00:00:00.000Z', endedAt: '2026-12-07T00:02:10.000Z' }
  )
  const s = summarize(run)
  expect(s.rows.map((r) => r[2])).toEqual(['waited 2m5s, then pruned', 'waited under 1s, then kept', 'pruned'])
  expect(s.took).toBe('Took 2m10s, the longest wait on a Job 2m5s.')
  expect(buildReport(run).markdown).toContain('\n\nTook 2m10s, the longest wait on a Job 2m5s.\n')
  expect(renderText(s)).toContain('\nTook 2m10s, the longest wait on a Job 2m5s.\n')
  // A wait that ended the run (blocked) says how long it lasted too.
  const blocked = summarize(result([outcome({ name: 'a', waited: true, waitedSeconds: 600, result: 'blocked', action: 'wait' })]))
  expect(blocked.rows[0][2]).toBe('❌ blocked (waited 10m)')
})

const withLogs = outcome({
  name: 'migrate',
  status: 'failed',
  logs: { files: [{ file: 'prod/migrate/migrate-x1/main.log', bytes: 10, truncated: false }], failures: [] } as unknown as JobOutcome['logs']
})

test('Logs: the artifact upload-logs made, linked from the column header; the paths are inside it', () => {
  const markdown = buildReport(result([withLogs]), {
    kind: 'artifact',
    name: 'job-sweeper-logs-deploy-pre',
    url: 'https://github.com/o/r/actions/runs/42/artifacts/7'
  }).markdown
  expect(markdown).toContain('| [Logs (in artifact job-sweeper-logs-deploy-pre)](https://github.com/o/r/actions/runs/42/artifacts/7) |')
  expect(markdown).toContain('| <code>prod/migrate/migrate-x1/main.log</code> |')
})

test('Logs: in a bucket, each row has its whole key', () => {
  const s = summarize(result([withLogs]), { kind: 'bucket', url: 's3://logs/ci' })
  expect(s.columns).toContain('Logs (in the bucket)')
  expect(s.rows[0]).toContain('s3://logs/ci/prod/migrate/migrate-x1/main.log')
})

test('Logs: a runner’s directory, without upload-logs, is said to last only as long as the job', () => {
  expect(summarize(result([withLogs]), { kind: 'dir', runner: true }).columns).toContain('Logs (in logs-dir, on the runner until the job ends)')
  // The CLI's directory stays: named as logs-dir.
  expect(summarize(result([withLogs])).columns).toContain('Logs (in logs-dir)')
})
