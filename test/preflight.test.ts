// Preflight on the real cluster with the real helm: a release of test/chart/preflight-demo whose
// next rendering changes a StatefulSet's volume size, a Deployment's selector and a Service's
// clusterIP, sets a field another manager owns, meets a ValidatingAdmissionPolicy, and adds a kind
// the cluster does not serve. Preflight names each object and field, changes nothing, and calls a
// Job-only failure the upgrade's once pre has cleared the Job.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { V1PolicyRule } from '@kubernetes/client-node'
import { runAction } from './action.ts'
import { runCli } from './bin.ts'
import { eventually, helmMajor, kubectl } from './cluster/testenv.ts'
import { denyFlagOffPolicy } from './flag-policy.ts'
import { preflightDemo } from './preflight-demo.ts'
import { release, useScenario } from './scenario.ts'
import { createServiceAccount, tokenKubeconfig } from './service-account.ts'

const scenario = useScenario('preflight')
const { chartCommand, install, rendered } = preflightDemo(() => scenario.ns)

/** The release's objects: resourceVersion and managedFields of each, to prove a run changed nothing. */
function snapshot(): Record<string, string> {
  const got = kubectl('get', 'statefulset,deployment,service,configmap,job', '-n', scenario.ns, '-o', 'json', '--show-managed-fields')
  expect(got.code).toBe(0)
  const items = (JSON.parse(got.stdout) as { items: { kind: string; metadata: { name: string; resourceVersion: string; managedFields?: unknown } }[] }).items
  const names = ['db', 'web', 'config', 'flags', 'settings', 'migrate'].map((n) => `${release}-${n}`)
  return Object.fromEntries(
    items
      .filter((o) => names.includes(o.metadata.name))
      .map((o) => [`${o.kind}/${o.metadata.name}`, `${o.metadata.resourceVersion} ${JSON.stringify(o.metadata.managedFields)}`])
  )
}

interface Verdicts {
  wouldApply: boolean
  mode: { write: string; why: string }
  objects: {
    kind: string
    name: string
    write: string
    verdict: { kind: string; fields?: string[]; managers?: string[]; by?: string }
    clearedByPre: boolean
    reason: string
  }[]
}
const verdictOf = (json: Verdicts, kind: string, name: string): Verdicts['objects'][number] | undefined =>
  json.objects.find((o) => o.kind === kind && o.name === `${release}-${name}`)

/** A policy (in-process, no webhook server) that denies the flags ConfigMap with flag=off, in this namespace only. */
function denyFlagOff(): () => void {
  const name = `flags-${scenario.ns}`
  const file = join(mkdtempSync(join(tmpdir(), 'policy-')), 'policy.json')
  writeFileSync(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: denyFlagOffPolicy(name, scenario.ns) }))
  expect(kubectl('apply', '-f', file).stderr).toBe('')
  return () => void kubectl('delete', '-f', file)
}

test('an upgrade that fails on a StatefulSet, a Deployment, a Service, a conflict, a policy and an unserved kind: each named with its field, and nothing changes', async () => {
  if (helmMajor() !== 4) return // Helm 4 on the newest set today; Helm 3's patch is checked by a fallback (docs/preflight.md)
  await install({ clusterIP: '10.0.0.71' })
  // Another field manager takes the ConfigMap's mode: Helm 4's apply of `fast` conflicts with it.
  expect(kubectl('patch', 'configmap', `${release}-config`, '-n', scenario.ns, '--type', 'merge', '-p', '{"data":{"mode":"slow"}}').code).toBe(0)
  const allowPolicy = denyFlagOff()
  try {
    // The policy takes effect once the API server has loaded it.
    await eventually(
      'the policy to deny',
      async () => kubectl('create', 'configmap', 'probe', '-n', scenario.ns, '--from-literal=flag=off', '--dry-run=server').code,
      (code) => code !== 0,
      30_000
    )
    const values = { storage: '2Gi', selectorTier: 'front', clusterIP: '10.0.0.72', flag: 'off', widget: 'true', level: '2' }
    const manifest = rendered(values)
    const before = snapshot()
    expect(Object.keys(before)).toHaveLength(7)

    const run = await runCli(['preflight', '--manifest', manifest, '--namespace', scenario.ns, '--release', release, '--json'])
    expect([run.code, run.stderr]).toEqual([1, expect.stringContaining('Preflight: 8 object(s)')])
    const json = JSON.parse(run.stdout) as Verdicts
    expect(json.wouldApply).toBe(false)
    expect(json.mode).toEqual({ write: 'apply', why: `the release record of ${release} says server-side apply (Helm 4)` })
    expect(verdictOf(json, 'StatefulSet', 'db')?.verdict).toMatchObject({
      kind: 'immutable',
      fields: ['spec.volumeClaimTemplates[data].spec.resources.requests.storage: 1Gi → 2Gi']
    })
    expect(verdictOf(json, 'Deployment', 'web')?.verdict).toMatchObject({ kind: 'immutable', fields: ['spec.selector.matchLabels.tier: added (front)'] })
    expect(verdictOf(json, 'Service', 'web')?.verdict).toMatchObject({ kind: 'immutable', fields: ['spec.clusterIPs[0]: 10.0.0.71 → ["10.0.0.72"]'] })
    expect(verdictOf(json, 'ConfigMap', 'config')?.verdict).toEqual({ kind: 'conflict', fields: ['.data.mode'], managers: ['kubectl-patch'] })
    expect(verdictOf(json, 'ConfigMap', 'flags')?.verdict).toMatchObject({
      kind: 'denied',
      by: `ValidatingAdmissionPolicy flags-${scenario.ns} (binding flags-${scenario.ns})`
    })
    expect(verdictOf(json, 'Widget', 'widget')?.verdict).toEqual({ kind: 'not-served', what: 'Widget in example.com/v1' })
    // Positive controls: an accepted change (which a write that is no dry run would make) and the
    // unchanged Job, checked by the same apply.
    expect(verdictOf(json, 'ConfigMap', 'settings')).toMatchObject({ write: 'apply', verdict: { kind: 'changes', paths: ['data.level: 1 → 2'] } })
    expect(verdictOf(json, 'Job', 'migrate')).toMatchObject({ write: 'apply', verdict: { kind: 'unchanged' }, clearedByPre: false })
    expect(json.objects.every((o) => o.reason.length <= 400)).toBe(true)
    // Every check was a dry run: no resourceVersion or managedFields moved.
    expect(snapshot()).toEqual(before)

    // The text names them failing first.
    const text = await runCli(['preflight', '--manifest', manifest, '--namespace', scenario.ns, '--release', release])
    expect(text.code).toBe(1)
    expect(text.stdout).toContain('helm upgrade would fail on 6 object(s) (8 object(s) checked, 1 unchanged)')
    const rows = text.stdout.split('\n').filter((l) => /^(fails|cleared by pre|changes|new|not checked) /.test(l))
    expect(rows.map((r) => r.split(/\s{2,}/)[0])).toEqual(['fails', 'fails', 'fails', 'fails', 'fails', 'fails', 'changes'])
    expect(text.stdout).toMatch(
      /fails +StatefulSet [\w-]+\/app-db +immutable: spec\.volumeClaimTemplates\[data\]\.spec\.resources\.requests\.storage: 1Gi → 2Gi/
    )

    // Positive control: a real write to one object shows in the same snapshot.
    expect(kubectl('label', 'deployment', `${release}-web`, '-n', scenario.ns, 'preflight.test/touched=true').code).toBe(0)
    const after = snapshot()
    expect(Object.keys(after).filter((k) => after[k] !== before[k])).toEqual([`Deployment/${release}-web`])

    // The prediction holds: helm upgrade fails (here on the first object it meets).
    const upgrade = chartCommand('upgrade', { ...values, widget: 'false' })
    expect(upgrade.code).not.toBe(0)
    expect(upgrade.stderr).toMatch(/app-(db|web|config|flags)/)
  } finally {
    allowPolicy()
  }
})

test('a failure on the migration Job only: exit 0, the Job listed as cleared by pre, and after pre the upgrade applies', async () => {
  if (helmMajor() !== 4) return
  await install()
  // Another field manager owns a label the chart sets: Helm 4's apply of the Job conflicts.
  expect(kubectl('label', 'job', `${release}-migrate`, '-n', scenario.ns, '--overwrite', 'app.kubernetes.io/component=database').code).toBe(0)
  const manifest = rendered({})
  // Negative control: the upgrade fails on the Job as long as it is there.
  expect(chartCommand('upgrade', {}).stderr).toMatch(/conflict with "kubectl-label"/)

  const run = await runCli(['preflight', '--manifest', manifest, '--namespace', scenario.ns, '--release', release])
  expect(run.code).toBe(0)
  expect(run.stdout).toContain('helm upgrade would apply once pre has cleared 1 Job(s) (7 object(s) checked, 6 unchanged)')
  expect(run.stdout).toMatch(
    /cleared by pre +Job [\w-]+\/app-migrate +conflict: \.metadata\.labels\.app\.kubernetes\.io\/component owned by "kubectl-label".*; pre deletes this Job, and the upgrade creates it anew/
  )

  // The action's phase: preflight says the same in the job summary, and does not fail the step.
  const step = await runAction({ phase: 'preflight', manifest, namespace: scenario.ns, release })
  expect(step.code).toBe(0)
  expect(step.summary).toContain('✅ helm upgrade would apply once pre has cleared 1 Job(s)')
  expect(step.summary).toMatch(/\| cleared by pre \| Job [\w-]+\/app-migrate \|/)
  // Its outputs, as the CLI's --json has wouldApply.
  expect([step.outputs['would-apply'], step.outputs['preflight-failing'], step.outputs['preflight-failing-count']]).toEqual(['true', '[]', '0'])
  expect(step.outputs['preflight-headline']).toBe('helm upgrade would apply once pre has cleared 1 Job(s) (7 object(s) checked, 6 unchanged)')

  // What exit 0 promised: pre clears the Job, then the upgrade applies.
  const pre = await runCli(['pre', '--manifest', manifest, '--namespace', scenario.ns])
  expect(pre.code).toBe(0)
  expect(chartCommand('upgrade', {}).stderr).toBe('')
})

test('a release installed client-side: checked by a patch, which still meets the immutable volume size', async () => {
  // Helm 3 always installs client-side; Helm 4 when told to.
  if (helmMajor() === 4) await install({}, '--server-side=false')
  else await install()
  const run = await runCli(['preflight', '--manifest', rendered({ storage: '2Gi', level: '2' }), '--namespace', scenario.ns, '--release', release, '--json'])
  expect(run.code).toBe(1)
  const json = JSON.parse(run.stdout) as Verdicts
  const says = helmMajor() === 4 ? 'client-side apply' : 'nothing (Helm 3)'
  expect(json.mode).toEqual({ write: 'patch', why: `the release record of ${release} says ${says}: a client-side patch, three-way from revision 1's manifest` })
  expect(verdictOf(json, 'StatefulSet', 'db')).toMatchObject({
    write: 'patch',
    verdict: { kind: 'immutable', fields: ['spec.volumeClaimTemplates[data].spec.resources.requests.storage: 1Gi → 2Gi'] }
  })
  expect(verdictOf(json, 'ConfigMap', 'settings')).toMatchObject({ write: 'patch', verdict: { kind: 'changes', paths: ['data.level: 1 → 2'] } })
  expect(verdictOf(json, 'Deployment', 'web')).toMatchObject({ write: 'patch', verdict: { kind: 'unchanged' } })
})

test("Helm 3's three-way patch: the new rendering drops a StatefulSet field the release set, which the upgrade removes and the API server refuses", async () => {
  if (helmMajor() === 4) await install({ podManagementPolicy: 'Parallel' }, '--server-side=false')
  else await install({ podManagementPolicy: 'Parallel' })
  // The next rendering no longer sets podManagementPolicy (the chart's default), and changes a level.
  const values = { level: '2' }
  const manifest = rendered(values)
  expect(readFileSync(manifest, 'utf8')).not.toContain('podManagementPolicy')
  const before = snapshot()

  const run = await runCli(['preflight', '--manifest', manifest, '--namespace', scenario.ns, '--release', release, '--json'])
  expect([run.code, run.stderr]).toEqual([1, expect.stringContaining('Preflight: 7 object(s)')])
  const json = JSON.parse(run.stdout) as Verdicts
  expect(json.mode.why).toMatch(/: a client-side patch, three-way from revision 1's manifest$/)
  expect(verdictOf(json, 'StatefulSet', 'db')).toMatchObject({
    write: 'patch',
    verdict: { kind: 'immutable', fields: ['spec.podManagementPolicy: Parallel → removed'] }
  })
  // Positive control: the accepted change of the same patch.
  expect(verdictOf(json, 'ConfigMap', 'settings')).toMatchObject({ write: 'patch', verdict: { kind: 'changes', paths: ['data.level: 1 → 2'] } })
  expect(snapshot()).toEqual(before)

  // Without the release, its previous manifest is unknown: the two-way patch leaves the field, finds
  // the StatefulSet unchanged, and a warning says what it cannot see.
  const twoWay = await runCli(['preflight', '--manifest', manifest, '--namespace', scenario.ns, '--json'])
  const blind = JSON.parse(twoWay.stdout) as Verdicts & { warnings: string[] }
  expect(twoWay.code).toBe(0)
  expect(verdictOf(blind, 'StatefulSet', 'db')?.verdict).toEqual({ kind: 'unchanged' })
  expect(blind.warnings).toContain(
    "preflight checks with a two-way patch (no release given, so no previous manifest): fields the chart stopped setting are not removed in the dry run, as Helm's three-way patch would remove them"
  )

  // The prediction holds: the upgrade fails on the StatefulSet's spec (Kubernetes 1.34 forbids the
  // spec's other fields, 1.37 names the field).
  const upgrade = chartCommand('upgrade', values)
  expect(upgrade.code).not.toBe(0)
  expect(upgrade.stderr).toMatch(/app-db.*(updates to statefulset spec for fields other than|podManagementPolicy: Invalid value: .*field is immutable)/s)
  // And with the field kept, the same upgrade applies (the verdict's other half).
  expect(chartCommand('upgrade', { ...values, podManagementPolicy: 'Parallel' }).stderr).toBe('')
})

/** A kubeconfig whose only credential is the token of a new ServiceAccount `name`, bound to a Role of `rules` in the scenario's namespace. */
async function kubeconfigFor(name: string, rules: V1PolicyRule[]): Promise<string> {
  await createServiceAccount(scenario.ns, name, { rules })
  const file = join(mkdtempSync(join(tmpdir(), 'preflight-role-')), 'kubeconfig')
  writeFileSync(file, tokenKubeconfig(scenario.ns, name).kubeconfig)
  return file
}

test("docs/preflight.md's Role is enough for Helm 3's three-way patch: the release record and the OpenAPI document are read", async () => {
  if (helmMajor() === 4) await install({ podManagementPolicy: 'Parallel' }, '--server-side=false')
  else await install({ podManagementPolicy: 'Parallel' })
  // The Role of docs/preflight.md's Permissions, in this namespace.
  const objectsRule: V1PolicyRule = {
    apiGroups: ['', 'apps', 'batch'],
    resources: ['configmaps', 'services', 'deployments', 'statefulsets', 'jobs'],
    verbs: ['get', 'list', 'patch', 'create']
  }
  const kubeconfig = await kubeconfigFor('job-sweeper-preflight', [objectsRule, { apiGroups: [''], resources: ['secrets'], verbs: ['list'] }])
  const run = await runCli(['preflight', '--manifest', rendered({}), '--kubeconfig', kubeconfig, '--release', release, '--json'])
  const json = JSON.parse(run.stdout) as Verdicts & { warnings: string[] }
  expect(json.warnings).toEqual([])
  expect(json.mode.why).toMatch(/three-way from revision 1's manifest$/)
  expect(verdictOf(json, 'StatefulSet', 'db')?.verdict).toMatchObject({ kind: 'immutable', fields: ['spec.podManagementPolicy: Parallel → removed'] })
  expect(run.code).toBe(1)

  // Control: the same Role without the Secrets rule reads no record, falls back to the two-way
  // patch (said in a warning), and misses the dropped field.
  const withoutSecrets = await kubeconfigFor('preflight-no-secrets', [objectsRule])
  const blind = await runCli(['preflight', '--manifest', rendered({}), '--kubeconfig', withoutSecrets, '--release', release, '--json'])
  const blindJson = JSON.parse(blind.stdout) as Verdicts & { warnings: string[] }
  expect(blindJson.warnings).toContain(
    `preflight checks with a two-way patch (the release record of ${release} could not be read (403)): fields the chart stopped setting are not removed in the dry run, as Helm's three-way patch would remove them`
  )
  expect(verdictOf(blindJson, 'StatefulSet', 'db')?.verdict).toEqual({ kind: 'unchanged' })
})

test('credentials that may not patch a kind or read the release record: those objects are not checked, a warning each, never a crash', async () => {
  if (helmMajor() !== 4) return
  await install()
  const kubeconfig = await kubeconfigFor('preflight-partial', [
    { apiGroups: ['', 'apps', 'batch'], resources: ['statefulsets', 'deployments', 'services', 'configmaps', 'jobs'], verbs: ['get'] },
    { apiGroups: [''], resources: ['configmaps'], verbs: ['patch'] }
  ])

  const run = await runCli(['preflight', '--manifest', rendered({ storage: '2Gi', level: '2' }), '--kubeconfig', kubeconfig, '--release', release, '--json'])
  expect(run.code).toBe(0)
  const json = JSON.parse(run.stdout) as Verdicts & { warnings: string[] }
  // The release record cannot be read: the field managers decide, and a warning says so.
  expect(json.mode.write).toBe('apply')
  expect(json.warnings).toContain(
    `preflight could not read the release record of ${release} in ${scenario.ns} (403); the objects' field managers decide how Helm writes them`
  )
  expect(verdictOf(json, 'StatefulSet', 'db')?.reason).toMatch(/^not checked: our credentials may not: .* cannot patch resource "statefulsets"/)
  expect(json.warnings.some((w) => w.startsWith(`preflight could not check StatefulSet ${scenario.ns}/${release}-db: our credentials may not`))).toBe(true)
  // Positive control: what the credentials allow is still checked.
  expect(verdictOf(json, 'ConfigMap', 'settings')?.verdict).toEqual({ kind: 'changes', paths: ['data.level: 1 → 2'] })
})

test('bad usage: preflight without --manifest exits 2 before the cluster is read', async () => {
  const run = await runCli(['preflight', '--namespace', scenario.ns])
  expect(run.code).toBe(2)
  expect(run.stderr).toContain("Invalid phase 'preflight' without manifest")
})
