// The README's minimal Role (examples/rbac.yaml) is enough for every phase: each runs here with
// a ServiceAccount bound to exactly that Role, its kubeconfig passed through the kubeconfig input.
// Its `list` on events is used (why a waited Job cannot start), and credentials without it work.
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { outputNames, runAction } from './action.ts'
import { pinnedKubernetesVersion } from './cluster/cluster.ts'
import {
  coreApi,
  createJob,
  createNamespace,
  deleteNamespace,
  eventually,
  getJob,
  helmMajor,
  kubectl,
  escapeRegExp,
  missingImage,
  testOnRealNode,
  waitForJobCondition
} from './cluster/testenv.ts'
import { createDecoys, missingDecoys, type Decoy } from './decoys.ts'
import { helmChart, release } from './scenario.ts'
import { createServiceAccount, exampleRbac, tokenKubeconfig } from './service-account.ts'

let ns: string
let otherNs: string
let decoys: Decoy[]
let token: string
let kubeconfigYaml: string

beforeAll(async () => {
  ns = await createNamespace('rbac')
  otherNs = await createNamespace('rbac-other')
  decoys = await createDecoys(ns, otherNs, release)
  await createServiceAccount(ns, 'deployer', { yaml: exampleRbac(ns) })
  const credentials = tokenKubeconfig(ns, 'deployer')
  token = credentials.token
  kubeconfigYaml = credentials.kubeconfig
})

afterAll(async () => {
  expect(await missingDecoys(decoys)).toEqual([])
  await Promise.all([deleteNamespace(ns), deleteNamespace(otherNs)])
})

test('the ServiceAccount cannot do more than the Role allows', () => {
  // kubectl auth can-i reads `pods/log` as the pod named log: a subresource goes in its own flag.
  const check = (verb: string, resource: string): string => {
    const [type, subresource] = resource.split('/')
    const flags = subresource ? [`--subresource=${subresource}`] : []
    return kubectl('auth', 'can-i', verb, type, ...flags, '-n', ns, `--as=system:serviceaccount:${ns}:deployer`).stdout.trim()
  }
  expect([check('delete', 'jobs'), check('patch', 'jobs'), check('get', 'pods/log'), check('create', 'events'), check('list', 'events')]).toEqual([
    'yes',
    'yes',
    'yes',
    'yes',
    'yes'
  ])
  expect(['get', 'create', 'update', 'delete'].map((verb) => check(verb, 'leases.coordination.k8s.io'))).toEqual(['yes', 'yes', 'yes', 'yes'])
  // Namespaces are cluster-scoped: a Role cannot grant reading one (the namespace check is skipped).
  expect(check('get', 'namespaces')).toBe('no')
  expect([check('delete', 'pods'), check('create', 'jobs'), check('get', 'secrets')]).toEqual(['no', 'no', 'no'])
  expect(kubectl('auth', 'can-i', 'list', 'jobs', '-n', otherNs, `--as=system:serviceaccount:${ns}:deployer`).stdout.trim()).toBe('no')
})

test('pre (manifest scope, logs), post (wait, TTLs) and sweep all work with exactly that Role', async () => {
  expect(helmChart('install', ns, { hookJob: false }, '--wait', '--wait-for-jobs').code).toBe(0)
  const rendered = helmChart('template', ns, { hookJob: false, migrationVersion: '2' }, '--kube-version', pinnedKubernetesVersion())
  const manifest = join(mkdtempSync(join(tmpdir(), 'rendered-')), 'rendered.yaml')
  writeFileSync(manifest, rendered.stdout)

  // The kubeconfig input, base64-encoded as secrets often hold it; in GitHub Actions, so masked.
  const pre = await runAction(
    { kubeconfig: Buffer.from(kubeconfigYaml).toString('base64'), manifest, 'harvest-logs': 'all' },
    { env: { KUBECONFIG: '/nonexistent', GITHUB_ACTIONS: 'true' } }
  )
  expect(pre.stdout).not.toContain('::error::')
  // The Lease was taken: no warning of it (lease.test.ts shows the warning without the rule). The
  // Role covers Jobs only, so pre's preflight may not read the chart's ConfigMap: a warning, never a
  // failure. A Helm 3 release (client-side) without `release` is checked two-way, which it says.
  expect(pre.stdout.split('\n').filter((l) => l.startsWith('::warning'))).toEqual([
    ...(helmMajor() === 3
      ? [
          "::warning::preflight checks with a two-way patch (no release given, so no previous manifest): fields the chart stopped setting are not removed in the dry run, as Helm's three-way patch would remove them"
        ]
      : []),
    `::warning::preflight could not check ConfigMap ${ns}/${release}-config: our credentials may not get configmaps`
  ])
  expect(pre.code).toBe(0)
  expect(outputNames(pre, 'pruned')).toEqual([`${release}-migrate`])
  expect(pre.stdout).toContain(`::add-mask::${token}`)
  expect(pre.stdout.split(token)).toHaveLength(2) // the mask command is the only place it appears

  expect(helmChart('upgrade', ns, { hookJob: false, migrationVersion: '2' }).code).toBe(0)
  await waitForJobCondition(ns, `${release}-migrate`, 'Complete')

  // Plain YAML this time, outside GitHub Actions: nothing may print the token at all.
  const post = await runAction({ phase: 'post', kubeconfig: kubeconfigYaml, manifest, 'wait-for-jobs': '1m' }, { env: { KUBECONFIG: '/nonexistent' } })
  expect(post.stdout).not.toContain('::error::')
  expect(post.code).toBe(0)
  expect(outputNames(post, 'ttl-set')).toEqual([`${release}-migrate`])
  expect(post.stdout).not.toContain(token)
  expect((await getJob(ns, `${release}-migrate`))?.spec?.ttlSecondsAfterFinished).toBe(3600)

  const sweep = await runAction({ phase: 'sweep', kubeconfig: kubeconfigYaml, jobs: `${release}-migrate`, ttl: '0s' }, { env: { KUBECONFIG: '/nonexistent' } })
  expect(sweep.stdout).not.toContain('::error::')
  expect(sweep.code).toBe(0)
  // The retention the post phase recorded on the Job wins over the sweep's input.
  expect(JSON.parse(sweep.outputs.kept)).toEqual([
    { namespace: ns, name: `${release}-migrate`, status: 'succeeded', reason: expect.stringContaining('ttl 1h (its annotation) has not expired') }
  ])
  expect(await getJob(ns, `${release}-migrate`)).toBeDefined()
})

describe('Events in the reason a waited Job never started (list on events)', () => {
  // A tag the real node's registry does not have: its kubelet records why in its own Events.
  const image = missingImage('app:1.2.3')

  /** A Job whose pod cannot pull its image, on the real node, once its kubelet has recorded the failed pull. */
  async function jobThatCannotPull(name: string): Promise<void> {
    await createJob({ namespace: ns, name, behaviour: 'image-pull-backoff', image })
    await eventually(
      `the kubelet's Event that ${name}'s pull failed`,
      async () => (await coreApi().listNamespacedEvent({ namespace: ns, fieldSelector: 'reason=Failed' })).items,
      (events) => events.some((e) => e.involvedObject.name?.startsWith(`${name}-`) && e.message?.startsWith(`Failed to pull image "${image}"`))
    )
  }

  /** pre on the Job, waited on (younger than stuck-after at the plan), with `kubeconfig`: the reason it was deleted with. */
  async function preReason(name: string, kubeconfig: string): Promise<{ reason: string; stdout: string }> {
    const run = await runAction(
      { kubeconfig, jobs: name, 'wait-timeout': '3m', 'stuck-after': '15s', 'harvest-logs': 'none' },
      { env: { KUBECONFIG: '/nonexistent' } }
    )
    expect(run.stdout).not.toContain('::error::')
    expect(run.stdout.split('\n').filter((l) => l.startsWith('::warning'))).toEqual([])
    expect(run.code).toBe(0)
    expect(outputNames(run, 'waited')).toEqual([name])
    expect(outputNames(run, 'pruned')).toEqual([name])
    return { reason: (JSON.parse(run.outputs.pruned) as { reason: string }[])[0].reason, stdout: run.stdout }
  }

  testOnRealNode('with the Role, the kubelet’s Event says why the image was not pulled', async () => {
    await jobThatCannotPull('pull-a')
    const { reason, stdout } = await preReason('pull-a', kubeconfigYaml)
    expect(reason).toMatch(new RegExp(`never started: (ImagePullBackOff|ErrImagePull) \\(${escapeRegExp(image)}(: not found)?\\); Events: pod pull-a-`))
    // containerd's answer, as the real kubelet records it; the pod's status says only ImagePullBackOff.
    expect(reason).toMatch(
      new RegExp(
        ` Failed: Failed to pull image "${escapeRegExp(image)}": rpc error: code = NotFound desc = failed to pull and unpack image "${escapeRegExp(image)}": failed to resolve image: ${escapeRegExp(image)}: no`
      )
    )
    // The BackOff Event repeats what the status says: not quoted.
    expect(reason).not.toContain('Back-off pulling image')
    expect(stdout).not.toContain('failure reasons come without Events')
  })

  testOnRealNode('without list on events (a Role written before), the reason comes without them: no error, no warning, said once', async () => {
    const noEvents = exampleRbac(ns)
      .replace('verbs: [create, list]', 'verbs: [create]')
      .replaceAll('name: job-sweeper', 'name: no-events')
      .replace('name: deployer', 'name: no-events')
    expect(noEvents).toContain('verbs: [create]\n')
    await createServiceAccount(ns, 'no-events', { yaml: noEvents })
    expect(kubectl('auth', 'can-i', 'list', 'events', '-n', ns, `--as=system:serviceaccount:${ns}:no-events`).stdout.trim()).toBe('no')
    await jobThatCannotPull('pull-b')
    const { reason, stdout } = await preReason('pull-b', tokenKubeconfig(ns, 'no-events').kubeconfig)
    expect(reason).toMatch(new RegExp(`^never started: (ImagePullBackOff|ErrImagePull) \\(${escapeRegExp(image)}(: not found)?\\); nothing ran`))
    expect(reason).not.toContain('Events')
    expect(stdout.split('\n').filter((l) => l.startsWith('failure reasons come without Events:'))).toEqual([
      expect.stringContaining('cannot list resource "events"')
    ])
  })
})
