// Settings: every input validated at the edge, with messages that name the input.
import { formatDuration, parseDuration } from '../../src/text/duration.ts'
import { parseSettings, type SettingsFiles } from '../../src/settings/settings.ts'

/** Files the inputs may name: path → content; a missing path reads as ENOENT. */
function files(contents: Record<string, string> = {}): SettingsFiles {
  return {
    exists: (path) => path in contents,
    readText: (path) => {
      if (path in contents) return contents[path]
      throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' })
    }
  }
}

const parse = (inputs: Record<string, string>, env: NodeJS.ProcessEnv = {}, disk: SettingsFiles = files()) =>
  parseSettings((name) => inputs[name] ?? '', env, disk)

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

test.each(['', '3 days', '1.5h', 'h', '-5', '10 m', '5x', '99999999999999999999', '99999999999999999d'])('duration %j is rejected', (text) => {
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
    manifestJobs: undefined,
    includeHooks: false,
    onRunning: 'wait',
    waitTimeoutSeconds: 600,
    stuckAfterSeconds: 120,
    harvestLogs: 'failed',
    onLogFailure: 'keep',
    maxLogBytes: 10 * 1024 * 1024,
    maskLogTails: true,
    streamLogs: true,
    logsTarget: { kind: 'dir', dir: '/runner/tmp/job-sweeper/logs' },
    logsDir: '/runner/tmp/job-sweeper/logs',
    dryRun: false,
    uploadLogs: false,
    ttlSeconds: 3600,
    failureGraceSeconds: 86400,
    waitForJobsSeconds: 0,
    failOnJobFailure: true,
    concurrency: 8,
    keepLast: 0,
    preflightGate: 'fail',
    recreateStatefulSets: false
  })
})

test.each([
  [{}, 'No scope: set at least one of release, manifest, selector or jobs'],
  [{ release: 'a', 'wait-timeout': '3 days' }, "Invalid wait-timeout '3 days': expected a duration like 90s, 15m, 1h30m, 7d, or seconds"],
  [{ release: 'a', 'on-running': 'kill' }, "Invalid on-running 'kill': expected one of wait, delete, fail"],
  [{ release: 'a', 'harvest-logs': 'some' }, "Invalid harvest-logs 'some': expected one of failed, all, none"],
  [{ release: 'a', 'dry-run': 'yes' }, "Invalid dry-run 'yes': expected true or false"],
  [{ release: 'a', namespace: 'Prod' }, "Invalid namespace 'Prod'"],
  [{ jobs: 'ok, Not_OK' }, "Invalid jobs 'Not_OK': expected a Job name"],
  [
    { release: 'a', kubeconfig: 'bm90IGEga3ViZWNvbmZpZw==' },
    'Invalid kubeconfig: expected a kubeconfig file, kubeconfig YAML, or the same base64-encoded; it is no file'
  ],
  [
    { release: 'a', kubeconfig: 'just: yaml' },
    'Invalid kubeconfig: expected kubeconfig YAML (with clusters:) or the same base64-encoded; its content is not shown'
  ],
  [{ release: 'a', phase: 'cleanup' }, "Invalid phase 'cleanup': expected one of pre, post, sweep"],
  [{ release: 'a', ttl: '1 hour' }, "Invalid ttl '1 hour': expected never, or a duration like 90s, 15m, 1h30m, 7d, or seconds"],
  [{ release: 'a', 'failure-grace': 'forever' }, "Invalid failure-grace 'forever': expected never, or a duration"],
  [{ release: 'a', 'wait-for-jobs': 'soon' }, "Invalid wait-for-jobs 'soon'"],
  [{ release: 'a', 'fail-on-job-failure': 'no' }, "Invalid fail-on-job-failure 'no': expected true or false"],
  [{ release: 'a', namespace: 'a, b' }, "Invalid namespace 'a, b': the pre phase works in one namespace; lists are for phase: sweep"],
  [{ release: 'a', phase: 'post', 'all-namespaces': 'true' }, "Invalid all-namespaces 'true': only phase: sweep works across namespaces"],
  [
    { release: 'a', phase: 'sweep', 'all-namespaces': 'true', namespace: 'x' },
    "Invalid all-namespaces 'true' with namespace 'x': expected one of them, not both"
  ],
  // Found by trying it as a user would: each used to pass, or to fail only once the cluster was read.
  [{ release: 'a', 'wait-timeout': '0' }, "Invalid wait-timeout '0': expected a duration from 1s to 24d"],
  [{ release: 'a', 'wait-timeout': '25d' }, "Invalid wait-timeout '25d': expected a duration from 1s to 24d"],
  [{ release: 'a', 'stuck-after': '0' }, "Invalid stuck-after '0': expected a duration from 1s to 24d (a pod needs some time to be scheduled"],
  [{ release: 'a', 'stuck-after': 'a while' }, "Invalid stuck-after 'a while': expected a duration like 90s"],
  [{ release: 'a', 'wait-timeout': '99999999999999999999' }, "Invalid wait-timeout '99999999999999999999': expected a duration like"],
  [{ release: 'a', phase: 'post', 'wait-for-jobs': '25d' }, "Invalid wait-for-jobs '25d': expected a duration from 0s to 24d (0 does not wait"],
  [{ release: 'a', ttl: '9999999999' }, "Invalid ttl '9999999999': expected never, or a duration of at most 2147483647 seconds"],
  [{ release: 'a', 'failure-grace': '24856d' }, "Invalid failure-grace '24856d': expected never, or a duration of at most 2147483647 seconds"],
  [{ release: 'a', namespace: 'n'.repeat(64) }, `Invalid namespace '${'n'.repeat(64)}': expected a namespace name (at most 63`],
  [{ release: 'a', namespace: ',' }, "Invalid namespace ',': expected namespace names, separated by commas or newlines"],
  [{ release: 'a', jobs: ' , ' }, "Invalid jobs ',': expected Job names"],
  [{ selector: 'a=b', phase: 'sweep', namespace: 'one, two,\none' }, "Invalid namespace 'one, two, one': expected each namespace once; one is listed twice"],
  [{ release: 'My_App' }, "Invalid release 'My_App': expected a Helm release name"],
  [
    { selector: 'app in (a,b' },
    "Invalid selector 'app in (a,b': expected a label selector like app=web,tier in (a,b),!canary; found the end where ',' or ')' belongs"
  ],
  [{ release: 'a', manifest: '/no/such.yaml' }, "Invalid manifest '/no/such.yaml': expected a readable file of rendered manifests; cannot read it (ENOENT)"],
  [{ manifest: '/m.yaml', phase: 'sweep', 'all-namespaces': 'true' }, "Invalid all-namespaces 'true' with manifest: expected the namespaces to sweep"],
  [{ release: 'a', 'on-log-failure': 'ignore' }, "Invalid on-log-failure 'ignore': expected one of keep, delete"],
  [{ release: 'a', 'max-log-bytes': '0' }, "Invalid max-log-bytes '0': expected a size above 0 like 10Mi, 10MiB, 512Ki, or bytes"],
  [{ release: 'a', 'max-log-bytes': '10MB' }, "Invalid max-log-bytes '10MB'"],
  [{ release: 'a', 'mask-log-tails': 'sometimes' }, "Invalid mask-log-tails 'sometimes': expected true or false"],
  [{ release: 'a', concurrency: '0' }, "Invalid concurrency '0': expected a whole number from 1 to 64"],
  [{ release: 'a', concurrency: '65' }, "Invalid concurrency '65': expected a whole number from 1 to 64"],
  [{ release: 'a', 'keep-last': 'x' }, "Invalid keep-last 'x': expected a whole number from 0 (off) to 1000, the newest Jobs kept per group"],
  [{ release: 'a', 'keep-last': '-1' }, "Invalid keep-last '-1': expected a whole number from 0 (off) to 1000"],
  [{ release: 'a', 'keep-last': '1001' }, "Invalid keep-last '1001': expected a whole number from 0 (off) to 1000"],
  [{ release: 'a', 'keep-last': '2.5' }, "Invalid keep-last '2.5': expected a whole number"],
  [{ release: 'a', 'keep-last': '3', 'group-by': 'team name' }, "Invalid group-by 'team name': expected a label key like app.kubernetes.io/name or team"],
  [{ release: 'a', 'keep-last': '3', 'group-by': 'Example.com/team' }, "Invalid group-by 'Example.com/team': expected a label key"],
  [{ release: 'a', 'keep-last': '3', 'group-by': `${'t'.repeat(64)}` }, "Invalid group-by 'tttt"],
  [{ release: 'a', 'group-by': 'team' }, "Invalid group-by 'team' without keep-last: expected keep-last too, whose groups it chooses"],
  [
    { release: 'a', 'lease-name': 'My_Lease' },
    "Invalid lease-name 'My_Lease': expected a Lease name (at most 253 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit), like my-app-job-sweeper"
  ],
  [{ release: 'a', 'lease-name': 'app-' }, "Invalid lease-name 'app-': expected a Lease name"],
  [{ release: 'a', 'lease-name': 'app..lease' }, "Invalid lease-name 'app..lease': expected a Lease name"],
  [{ release: 'a', 'lease-name': 'l'.repeat(254) }, `Invalid lease-name '${'l'.repeat(254)}': expected a Lease name (at most 253`],
  [
    { release: 'a', kubeconfig: '~/no/kubeconfig' },
    "Invalid kubeconfig '~/no/kubeconfig': expected a readable kubeconfig file, kubeconfig YAML or base64; cannot read /home/u/no/kubeconfig (ENOENT)"
  ]
] as [Record<string, string>, string][])('%j fails: %s', (inputs, message) => {
  expect(() => parse(inputs, { HOME: '/home/u' }, files({ '/m.yaml': '' }))).toThrow(message)
})

test('a base64 kubeconfig is decoded; jobs split on commas and newlines', () => {
  const yaml = 'apiVersion: v1\nclusters: []\n'
  const s = parse({ kubeconfig: Buffer.from(yaml).toString('base64'), jobs: 'a,\n b ,c' })
  expect(s.kubeconfig).toEqual({ content: yaml })
  expect(s.scope.jobs).toEqual(['a', 'b', 'c'])
})

test.each([
  ['~/.kube/config', '/home/u/.kube/config'],
  ['/etc/kube/admin.conf', '/etc/kube/admin.conf'],
  ['./ci/kubeconfig', `${process.cwd()}/ci/kubeconfig`],
  ['kube/config.yaml', `${process.cwd()}/kube/config.yaml`],
  ['kubeconfig', `${process.cwd()}/kubeconfig`] // no extension, base64-like: a path because the file exists
])('kubeconfig %s is a path, read as kubectl reads --kubeconfig', (given, path) => {
  const yaml = 'apiVersion: v1\nclusters: []\n'
  const s = parse({ release: 'a', kubeconfig: given }, { HOME: '/home/u' }, files({ [path]: yaml, kubeconfig: yaml }))
  expect(s.kubeconfig).toEqual({ content: yaml, path })
})

test('a kubeconfig file that is not one is refused without quoting it', () => {
  expect(() => parse({ release: 'a', kubeconfig: '/x/notes.txt' }, {}, files({ '/x/notes.txt': 'token: SECRET' }))).toThrow(
    "Invalid kubeconfig '/x/notes.txt': expected a kubeconfig file (with clusters:); /x/notes.txt is not one (its content is not shown)"
  )
})

test('the manifest is read and parsed with the settings: its batch/v1 Jobs are kept', () => {
  const manifest = [
    'apiVersion: batch/v1\nkind: Job\nmetadata: {name: app-migrate}',
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app-config}',
    'apiVersion: batch/v1\nkind: Job\nmetadata: {name: app-seed}'
  ].join('\n---\n')
  const s = parse({ manifest: '~/rendered.yaml' }, { HOME: '/home/u' }, files({ '/home/u/rendered.yaml': manifest }))
  expect(s.manifestJobs?.map((j) => j.metadata?.name)).toEqual(['app-migrate', 'app-seed'])
  expect(() => parse({ manifest: '/bad.yaml' }, {}, files({ '/bad.yaml': 'kind: Job\n  name: [unclosed' }))).toThrow(
    "Invalid manifest '/bad.yaml': expected YAML (helm template, or helm upgrade --dry-run=server output); "
  )
})

test('keywords ignore case, as in the CLI: true, never, and each choice', () => {
  const s = parse({ release: 'a', 'dry-run': 'TRUE', 'include-hooks': 'False', 'on-running': 'Delete', 'harvest-logs': 'ALL', ttl: 'Never', phase: 'Post' })
  expect([s.dryRun, s.includeHooks, s.onRunning, s.harvestLogs, s.ttlSeconds, s.phase]).toEqual([true, false, 'delete', 'all', null, 'post'])
})

test.each([
  ['1', 1],
  ['2048', 2048],
  ['512Ki', 524288],
  ['10Mi', 10485760],
  ['10MiB', 10485760],
  ['1Gi', 1073741824]
])('max-log-bytes %s = %i bytes', (text, bytes) => {
  expect(parse({ release: 'a', 'max-log-bytes': text }).maxLogBytes).toBe(bytes)
})

test('the limits that still fit: 24d timers, int32 TTLs, 64 at once', () => {
  const s = parse({ release: 'a', 'wait-timeout': '24d', 'wait-for-jobs': '24d', ttl: '2147483647', 'failure-grace': '0', concurrency: '64' })
  expect([s.waitTimeoutSeconds, s.waitForJobsSeconds, s.ttlSeconds, s.failureGraceSeconds, s.concurrency]).toEqual([2073600, 2073600, 2147483647, 0, 64])
})

test('keep-last takes a count and group-by a label key', () => {
  const s = parse({ phase: 'sweep', selector: 'a=b', 'keep-last': '3', 'group-by': 'app.kubernetes.io/name' })
  expect([s.keepLast, s.groupBy]).toEqual([3, 'app.kubernetes.io/name'])
  expect(parse({ release: 'a', 'keep-last': '0' }).keepLast).toBe(0)
})

test('lease-name takes an object name, as the API server takes a Lease’s; none given, none set', () => {
  expect(parse({ release: 'a', 'lease-name': ' app-job-sweeper ' }).leaseName).toBe('app-job-sweeper')
  expect(parse({ release: 'a', phase: 'post', 'lease-name': 'app.migrations.v2' }).leaseName).toBe('app.migrations.v2')
  expect(parse({ release: 'a', phase: 'sweep', 'lease-name': 'l'.repeat(253) }).leaseName).toBe('l'.repeat(253))
  expect(parse({ release: 'a' }).leaseName).toBeUndefined()
})

test('never keeps Jobs; sweep takes a list of namespaces', () => {
  const s = parse({ phase: 'sweep', selector: 'a=b', ttl: 'never', 'failure-grace': 'NEVER', namespace: 'one,\ntwo' })
  expect([s.ttlSeconds, s.failureGraceSeconds]).toEqual([null, null])
  expect(s.namespaces).toEqual(['one', 'two'])
})

test('every bad input in one error, not only the first', () => {
  expect(() => parse({ release: 'app', 'wait-timeout': '3 days', 'on-running': 'maybe', ttl: 'soon' })).toThrow(
    [
      '3 invalid inputs:',
      "- Invalid on-running 'maybe': expected one of wait, delete, fail",
      "- Invalid wait-timeout '3 days': expected a duration like 90s, 15m, 1h30m, 7d, or seconds",
      "- Invalid ttl 'soon': expected never, or a duration like 90s, 15m, 1h30m, 7d, or seconds"
    ].join('\n')
  )
  // One bad input: its message alone, as before.
  expect(() => parse({ release: 'app', 'wait-timeout': '3 days' })).toThrow(/^Invalid wait-timeout '3 days': expected a duration/)
  // A missing scope is found beside a bad value.
  expect(() => parse({ 'on-running': 'maybe' })).toThrow(/^2 invalid inputs:\n- No scope: .*\n- Invalid on-running 'maybe'/)
})
