/** @cluster whole: it runs a StatefulSet controller, which acts on every namespace */
// Pre's preflight gate and the StatefulSet remedy on the real cluster with the real helm
// (test/chart/preflight-demo). Pre with a manifest whose upgrade would fail on a Deployment's
// selector deletes nothing, and says which object and why (with `preflight: warn` or `off` the
// same pre deletes the migration Job: the positive control). A StatefulSet's volume size change
// fails `helm upgrade`; with recreate-statefulsets pre deletes it orphaning its pods and PVCs, the
// upgrade then succeeds, and the new StatefulSet adopts the same pods.
import { outputNames, runAction } from './action.ts'
import { runCli } from './bin.ts'
import { startStatefulSetController } from './cluster/controllers.ts'
import { eventually, getJob, helmMajor, liveObject, testCluster, type LiveObject } from './cluster/testenv.ts'
import { preflightDemo } from './preflight-demo.ts'
import { release, useScenario } from './scenario.ts'

const scenario = useScenario('gate')
const { chartCommand, install, rendered } = preflightDemo(() => scenario.ns)
const migrate = `${release}-migrate`

const uidOf = async (namespace: string, name: string): Promise<string | undefined> => (await getJob(namespace, name))?.metadata?.uid

test('pre whose upgrade would fail on a Deployment selector: fails and deletes nothing, naming the object; with warn or off it deletes the migration Job', async () => {
  await install()
  const jobUid = await uidOf(scenario.ns, migrate)
  // A new migration (the Job must go) and a selector change (no pre can make that upgrade apply).
  const manifest = rendered({ migrationVersion: '2', selectorTier: 'front' })
  const row = /\| fails \| Deployment [\w-]+\/app-web \| immutable: spec\.selector\.matchLabels\.tier: added \(front\) \|/

  const failed = await runAction({ manifest, namespace: scenario.ns })
  expect(failed.code).toBe(1)
  expect(failed.stdout).toContain(
    `::error::preflight: helm upgrade would fail on 1 object(s) (7 object(s) checked, 5 unchanged), so pre deleted nothing (preflight: fail)%0ADeployment ${scenario.ns}/${release}-web: immutable: spec.selector.matchLabels.tier: added (front)`
  )
  expect(failed.summary).toContain('### Preflight of the rendered release')
  expect(failed.summary).toMatch(row)
  expect(failed.summary).toMatch(/\| cleared by pre \| Job [\w-]+\/app-migrate \|/)
  expect(outputNames(failed, 'pruned')).toEqual([])
  expect(await uidOf(scenario.ns, migrate)).toBe(jobUid)

  // The CLI says the same, and exits 1.
  const cli = await runCli(['pre', '--manifest', manifest, '--namespace', scenario.ns])
  expect(cli.code).toBe(1)
  expect(cli.stdout).toContain('Preflight: helm upgrade would fail on 1 object(s)')
  expect(cli.stdout).toMatch(/fails +Deployment [\w-]+\/app-web +immutable: spec\.selector\.matchLabels\.tier: added \(front\)/)
  expect(await uidOf(scenario.ns, migrate)).toBe(jobUid)

  // Positive control, no check: the same pre (a dry run) would delete the Job, and checks nothing.
  const off = await runAction({ manifest, namespace: scenario.ns, preflight: 'off', 'dry-run': 'true' })
  expect(off.code).toBe(0)
  expect(outputNames(off, 'pruned')).toEqual([migrate])
  expect(off.stdout).not.toContain('Preflight')

  // warn: the summary and a warning say it, and pre deletes the Job.
  const warned = await runAction({ manifest, namespace: scenario.ns, preflight: 'warn' })
  expect(warned.code).toBe(0)
  expect(warned.stdout).toContain(
    `::warning::preflight: helm upgrade would fail on 1 object(s) (7 object(s) checked, 5 unchanged); pre goes on (preflight: warn)%0ADeployment ${scenario.ns}/${release}-web`
  )
  expect(warned.summary).toMatch(row)
  expect(outputNames(warned, 'pruned')).toEqual([migrate])
  expect(await getJob(scenario.ns, migrate)).toBeUndefined()
})

test('bad preflight value: refused naming the input, before anything is deleted', async () => {
  await install()
  const jobUid = await uidOf(scenario.ns, migrate)
  const run = await runAction({ manifest: rendered({ migrationVersion: '2' }), namespace: scenario.ns, preflight: 'strict' })
  expect(run.code).toBe(1)
  expect(run.stdout).toContain("::error::Invalid preflight 'strict': expected one of fail, warn, off")
  expect(await uidOf(scenario.ns, migrate)).toBe(jobUid)
})

const get = (kind: string, name: string): LiveObject | undefined => liveObject(kind, name, scenario.ns)

test('a StatefulSet volume size change: helm upgrade fails, pre fails without the remedy; with recreate-statefulsets the upgrade applies and the pods and PVCs are the same', async () => {
  if (helmMajor() !== 4) return // the StatefulSet check runs with Helm 4 on the newest set (docs/preflight.md)
  const stopController = startStatefulSetController(testCluster())
  try {
    await install()
    const sts = `${release}-db`
    const pod = await eventually(
      'the StatefulSet pod',
      async () => get('pod', `${sts}-0`),
      (p) => p !== undefined
    )
    const pvc = await eventually(
      'the StatefulSet PVC',
      async () => get('pvc', `data-${sts}-0`),
      (p) => p !== undefined
    )
    const before = { sts: get('statefulset', sts)?.metadata.uid, pod: pod?.metadata.uid, pvc: pvc?.metadata.uid }
    expect(pod?.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'StatefulSet', uid: before.sts })])
    const manifest = rendered({ storage: '2Gi' })

    // Negative controls: the upgrade fails on it, and so does pre without the remedy, deleting nothing.
    const upgrade = chartCommand('upgrade', { storage: '2Gi' })
    expect(upgrade.code).not.toBe(0)
    expect(upgrade.stderr).toMatch(/Kind=StatefulSet: .*app-db.*spec\.volumeClaimTemplates: .*field is immutable/)
    const refused = await runAction({ manifest, namespace: scenario.ns })
    expect(refused.code).toBe(1)
    expect(refused.stdout).toContain(`StatefulSet ${scenario.ns}/${sts}: immutable: spec.volumeClaimTemplates[data].spec.resources.requests.storage: 1Gi → 2Gi`)
    expect(get('statefulset', sts)?.metadata.uid).toBe(before.sts)

    const pre = await runAction({ manifest, namespace: scenario.ns, 'recreate-statefulsets': 'true' })
    expect(pre.stdout).not.toContain('::error::')
    expect(pre.code).toBe(0)
    expect(pre.summary).toContain('helm upgrade would apply once pre has recreated 1 StatefulSet(s)')
    expect(pre.summary).toContain(`StatefulSet ${scenario.ns}/${sts} deleted with propagationPolicy Orphan (recreate-statefulsets)`)
    // Gone once pre ends; its pod and PVC stay, no longer owned.
    expect(get('statefulset', sts)).toBeUndefined()
    const orphaned = get('pod', `${sts}-0`)?.metadata
    expect([orphaned?.uid, orphaned?.ownerReferences]).toEqual([before.pod, undefined])
    expect(get('pvc', `data-${sts}-0`)?.metadata.uid).toBe(before.pvc)

    expect(chartCommand('upgrade', { storage: '2Gi' }).stderr).toBe('')
    const recreated = get('statefulset', sts)
    expect(recreated?.metadata.uid).not.toBe(before.sts)
    expect(recreated?.spec?.volumeClaimTemplates?.[0].spec.resources.requests.storage).toBe('2Gi')
    // The new StatefulSet adopts the same pod (not restarted); the PVC is the same, its size unchanged.
    const adopted = await eventually(
      'the pod adopted',
      async () => get('pod', `${sts}-0`),
      (p) => p?.metadata.ownerReferences?.[0]?.uid === recreated?.metadata.uid
    )
    expect(adopted?.metadata.uid).toBe(before.pod)
    const claim = get('pvc', `data-${sts}-0`)
    expect([claim?.metadata.uid, claim?.spec?.resources?.requests?.storage]).toEqual([before.pvc, '1Gi'])
    // The migration Job is untouched: nothing in it changed.
    expect(await getJob(scenario.ns, migrate)).toBeDefined()
  } finally {
    await stopController()
  }
})
