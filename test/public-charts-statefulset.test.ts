/** @cluster whole: it runs a StatefulSet controller, which acts on every namespace */
// Loki's chart (6.55.0, from the Go module github.com/grafana/loki/v3 v3.7.8; see
// scripts/public-charts.sh) in its single-binary mode: a StatefulSet whose volumeClaimTemplates
// take their size from singleBinary.persistence.size. Growing it is the upgrade users meet: helm
// upgrade fails on the StatefulSet; preflight names it and the field first; pre with
// recreate-statefulsets deletes it orphaning its pod and PVC, and the upgrade then applies, keeping
// the PVC. On both sets: Helm 4's server-side apply on Kubernetes 1.37, Helm 3's three-way patch
// on 1.34. Only this case runs alone (the whole cluster); the other charts are in
// public-charts.test.ts.
//
// What a real chart showed: Loki's puts the size into its pod template too (the annotation
// storage/size, so that a size change rolls the pods), so after that upgrade the new StatefulSet
// adopts the pod and then replaces it, as it rolls any template change. The remedy restarts
// nothing: the pod is the same after pre, and a change of the volumes' storage class, which leaves
// the pod template as it is, keeps the very same pod through pre and the upgrade.
import { runAction } from './action.ts'
import { runCli } from './bin.ts'
import { startStatefulSetController } from './cluster/controllers.ts'
import { eventually, liveObject, testCluster, type LiveObject } from './cluster/testenv.ts'
import { installPublicChart, lokiValues, publicChart, renderPublicChart, type PublicRelease } from './public-charts.ts'
import { useScenario } from './scenario.ts'

const scenario = useScenario('loki')

const get = (kind: string, name: string): LiveObject | undefined => liveObject(kind, name, scenario.ns)

const sts = 'app-loki'

/** The StatefulSet's pod once its controller is the StatefulSet of uid `owner` (and, with `not`, once it is another pod than that uid). */
const podOwnedBy = (owner: string | undefined, not?: string): Promise<LiveObject | undefined> =>
  eventually(
    `the pod owned by StatefulSet ${owner}`,
    async () => get('pod', `${sts}-0`),
    (p) => owner !== undefined && p?.metadata.ownerReferences?.[0]?.uid === owner && p.metadata.uid !== not
  )

test("Loki's singleBinary.persistence.size 10Gi → 20Gi: helm upgrade fails on the StatefulSet, preflight names the field; with recreate-statefulsets the upgrade applies, same PVC; a storage class change keeps the same pod", async () => {
  const stopController = startStatefulSetController(testCluster())
  try {
    const r: PublicRelease = { chart: 'loki-6.55.0', release: 'app', namespace: scenario.ns, values: lokiValues }
    installPublicChart(r)
    const pod = await podOwnedBy(get('statefulset', sts)?.metadata.uid)
    const pvc = await eventually(
      'the StatefulSet PVC',
      async () => get('pvc', `storage-${sts}-0`),
      (p) => p !== undefined
    )
    const before = { sts: get('statefulset', sts)?.metadata.uid, pod: pod?.metadata.uid, pvc: pvc?.metadata.uid }
    const grow = { 'singleBinary.persistence.size': '20Gi' }
    const manifest = renderPublicChart(r, grow)
    const field = 'spec.volumeClaimTemplates[storage].spec.resources.requests.storage: 10Gi → 20Gi'

    // Before the upgrade: preflight names the StatefulSet and the field, and exits 1.
    const checked = await runCli(['preflight', '--manifest', manifest, '--namespace', r.namespace, '--release', r.release])
    expect(checked.code).toBe(1)
    expect(checked.stdout).toMatch(new RegExp(`fails +StatefulSet ${scenario.ns}/${sts} +immutable: ${field.replace(/[.[\]]/g, '\\$&')}`))

    // Negative controls: the upgrade fails on it, and so does pre without the remedy, deleting nothing.
    const upgrade = publicChart(r, 'upgrade', grow)
    expect(upgrade.code).not.toBe(0)
    expect(upgrade.stderr).toMatch(/StatefulSet.*app-loki.*(spec\.volumeClaimTemplates.*field is immutable|updates to statefulset spec for fields other than)/)
    const refused = await runAction({ manifest, namespace: r.namespace })
    expect(refused.code).toBe(1)
    expect(refused.stdout).toContain(`StatefulSet ${scenario.ns}/${sts}: immutable: ${field}`)
    expect(get('statefulset', sts)?.metadata.uid).toBe(before.sts)

    // The remedy: pre deletes the StatefulSet orphaning its pod and PVC; the pod is not restarted.
    const pre = await runAction({ manifest, namespace: r.namespace, release: r.release, 'recreate-statefulsets': 'true' })
    expect(pre.stdout).not.toContain('::error::')
    expect(pre.code).toBe(0)
    expect(pre.summary).toContain('helm upgrade would apply once pre has recreated 1 StatefulSet(s)')
    expect(pre.summary).toContain(`StatefulSet ${scenario.ns}/${sts} deleted with propagationPolicy Orphan (recreate-statefulsets)`)
    // It says beforehand that the new StatefulSet will then replace the pod: the chart changes its template too.
    expect(pre.summary).toContain('adopts them, then replaces them one by one: the pod template changes too (spec.template.metadata.annotations')
    expect(pre.summary).toContain('storage/size&#93;: 10Gi → 20Gi)') // the summary's table escapes brackets
    expect(get('statefulset', sts)).toBeUndefined()
    const orphaned = get('pod', `${sts}-0`)?.metadata
    expect([orphaned?.uid, orphaned?.ownerReferences]).toEqual([before.pod, undefined])
    expect(get('pvc', `storage-${sts}-0`)?.metadata.uid).toBe(before.pvc)

    // The upgrade applies now. The chart changed the pod template too (storage/size), so the new
    // StatefulSet rolls the pod, as for any template change; the PVC is the same, its size unchanged.
    const applied = publicChart(r, 'upgrade', grow)
    expect([applied.code, applied.stderr]).toEqual([0, ''])
    const recreated = get('statefulset', sts) as LiveObject & { spec: { template: { metadata: { annotations: Record<string, string> } } } }
    expect(recreated.metadata.uid).not.toBe(before.sts)
    expect(recreated.spec.volumeClaimTemplates?.[0].spec.resources.requests.storage).toBe('20Gi')
    expect(recreated.spec.template.metadata.annotations['storage/size']).toBe('20Gi')
    const rolled = await podOwnedBy(recreated.metadata.uid, before.pod)
    const claim = get('pvc', `storage-${sts}-0`)
    expect([claim?.metadata.uid, claim?.spec?.resources?.requests?.storage]).toEqual([before.pvc, '10Gi'])

    // A change the pod template does not see: the volumes' storage class. Through pre and the
    // upgrade the pod stays the very same one, adopted by the new StatefulSet.
    const move = { ...grow, 'singleBinary.persistence.storageClass': 'fast' }
    const moved = renderPublicChart(r, move)
    const again = await runAction({ manifest: moved, namespace: r.namespace, release: r.release, 'recreate-statefulsets': 'true' })
    expect(again.summary).toContain(`StatefulSet ${scenario.ns}/${sts} deleted with propagationPolicy Orphan (recreate-statefulsets)`)
    expect(again.summary).toContain('its pods and PVCs stay; the upgrade creates it anew and it adopts them')
    expect(again.summary).not.toContain('replaces them one by one')
    expect(again.code).toBe(0)
    expect(publicChart(r, 'upgrade', move).stderr).toBe('')
    const third = get('statefulset', sts)?.metadata.uid
    expect(third).not.toBe(recreated.metadata.uid)
    const adopted = await podOwnedBy(third)
    expect(adopted?.metadata.uid).toBe(rolled?.metadata.uid)
    expect(get('pvc', `storage-${sts}-0`)?.metadata.uid).toBe(before.pvc)
  } finally {
    await stopController()
  }
})
