// Preflight on public charts nobody here wrote (scripts/public-charts.sh downloads them as the Go
// modules they ship in), each with a real upgrade that fails on a field other than a Job's, on
// both sets (Helm 4 / Kubernetes 1.37, Helm 3 / 1.34). For each: `helm upgrade` fails naming the
// object and field; `job-sweeper preflight` of the new rendering names the same object and field
// before the upgrade and exits 1; a positive control shows the upgrade applies without that change.
// The StatefulSet case needs a StatefulSet controller, so it runs alone in
// public-charts-statefulset.test.ts.
//
// The Service: since Kubernetes 1.20 the API server clears a Service's clusterIP and nodePorts when
// its type changes to one that does not use them, and keeps the allocated ones when the new type
// does: ClusterIP → NodePort, → LoadBalancer and back all apply (checked below). The type change it
// refuses is one from a headless Service (clusterIP None): the upgrade's write leaves clusterIP out,
// the API server keeps the old value None, and None is refused for NodePort (and LoadBalancer).
// Loki's chart offers both values for its gateway (gateway.service.type, gateway.service.clusterIP).
//
// metrics-server's and Kyverno's charts create ClusterRoles and ClusterRoleBindings: named after
// each release, granting only to its own ServiceAccounts, and removed at each test's end. They act
// on nothing another suite reads, so this suite shares the cluster.
import { runAction } from './action.ts'
import { runCli } from './bin.ts'
import { kubectl } from './cluster/testenv.ts'
import {
  installPublicChart,
  kyvernoUpgradeValues,
  kyvernoValues,
  lokiValues,
  metricsServerValues,
  publicChart,
  renderPublicChart,
  uninstallPublicChart,
  type PublicRelease
} from './public-charts.ts'
import { useScenario } from './scenario.ts'

const scenario = useScenario('charts')

interface Verdicts {
  wouldApply: boolean
  objects: { kind: string; name: string; verdict: { kind: string; fields?: string[]; paths?: string[] }; reason: string }[]
}
const verdictOf = (json: Verdicts, kind: string, name: string): Verdicts['objects'][number] | undefined =>
  json.objects.find((o) => o.kind === kind && o.name === name)

async function preflight(manifest: string, r: PublicRelease): Promise<{ code: number; json: Verdicts; stderr: string }> {
  const run = await runCli(['preflight', '--manifest', manifest, '--namespace', r.namespace, '--release', r.release, '--json'])
  return { code: run.code, json: JSON.parse(run.stdout) as Verdicts, stderr: run.stderr }
}

const resourceVersion = (kind: string, name: string, namespace: string): string =>
  kubectl('get', kind, name, '-n', namespace, '-o', 'jsonpath={.metadata.resourceVersion}').stdout

test("metrics-server's chart 3.12.2 → 3.13.1: applies as is; with nameOverride the Deployment's selector changes, which helm upgrade cannot write and preflight names first", async () => {
  // The chart's own install command names the release metrics-server; its objects are then named
  // metrics-server whatever nameOverride says (the name contains the override), while the selector
  // label app.kubernetes.io/name takes the override.
  const r: PublicRelease = { chart: 'metrics-server-3.12.2', release: 'metrics-server', namespace: scenario.ns, values: metricsServerValues }
  installPublicChart(r)
  try {
    const deployment = 'metrics-server'
    const before = resourceVersion('deployment', deployment, r.namespace)

    // Positive control: the next chart version alone changes the Deployment (its image) and applies.
    const next = await preflight(renderPublicChart(r, {}, 'metrics-server-3.13.1'), r)
    expect([next.code, next.json.wouldApply]).toEqual([0, true])
    expect(verdictOf(next.json, 'Deployment', deployment)?.verdict.kind).toBe('changes')

    // The same upgrade with nameOverride: the selector changes.
    const manifest = renderPublicChart(r, { nameOverride: 'metrics' }, 'metrics-server-3.13.1')
    const checked = await preflight(manifest, r)
    expect(checked.code).toBe(1)
    expect(verdictOf(checked.json, 'Deployment', deployment)?.verdict).toMatchObject({
      kind: 'immutable',
      fields: ['spec.selector.matchLabels[app.kubernetes.io/name]: metrics-server → metrics']
    })
    // The Service's selector is no immutable field: it changes with the same label.
    expect(verdictOf(checked.json, 'Service', deployment)?.verdict).toMatchObject({ kind: 'changes' })
    // pre with the same manifest fails before anything is deleted, naming the Deployment.
    const pre = await runAction({ manifest, namespace: r.namespace })
    expect(pre.code).toBe(1)
    expect(pre.stdout).toContain(
      `Deployment ${r.namespace}/${deployment}: immutable: spec.selector.matchLabels[app.kubernetes.io/name]: metrics-server → metrics`
    )
    // Every check was a dry run.
    expect(resourceVersion('deployment', deployment, r.namespace)).toBe(before)

    // The prediction holds: the upgrade fails on the Deployment's selector.
    const upgrade = publicChart(r, 'upgrade', { nameOverride: 'metrics' }, 'metrics-server-3.13.1')
    expect(upgrade.code).not.toBe(0)
    expect(upgrade.stderr).toMatch(/Deployment\.apps "metrics-server" is invalid: spec\.selector: .*field is immutable/)
    // And without the override the same chart version applies.
    const applied = publicChart(r, 'upgrade', {}, 'metrics-server-3.13.1')
    expect([applied.code, applied.stderr]).toEqual([0, ''])
  } finally {
    uninstallPublicChart(r)
  }
})

test("Kyverno's chart 3.3.6 with fullnameOverride: its four Deployments' selectors change (app.kubernetes.io/part-of); preflight names each, pre deletes nothing, helm upgrade fails", async () => {
  const r: PublicRelease = { chart: 'kyverno-3.3.6', release: 'kyverno', namespace: scenario.ns, values: kyvernoValues }
  installPublicChart(r)
  try {
    const controllers = ['admission', 'background', 'cleanup', 'reports'].map((c) => `kyverno-${c}-controller`)
    const manifest = renderPublicChart(r, { fullnameOverride: 'policy' })
    const checked = await preflight(manifest, r)
    expect(checked.code).toBe(1)
    for (const name of controllers) {
      expect(verdictOf(checked.json, 'Deployment', name)?.verdict).toMatchObject({
        kind: 'immutable',
        fields: ['spec.selector.matchLabels[app.kubernetes.io/part-of]: kyverno → policy']
      })
    }
    // Positive control: the Services select by the same label, which they may change.
    expect(verdictOf(checked.json, 'Service', 'kyverno-background-controller-metrics')?.verdict.kind).toBe('changes')
    expect(checked.json.objects.filter((o) => o.kind === 'Deployment' && o.verdict.kind === 'immutable')).toHaveLength(4)

    // pre with that manifest fails naming them, and deletes nothing.
    const pre = await runAction({ manifest, namespace: r.namespace, release: r.release })
    expect(pre.code).toBe(1)
    expect(pre.stdout).toContain('::error::preflight: helm upgrade would fail on 4 object(s)')
    expect(pre.stdout).toContain(
      `Deployment ${r.namespace}/kyverno-admission-controller: immutable: spec.selector.matchLabels[app.kubernetes.io/part-of]: kyverno → policy`
    )

    const upgrade = publicChart(r, 'upgrade', { fullnameOverride: 'policy' })
    expect(upgrade.code).not.toBe(0)
    expect(upgrade.stderr).toMatch(/Deployment\.apps "kyverno-[a-z]+-controller" is invalid: spec\.selector: .*field is immutable/)
  } finally {
    uninstallPublicChart(r)
  }
})

test("Kyverno's chart 2.7.2 → 3.0.0 (Kyverno 1.9 → 1.10): the cleanup controller's Deployment keeps its name, its selector labels change between the two versions; preflight names it alone, pre deletes nothing, helm upgrade fails on it", async () => {
  const r: PublicRelease = { chart: 'kyverno-2.7.2', release: 'kyverno', namespace: scenario.ns, values: kyvernoUpgradeValues }
  installPublicChart(r)
  try {
    const cleanup = 'kyverno-cleanup-controller'
    const before = resourceVersion('deployment', cleanup, r.namespace)
    // 3.0.0 refuses to upgrade a 2.x release until told the user read its notes (upgrade.fromV2);
    // that done, the upgrade still fails, on the selector.
    const fromV2 = { 'upgrade.fromV2': 'true' }
    const manifest = renderPublicChart(r, fromV2, 'kyverno-3.0.0')
    const checked = await preflight(manifest, r)
    expect(checked.code).toBe(1)
    // 3.0.0 selects by app.kubernetes.io/part-of where 2.7.2 selected by app.kubernetes.io/name.
    expect(verdictOf(checked.json, 'Deployment', cleanup)).toMatchObject({
      verdict: {
        kind: 'immutable',
        fields: expect.arrayContaining([expect.stringMatching(/^spec\.selector\.matchLabels\[app\.kubernetes\.io\/part-of\]/)]) as string[]
      }
    })
    // Positive control: of the new version's 50-odd objects only that one fails; its new
    // controllers are new objects, and the Service of the cleanup controller may change its selector.
    const failing = checked.json.objects.filter((o) => !['unchanged', 'changes', 'new'].includes(o.verdict.kind))
    expect(failing.map((o) => `${o.kind} ${o.name}`)).toEqual([`Deployment ${cleanup}`])
    expect(verdictOf(checked.json, 'Deployment', 'kyverno-admission-controller')?.verdict.kind).toBe('new')
    expect(verdictOf(checked.json, 'Service', cleanup)?.verdict.kind).toBe('changes')

    // pre with that manifest fails naming it, and deletes nothing; every check was a dry run.
    const pre = await runAction({ manifest, namespace: r.namespace, release: r.release })
    expect(pre.code).toBe(1)
    expect(pre.stdout).toContain('::error::preflight: helm upgrade would fail on 1 object(s)')
    expect(pre.stdout).toContain(`Deployment ${r.namespace}/${cleanup}: immutable: spec.selector.matchLabels[app.kubernetes.io/part-of]`)
    expect(resourceVersion('deployment', cleanup, r.namespace)).toBe(before)

    // The prediction holds: the upgrade to the next real version fails on that Deployment's selector.
    const upgrade = publicChart(r, 'upgrade', fromV2, 'kyverno-3.0.0')
    expect(upgrade.code).not.toBe(0)
    expect(upgrade.stderr).toMatch(new RegExp(`Deployment\\.apps "${cleanup}" is invalid: spec\\.selector: .*field is immutable`))
  } finally {
    uninstallPublicChart(r)
  }
})

test("Loki's gateway Service from headless to NodePort: helm upgrade is refused (None may not be set for NodePort) and preflight names it; from a Service with a cluster IP the same change applies", async () => {
  const withGateway = { ...lokiValues, gateway: { enabled: true } }
  const r: PublicRelease = { chart: 'loki-6.55.0', release: 'app', namespace: scenario.ns, values: withGateway }
  const service = 'app-loki-gateway'
  installPublicChart(r, { 'gateway.service.clusterIP': 'None' })
  expect(kubectl('get', 'service', service, '-n', r.namespace, '-o', 'jsonpath={.spec.clusterIP}').stdout).toBe('None')
  const before = resourceVersion('service', service, r.namespace)

  const manifest = renderPublicChart(r, { 'gateway.service.type': 'NodePort' })
  const checked = await preflight(manifest, r)
  expect(checked.code).toBe(1)
  expect(verdictOf(checked.json, 'Service', service)).toMatchObject({
    verdict: { kind: 'invalid', fields: expect.arrayContaining(['spec.clusterIPs[0]']) as string[] },
    reason: expect.stringContaining('spec.clusterIPs[0]: Invalid value: "None": may not be set to \'None\' for NodePort services')
  })
  // Positive control: the rest of the release (the StatefulSet, the gateway's Deployment) is unchanged.
  expect(verdictOf(checked.json, 'StatefulSet', 'app-loki')?.verdict.kind).toBe('unchanged')
  expect(resourceVersion('service', service, r.namespace)).toBe(before)

  const upgrade = publicChart(r, 'upgrade', { 'gateway.service.type': 'NodePort' })
  expect(upgrade.code).not.toBe(0)
  expect(upgrade.stderr).toMatch(
    new RegExp(`Service "${service}" is invalid: spec\\.clusterIPs\\[0\\]: Invalid value: "None": may not be set to 'None' for NodePort services`)
  )

  // The same type change of the chart's default gateway (a cluster IP) applies: preflight says so,
  // and so does the upgrade (in the other namespace, a release of its own).
  const other: PublicRelease = { ...r, namespace: scenario.otherNs }
  installPublicChart(other)
  const plain = await preflight(renderPublicChart(other, { 'gateway.service.type': 'NodePort' }), other)
  expect([plain.code, verdictOf(plain.json, 'Service', service)?.verdict.kind]).toEqual([0, 'changes'])
  expect(publicChart(other, 'upgrade', { 'gateway.service.type': 'NodePort' }).code).toBe(0)
  expect(kubectl('get', 'service', service, '-n', other.namespace, '-o', 'jsonpath={.spec.type}').stdout).toBe('NodePort')
})
