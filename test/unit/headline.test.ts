// The summary at a glance: a headline with the outcome in words, rows that tell what happened
// (not what was planned), when each Job finished and where its logs are.
import type { HarvestedLogs } from '../../src/execute/logs.ts'
import type { JobOutcome, RunResult } from '../../src/execute/outcome.ts'
import { ALL_NAMESPACES } from '../../src/observe/observed.ts'
import { buildReport, summarize } from '../../src/report/summary.ts'
import { renderText } from '../../src/report/text.ts'

const ENDED = '2026-06-01T12:00:00.000Z'

function outcome(o: Partial<JobOutcome> & { name: string }): JobOutcome {
  return { namespace: 'prod', status: 'succeeded', ageSeconds: 90, action: 'delete', result: 'pruned', waited: false, reason: 'r', ...o }
}

function result(outcomes: JobOutcome[], extra: Partial<RunResult> = {}): RunResult {
  return { phase: 'pre', namespace: 'prod', dryRun: false, outcomes, errors: [], warnings: [], endedAt: ENDED, ...extra }
}

const logs = (...files: string[]): HarvestedLogs => ({ files: files.map((file) => ({ file, bytes: 9, truncated: false })), failures: [] })

test.each([
  [
    'all went well → ✅ and the counts',
    result([outcome({ name: 'a' }), outcome({ name: 'b', waited: true }), outcome({ name: 'c', result: 'kept', action: 'keep' })]),
    '✅ 2 pruned (1 after waiting) · 1 kept'
  ],
  ['warnings → ✅, counted', result([outcome({ name: 'a' })], { warnings: ['w1', 'w2'] }), '✅ 1 pruned · 0 kept · ⚠️ 2 warnings'],
  [
    'on-running: fail → ❌ blocked, naming the Job',
    result([outcome({ name: 'app-migrate', status: 'running', action: 'block', result: 'blocked' }), outcome({ name: 'old', result: 'kept' })], {
      errors: ['Job prod/app-migrate is still running (3m) and on-running is fail; nothing was deleted']
    }),
    '❌ blocked: app-migrate still running (on-running: fail); nothing was deleted'
  ],
  [
    'a wait that timed out → ❌ blocked, saying how long it waited',
    result([outcome({ name: 'app-migrate', status: 'running', action: 'wait', result: 'blocked', reason: 'still running after waiting 10m' })], {
      errors: ['Job prod/app-migrate did not finish within wait-timeout 10m']
    }),
    '❌ blocked: app-migrate still running after waiting 10m; nothing was deleted'
  ],
  [
    'errors → ❌ N failed, quoting the first',
    result([outcome({ name: 'seed', status: 'failed', action: 'set-ttl', result: 'ttl-set' })], {
      phase: 'post',
      errors: ['Job prod/seed failed; kept for failure-grace 1d so it can be inspected', 'another']
    }),
    '❌ 2 failed: Job prod/seed failed; kept for failure-grace 1d so it can be inspected (and 1 more below)'
  ],
  [
    'post counts TTLs first',
    result([outcome({ name: 'a', action: 'set-ttl', result: 'ttl-set' }), outcome({ name: 'h', result: 'kept' })], { phase: 'post' }),
    '✅ 1 TTL set · 1 kept'
  ],
  ['sweep never waits: no waited count', result([outcome({ name: 'a' }), outcome({ name: 'b', result: 'kept' })], { phase: 'sweep' }), '✅ 1 pruned · 1 kept']
])('headline: %s', (_, run, headline) => {
  const s = summarize(run)
  expect(s.headline.text).toBe(headline)
  // The CLI's text starts with the same headline, under the title.
  expect(renderText(s).split('\n')[2]).toBe(headline)
})

test('a ❌ headline is followed by the counts', () => {
  const markdown = buildReport(result([outcome({ name: 'a', result: 'error' }), outcome({ name: 'b' })], { errors: ['Job prod/a: 500 boom'] })).markdown
  expect(markdown).toContain('**❌ 1 failed: Job prod/a: 500 boom**\n\n1 pruned · 0 kept · 1 failed\n')
  expect(markdown).toContain('| a | succeeded | ❌ failed to prune |')
})

test('each row tells the outcome: waited then pruned, the real finish time, the logs relative to logs-dir', () => {
  const run = result([
    outcome({
      name: 'migrate',
      uid: 'u-m',
      waited: true,
      action: 'wait',
      finishedAt: '2026-06-01T11:58:30.000Z',
      logs: logs('prod/migrate/u-m/migrate-x1/main.log')
    }),
    outcome({
      name: 'seed',
      uid: 'u-s',
      status: 'failed',
      finishedAt: '2026-05-30T08:00:00.000Z',
      logs: logs('prod/seed/u-s/p/init.log', 'prod/seed/u-s/p/main.log')
    }),
    outcome({ name: 'held', status: 'running', ageSeconds: 330, action: 'block', result: 'blocked' })
  ])
  const s = summarize(run)
  expect(s.columns).toEqual(['Job', 'Status', 'Outcome', 'Finished', 'Logs (in logs-dir)', 'Reason'])
  expect(s.rows).toEqual([
    ['migrate', 'succeeded', 'waited, then pruned', '11:58:30 UTC (1m30s ago)', 'prod/migrate/u-m/migrate-x1/main.log', 'r'],
    ['seed', 'failed', 'pruned', '2026-05-30 08:00 UTC (2d4h ago)', 'prod/seed/u-s/ (2 files)', 'r'],
    ['held', 'running', '❌ blocked', 'still running (5m30s)', '—', 'r']
  ])
  expect(buildReport(run).markdown).toContain('| <code>prod/migrate/u-m/migrate-x1/main.log</code> |')
})

test('the Logs column counts the containers that never ran (they have a note, no log); a folder is the Job’s uid’s', () => {
  const neverRan = (files: string[], containers: string[]): HarvestedLogs => ({ ...logs(...files), neverRan: containers })
  const s = summarize(
    result([
      outcome({ name: 'a', uid: 'u-a', status: 'failed', logs: neverRan(['prod/a/u-a/p/init.log'], ['p/main (waiting: PodInitializing)']) }),
      outcome({ name: 'b', uid: 'u-b', status: 'failed', logs: neverRan(['prod/b/u-b/p/init.log', 'prod/b/u-b/q/init.log'], ['p/main (x)', 'q/main (x)']) }),
      outcome({ name: 'c', uid: 'u-c', status: 'failed', logs: neverRan([], ['p/main (waiting: ImagePullBackOff)']) })
    ])
  )
  expect(s.rows.map((r) => r[4])).toEqual([
    'prod/a/u-a/p/init.log (1 container(s) never ran)',
    'prod/b/u-b/ (2 files; 2 container(s) never ran)',
    'prod/c/u-c/ (1 container(s) never ran)'
  ])
})

test("the title says where: the namespace, a sweep's namespaces, or all of them (a value of its own, not the words)", () => {
  const title = (extra: Partial<RunResult>): string => summarize(result([], extra)).title
  expect(title({})).toBe('job-sweeper: pre phase in namespace prod')
  expect(title({ phase: 'sweep', namespace: 'prod, staging' })).toBe('job-sweeper: sweep phase in namespaces prod, staging')
  expect(title({ phase: 'sweep', namespace: ALL_NAMESPACES })).toBe('job-sweeper: sweep phase in all namespaces')
  // The words alone are no namespace list the sweep was given: they are not taken for every namespace.
  expect(title({ phase: 'sweep', namespace: 'all namespaces' })).toBe('job-sweeper: sweep phase in namespaces all namespaces')
})

test('the Namespace column only with several namespaces; the TTL column only in post and sweep', () => {
  const one = summarize(result([outcome({ name: 'a' })]))
  expect(one.columns).not.toContain('Namespace')
  expect(one.columns.some((c) => c.startsWith('TTL'))).toBe(false)
  const two = summarize(result([outcome({ name: 'a' }), outcome({ name: 'b', namespace: 'staging', retention: '1h (5m left)' })], { phase: 'sweep' }))
  expect(two.columns).toEqual(['Job', 'Namespace', 'Status', 'Outcome', 'Finished', 'TTL / time left', 'Logs (in logs-dir)', 'Reason'])
  expect(two.rows[1]).toEqual(['b', 'staging', 'succeeded', 'pruned', '—', '1h (5m left)', '—', 'r'])
  expect(summarize(result([outcome({ name: 'a' })], { phase: 'post' })).columns).toContain('TTL')
})

test("after the table, each failed Job's log tail in its own collapsed <details> block", () => {
  const tail = (file: string, line: string): HarvestedLogs => ({ ...logs(file), tails: [{ file, lines: [line] }] })
  const markdown = buildReport(
    result([
      outcome({ name: 'one', status: 'failed', logs: tail('prod/one/p/main.log', 'boom 1') }),
      outcome({ name: 'two', status: 'failed', logs: tail('prod/two/p/main.log', 'boom 2') })
    ])
  ).markdown
  const table = markdown.indexOf('| Job |')
  const details = [...markdown.matchAll(/<details><summary>Last lines of failed Job (\w+): [^<]+<\/summary>\n\n<pre>([^<]*)<\/pre>\n\n<\/details>/g)]
  expect(details.map((d) => [d[1], d[2]])).toEqual([
    ['one', 'boom 1'],
    ['two', 'boom 2']
  ])
  expect(details[0].index).toBeGreaterThan(table)
  expect(markdown).not.toMatch(/<details open/)
})

test('the terminal table stays aligned with a ❌ in a cell (drawn two columns wide)', () => {
  const text = renderText(summarize(result([outcome({ name: 'a', result: 'error' }), outcome({ name: 'b' })], { errors: ['x'] })))
  const lines = text.split('\n').filter((l) => /^(Job|a|b) /.test(l))
  const at = (line: string): number => [...line.slice(0, line.indexOf(' r'))].length + (line.includes('❌') ? 1 : 0)
  expect(lines.map((l) => l.slice(0, 3).trim())).toEqual(['Job', 'a', 'b'])
  expect(new Set(lines.slice(1).map(at)).size).toBe(1)
})
