// Bad input is refused before the cluster is read. Each case goes through the action (node
// dist/index.js, run as the runner runs it) and the CLI (its bin): the step fails and the CLI
// exits 2, with the `Invalid …` message, no Observe phase is started, and the Jobs — names, UIDs
// and resourceVersions — are exactly as before. Every case would change the cluster were it
// accepted (a sweep or pre of the release with a TTL of 0), and the last test runs the valid
// invocation to prove that the comparison can fail.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { load } from 'js-yaml'
import { outputNames, runAction } from './action.ts'
import { runCli } from './bin.ts'
import { batchApi, createNamespace, deleteNamespace, eventually, waitForJobCondition } from './cluster/testenv.ts'
import { createDecoys, missingDecoys, type Decoy } from './decoys.ts'
import { finishedReleaseJob, release } from './scenario.ts'

let ns: string
let otherNs: string
let dir: string
let decoys: Decoy[]
let before: string[]

/** Every Job of the test's namespaces, as `namespace/name uid resourceVersion`. */
async function jobList(): Promise<string[]> {
  const lists = await Promise.all([ns, otherNs].map((namespace) => batchApi().listNamespacedJob({ namespace })))
  return lists
    .flatMap((l) => l.items)
    .map((j) => `${j.metadata?.namespace}/${j.metadata?.name} ${j.metadata?.uid} ${j.metadata?.resourceVersion}`)
    .sort()
}

beforeAll(async () => {
  ns = await createNamespace('bad-input')
  otherNs = await createNamespace('bad-input-other')
  decoys = await createDecoys(ns, otherNs, release)
  // What a sweep or pre of the release would delete, were a bad invocation let through.
  await finishedReleaseJob(ns, `${release}-migrate`)
  await finishedReleaseJob(ns, `${release}-seed`)
  await waitForJobCondition(ns, 'other-release-migrate', 'Failed')
  await waitForJobCondition(otherNs, `${release}-migrate`, 'Complete')
  await waitForJobCondition(ns, `${release}-pre-upgrade-hook`, 'Complete')
  // Settled: the same list twice, two seconds apart (the held decoy's status stops changing).
  let last: string[] = []
  before = await eventually(
    'the Jobs to settle',
    async () => {
      const previous = last
      await new Promise((r) => setTimeout(r, 2000))
      last = await jobList()
      return { previous, now: last }
    },
    ({ previous, now }) => previous.join() === now.join()
  ).then(({ now }) => now)
  expect(before).toHaveLength(6)

  dir = mkdtempSync(join(tmpdir(), 'bad-input-'))
  writeFileSync(join(dir, 'rendered.yaml'), `apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: ${release}-migrate\n`)
  writeFileSync(join(dir, 'broken.yaml'), 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: [unclosed\n')
  mkdirSync(join(dir, 'a-directory'))
})

afterAll(async () => {
  expect(await missingDecoys(decoys)).toEqual([])
  await Promise.all([deleteNamespace(ns), deleteNamespace(otherNs)])
})

interface BadInput {
  name: string
  /** The action's inputs; `{ns}` and `{dir}` are replaced by the test namespace and a folder of files. */
  inputs: Record<string, string>
  /** What both say: `::error::<message>` (action), `job-sweeper: <message>` (CLI). */
  message: string
  /** A case for one of them only: the CLI's own flags, or an input the CLI takes as a command. */
  only?: 'action' | 'cli'
  /** The CLI's arguments, when they are not the inputs as `--name=value` flags. */
  args?: string[]
  /** The CLI's environment, added to the test cluster's. */
  env?: Record<string, string>
}

/** A sweep that, with a TTL of 0, would delete the release's finished Jobs in the namespace. */
const sweep = (inputs: Record<string, string>): Record<string, string> => ({
  phase: 'sweep',
  namespace: '{ns}',
  release,
  ttl: '0',
  'failure-grace': '0',
  ...inputs
})
/** A pre phase of the release, which would delete its finished Jobs. */
const pre = (inputs: Record<string, string>): Record<string, string> => ({ phase: 'pre', namespace: '{ns}', release, ...inputs })
const long = 'x'.repeat(64)
const badSelector = (selector: string): string => `Invalid selector '${selector}': expected a label selector like app=web,tier in (a,b),!canary; `

const cases: BadInput[] = [
  // Timers: setTimeout fires at once past 2^31-1 ms; a wait of 0 cannot let anything finish.
  {
    name: 'wait-timeout 0 with on-running: wait',
    inputs: pre({ 'on-running': 'wait', 'wait-timeout': '0' }),
    message: "Invalid wait-timeout '0': expected a duration from 1s to 24d"
  },
  { name: 'wait-timeout 25d', inputs: sweep({ 'wait-timeout': '25d' }), message: "Invalid wait-timeout '25d': expected a duration from 1s to 24d" },
  {
    name: 'wait-timeout 99999999999999999999',
    inputs: pre({ 'wait-timeout': '99999999999999999999' }),
    message: "Invalid wait-timeout '99999999999999999999': expected a duration like 90s"
  },
  {
    name: 'wait-for-jobs 25d',
    inputs: { ...sweep({}), phase: 'post', 'wait-for-jobs': '25d' },
    message: "Invalid wait-for-jobs '25d': expected a duration from 0s to 24d"
  },
  // Every bad input in one error (the list is in the unit tier: test/unit/settings.test.ts).
  { name: 'two bad inputs at once', inputs: sweep({ 'wait-timeout': '25d', 'keep-last': 'three' }), message: '2 invalid inputs:' },
  {
    name: 'wait-timeout 1.5h',
    inputs: pre({ 'wait-timeout': '1.5h' }),
    message: "Invalid wait-timeout '1.5h': expected a duration like 90s, 15m, 1h30m, 7d, or seconds"
  },
  // ttlSecondsAfterFinished is an int32.
  {
    name: 'ttl beyond int32',
    inputs: sweep({ ttl: '9999999999' }),
    message: "Invalid ttl '9999999999': expected never, or a duration of at most 2147483647 seconds"
  },
  {
    name: 'failure-grace 99999999999999999999',
    inputs: sweep({ 'failure-grace': '99999999999999999999' }),
    message: "Invalid failure-grace '99999999999999999999': expected never, or a duration like"
  },
  {
    name: 'post ttl beyond int32',
    inputs: { ...sweep({}), phase: 'post', ttl: '25000d' },
    message: "Invalid ttl '25000d': expected never, or a duration of at most"
  },
  { name: 'ttl -1', inputs: sweep({ ttl: '-1' }), message: "Invalid ttl '-1': expected never, or a duration like" },
  {
    name: 'keep-last not a number',
    inputs: sweep({ 'keep-last': 'three' }),
    message: "Invalid keep-last 'three': expected a whole number from 0 (off) to 1000"
  },
  {
    name: 'group-by not a label key',
    inputs: sweep({ 'keep-last': '2', 'group-by': 'team name' }),
    message: "Invalid group-by 'team name': expected a label key like app.kubernetes.io/name or team"
  },
  // Label selectors, as the API server parses them (it used to answer 400, exit 1).
  {
    name: 'selector with an unclosed set',
    inputs: sweep({ selector: 'tier in (db,cache' }),
    message: `${badSelector('tier in (db,cache')}found the end where ',' or ')' belongs`
  },
  { name: 'selector !key=value', inputs: sweep({ selector: '!canary=true' }), message: `${badSelector('!canary=true')}found '=' where ',' or the end belongs` },
  {
    name: 'selector with a trailing comma',
    inputs: sweep({ selector: 'app=web,' }),
    message: `${badSelector('app=web,')}found the end where a label key belongs`
  },
  {
    name: 'selector with a bad key',
    inputs: sweep({ selector: '-app=web' }),
    message: `${badSelector('-app=web')}label key '-app' must be at most 63 letters`
  },
  {
    name: 'selector with a 64-character value',
    inputs: sweep({ selector: `app=${long}` }),
    message: `${badSelector(`app=${long}`)}label value '${long}' must be at most 63`
  },
  { name: 'selector notin ()', inputs: sweep({ selector: 'tier notin ()' }), message: `${badSelector('tier notin ()')}the list of 'tier notin' is empty` },
  // Namespaces.
  { name: 'a 64-character namespace', inputs: sweep({ namespace: long }), message: `Invalid namespace '${long}': expected a namespace name (at most 63` },
  { name: 'namespace: ,', inputs: sweep({ namespace: ',' }), message: "Invalid namespace ',': expected namespace names" },
  {
    name: 'the same namespace twice',
    inputs: sweep({ namespace: '{ns}, {ns}' }),
    message: "Invalid namespace '{ns}, {ns}': expected each namespace once; {ns} is listed twice"
  },
  { name: 'an upper-case namespace', inputs: sweep({ namespace: 'Production' }), message: "Invalid namespace 'Production': expected a namespace name" },
  {
    name: 'all-namespaces with namespace',
    inputs: sweep({ 'all-namespaces': 'true' }),
    message: "Invalid all-namespaces 'true' with namespace '{ns}': expected one of them"
  },
  // The manifest is read and parsed with the settings (it used to be read after the cluster was listed).
  {
    name: 'a manifest that does not exist',
    inputs: pre({ manifest: '{dir}/missing.yaml' }),
    message: "Invalid manifest '{dir}/missing.yaml': expected a readable file"
  },
  {
    name: 'a manifest that is a directory',
    inputs: pre({ manifest: '{dir}/a-directory' }),
    message: "Invalid manifest '{dir}/a-directory': expected a readable file"
  },
  { name: 'a manifest that is not YAML', inputs: pre({ manifest: '{dir}/broken.yaml' }), message: "Invalid manifest '{dir}/broken.yaml': expected YAML" },
  {
    name: 'sweep by manifest across all namespaces',
    inputs: { ...sweep({ manifest: '{dir}/rendered.yaml', 'all-namespaces': 'true' }), namespace: '' },
    message: "Invalid all-namespaces 'true' with manifest: expected the namespaces to sweep"
  },
  // The kubeconfig and its context.
  {
    name: 'a kubeconfig path that does not exist',
    inputs: sweep({ kubeconfig: '~/no-such/kubeconfig' }),
    message: "Invalid kubeconfig '~/no-such/kubeconfig': expected a readable"
  },
  {
    name: 'an unknown context',
    inputs: sweep({ context: 'prod' }),
    message: "Invalid context 'prod': expected a context of the kubeconfig (job-sweeper-local)"
  },
  // Choices, new inputs and names.
  { name: 'on-running kill', inputs: pre({ 'on-running': 'kill' }), message: "Invalid on-running 'kill': expected one of wait, delete, fail" },
  { name: 'on-log-failure ignore', inputs: pre({ 'on-log-failure': 'ignore' }), message: "Invalid on-log-failure 'ignore': expected one of keep, delete" },
  { name: 'max-log-bytes 0', inputs: pre({ 'max-log-bytes': '0' }), message: "Invalid max-log-bytes '0': expected a size above 0" },
  {
    name: 'max-log-bytes 10 megabytes',
    inputs: pre({ 'max-log-bytes': '10 megabytes' }),
    message: "Invalid max-log-bytes '10 megabytes': expected a size above 0"
  },
  // logs-dir is checked before the cluster is read: a run that cannot save logs must not start.
  {
    name: 'a logs-dir that cannot be created',
    inputs: pre({ 'logs-dir': '{dir}/broken.yaml/logs' }),
    message: "Invalid logs-dir '{dir}/broken.yaml/logs': cannot create or write files in it (ENOTDIR)"
  },
  // logs-dir takes a directory or s3://bucket/prefix, and nothing else: another scheme, or an s3:// without a bucket.
  {
    name: 'a logs-dir in another scheme',
    inputs: pre({ 'logs-dir': 'gs://x' }),
    message: "Invalid logs-dir 'gs://x': expected a directory or s3://bucket/prefix"
  },
  {
    name: 'a logs-dir in s3:// without a bucket',
    inputs: pre({ 'logs-dir': 's3:///logs' }),
    message: "Invalid logs-dir 's3:///logs': expected a directory or s3://bucket/prefix; it names no bucket"
  },
  { name: 'concurrency 0', inputs: sweep({ concurrency: '0' }), message: "Invalid concurrency '0': expected a whole number from 1 to 64" },
  { name: 'concurrency 65', inputs: sweep({ concurrency: '65' }), message: "Invalid concurrency '65': expected a whole number from 1 to 64" },
  { name: 'mask-log-tails maybe', inputs: pre({ 'mask-log-tails': 'maybe' }), message: "Invalid mask-log-tails 'maybe': expected true or false" },
  { name: 'dry-run yes', inputs: sweep({ 'dry-run': 'yes' }), message: "Invalid dry-run 'yes': expected true or false" },
  { name: 'a release name with capitals', inputs: sweep({ release: 'My_App' }), message: "Invalid release 'My_App': expected a Helm release name" },
  { name: 'jobs: , beside a release', inputs: sweep({ jobs: ',' }), message: "Invalid jobs ',': expected Job names" },
  {
    name: 'all-namespaces for pre',
    inputs: { ...pre({ 'all-namespaces': 'true' }), namespace: '' },
    message: "Invalid all-namespaces 'true': only phase: sweep"
  },
  // One side only.
  { name: 'phase cleanup', only: 'action', inputs: { ...sweep({}), phase: 'cleanup' }, message: "Invalid phase 'cleanup': expected one of pre, post, sweep" },
  {
    name: 'kubeconfig content that is not a kubeconfig',
    only: 'action',
    inputs: sweep({ kubeconfig: 'server: https://127.0.0.1\nuser: x' }),
    message: 'Invalid kubeconfig: expected kubeconfig YAML (with clusters:)'
  },
  {
    name: 'kubeconfig content on the command line',
    only: 'cli',
    inputs: {},
    args: ['sweep', '--namespace={ns}', `--release=${release}`, '--ttl=0', '--kubeconfig', 'apiVersion: v1\nclusters: []\n'],
    message: 'Invalid --kubeconfig: expected a file path (its content is not shown)'
  },
  {
    name: '--kubeconfig-env naming an unset variable',
    only: 'cli',
    inputs: {},
    args: ['sweep', '--namespace={ns}', `--release=${release}`, '--ttl=0', '--kubeconfig-env', 'NO_SUCH_KUBECONFIG'],
    message: "Invalid --kubeconfig-env 'NO_SUCH_KUBECONFIG': expected the name of an environment variable"
  },
  {
    name: '--namespace twice',
    only: 'cli',
    inputs: {},
    args: ['sweep', '--namespace={ns}', '--namespace', '{ns}', `--release=${release}`, '--ttl=0'],
    message: 'Invalid --namespace: expected it once; it was given 2 times'
  }
]

const fill = (text: string): string => text.replaceAll('{ns}', ns).replaceAll('{dir}', dir)

/** The inputs action.yml declares: the CLI's flags. */
const declared = Object.keys((load(readFileSync(join(import.meta.dirname, '..', 'action.yml'), 'utf8')) as { inputs: Record<string, unknown> }).inputs)

/** The action's message in the CLI's words: each input named as the flag the user typed (`Invalid --ttl '…'`), the command for the phase. */
const cliWords = (message: string): string =>
  declared
    .reduce((m, name) => m.replace(new RegExp(`(^|[ (])(Invalid|set|Set|with) ${name}\\b`, 'g'), `$1$2 --${name}`), message)
    .replace(/\bphase: (\w+)/g, 'the $1 command')

/** The inputs as the CLI's flags: the phase is the command, each input `--name=value`. */
function cliArgs(inputs: Record<string, string>): string[] {
  const { phase, ...flags } = inputs
  return [phase, ...Object.entries(flags).map(([name, value]) => `--${name}=${value}`)]
}

describe('bad input', () => {
  test.each(cases)('$name: refused, the cluster unchanged', async (c) => {
    const inputs = Object.fromEntries(Object.entries(c.inputs).map(([k, v]) => [k, fill(v)]))
    const message = fill(c.message)
    if (c.only !== 'cli') {
      const action = await runAction(inputs)
      expect({ code: action.code, error: action.stdout.match(/^::error::.*$/m)?.[0] }).toEqual({ code: 1, error: expect.stringContaining(message) })
      expect(action.stdout).not.toContain('::group::Observe')
    }
    if (c.only !== 'action') {
      const cli = await runCli((c.args ?? cliArgs(c.inputs)).map(fill), c.env)
      expect({ code: cli.code, stdout: cli.stdout, stderr: cli.stderr }).toEqual({
        code: 2,
        stdout: '',
        stderr: expect.stringContaining(`job-sweeper: ${cliWords(message)}`)
      })
      expect(cli.stderr).not.toContain('--- Observe')
    }
    expect(await jobList()).toEqual(before)
  })

  test(`at least 25 cases go through both the action and the CLI (${cases.filter((c) => !c.only).length})`, () => {
    expect(cases.filter((c) => !c.only).length).toBeGreaterThanOrEqual(25)
  })
})

describe('the same invocations, valid', () => {
  test('keywords ignore case alike in the action and the CLI: a dry run with TRUE, Never and NONE changes nothing', async () => {
    const inputs = sweep({ 'dry-run': 'TRUE', 'failure-grace': 'Never', 'harvest-logs': 'NONE', namespace: ns })
    const action = await runAction(inputs)
    const cli = await runCli([...cliArgs(inputs), '--json'])
    expect([action.code, cli.code]).toEqual([0, 0])
    // Both would prune the succeeded Jobs (ttl 0) and keep the failed one (failure-grace never)…
    expect(outputNames(action, 'pruned')).toEqual([`${release}-migrate`, `${release}-seed`])
    const json = JSON.parse(cli.stdout)
    expect([json.dryRun, json.pruned.map((j: { name: string }) => j.name).sort()]).toEqual([true, [`${release}-migrate`, `${release}-seed`]])
    // …and, dry runs both, change nothing.
    expect(await jobList()).toEqual(before)
  })

  test('positive control: the valid sweep deletes the release Jobs, so the comparison above can fail', async () => {
    const run = await runCli(cliArgs(sweep({ namespace: ns })))
    expect(run.code).toBe(0)
    const after = await jobList()
    expect(after).not.toEqual(before)
    const gone = before.filter((j) => !after.includes(j)).map((j) => j.split(' ')[0])
    expect(gone).toEqual([`${ns}/${release}-migrate`, `${ns}/${release}-seed`])
  })
})
