// Settings: every input validated at the edge, with messages that name the input.
import { formatDuration, parseDuration } from '../../src/settings/duration.ts'
import { parseSettings } from '../../src/settings/settings.ts'

const parse = (inputs: Record<string, string>, env: NodeJS.ProcessEnv = {}) => parseSettings((name) => inputs[name] ?? '', env)

test.each([
  ['90s', 90],
  ['15m', 900],
  ['1h30m', 5400],
  ['7d', 604800],
  ['3600', 3600],
  ['1d2h3m4s', 93784],
  [' 10m ', 600]
])('duration %s = %i seconds', (text, seconds) => {
  expect(parseDuration(text)).toBe(seconds)
})

test.each(['', '3 days', '1.5h', 'h', '-5', '10 m', '5x'])('duration %j is rejected', (text) => {
  expect(parseDuration(text)).toBeUndefined()
})

test.each([
  [0, '0s'],
  [59, '59s'],
  [5400, '1h30m'],
  [93784, '1d2h3m4s']
])('formatDuration(%i) = %s', (seconds, text) => {
  expect(formatDuration(seconds)).toBe(text)
})

test('defaults', () => {
  const s = parse({ release: 'app' }, { RUNNER_TEMP: '/runner/tmp' })
  expect(s).toEqual({
    phase: 'pre',
    kubeconfig: undefined,
    context: undefined,
    namespace: undefined,
    namespaces: undefined,
    allNamespaces: false,
    scope: { release: 'app', manifest: undefined, selector: undefined, jobs: undefined },
    includeHooks: false,
    onRunning: 'wait',
    waitTimeoutSeconds: 600,
    harvestLogs: 'failed',
    logsDir: '/runner/tmp/job-sweeper/logs',
    dryRun: false,
    ttlSeconds: 3600,
    failureGraceSeconds: 86400,
    waitForJobsSeconds: 0,
    failOnJobFailure: true,
    onLogFailure: 'keep',
    maxLogBytes: 10 * 1024 * 1024,
    concurrency: 8
  })
})

test.each([
  [{}, 'No scope: set at least one of release, manifest, selector or jobs'],
  [{ release: 'a', 'wait-timeout': '3 days' }, "Invalid wait-timeout '3 days': expected a duration like 90s, 15m, 1h30m, 7d, or seconds"],
  [{ release: 'a', 'on-running': 'kill' }, "Invalid on-running 'kill': expected one of wait, delete, fail"],
  [{ release: 'a', 'harvest-logs': 'some' }, "Invalid harvest-logs 'some': expected one of failed, all, none"],
  [{ release: 'a', 'dry-run': 'yes' }, "Invalid dry-run 'yes': expected true or false"],
  [{ release: 'a', namespace: 'Prod' }, "Invalid namespace 'Prod'"],
  [{ jobs: 'ok, Not_OK' }, "Invalid jobs entry 'Not_OK'"],
  [{ release: 'a', kubeconfig: 'bm90IGEga3ViZWNvbmZpZw==' }, 'Invalid kubeconfig: it looks like base64 but does not decode to a kubeconfig'],
  [{ release: 'a', kubeconfig: 'just: yaml' }, 'Invalid kubeconfig: expected kubeconfig YAML'],
  [{ release: 'a', phase: 'cleanup' }, "Invalid phase 'cleanup': expected one of pre, post, sweep"],
  [{ release: 'a', ttl: '1 hour' }, "Invalid ttl '1 hour': expected never, or a duration like 90s, 15m, 1h30m, 7d, or seconds"],
  [{ release: 'a', 'failure-grace': 'forever' }, "Invalid failure-grace 'forever': expected never, or a duration"],
  [{ release: 'a', 'wait-for-jobs': 'soon' }, "Invalid wait-for-jobs 'soon'"],
  [{ release: 'a', 'fail-on-job-failure': 'no' }, "Invalid fail-on-job-failure 'no': expected true or false"],
  [{ release: 'a', namespace: 'a, b' }, "Invalid namespace 'a, b': the pre phase works in one namespace; lists are for phase: sweep"],
  [{ release: 'a', phase: 'post', 'all-namespaces': 'true' }, "Invalid all-namespaces 'true': only phase: sweep works across namespaces"],
  [{ release: 'a', phase: 'sweep', 'all-namespaces': 'true', namespace: 'x' }, 'Set either namespace or all-namespaces, not both']
] as [Record<string, string>, string][])('%j fails: %s', (inputs, message) => {
  expect(() => parse(inputs)).toThrow(message)
})

test('a base64 kubeconfig is decoded; jobs split on commas and newlines', () => {
  const yaml = 'apiVersion: v1\nclusters: []\n'
  const s = parse({ kubeconfig: Buffer.from(yaml).toString('base64'), jobs: 'a,\n b ,c' })
  expect(s.kubeconfig).toBe(yaml)
  expect(s.scope.jobs).toEqual(['a', 'b', 'c'])
})

test('never keeps Jobs; sweep takes a list of namespaces', () => {
  const s = parse({ phase: 'sweep', selector: 'a=b', ttl: 'never', 'failure-grace': 'NEVER', namespace: 'one,\ntwo' })
  expect([s.ttlSeconds, s.failureGraceSeconds]).toEqual([null, null])
  expect(s.namespaces).toEqual(['one', 'two'])
})
