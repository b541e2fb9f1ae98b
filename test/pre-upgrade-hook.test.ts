// The pre-upgrade hook (examples/pre-upgrade-hook.yaml) in a chart: the demo chart with the snippet
// copied into its templates, as a chart author adds it. With the hook there but its command not run
// (kwok runs no containers: the hook Job "succeeds" doing nothing), helm upgrade fails on the
// immutable migration Job; with the command the hook Job would run, as its hook-created
// ServiceAccount with the snippet's Role, through the in-cluster configuration, it succeeds.
import { cpSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadAllYaml, type V1Container, type V1Job, type V1ObjectMeta, type V1Role } from '@kubernetes/client-node'
import { pinnedKubernetesVersion } from './cluster/cluster.ts'
import { getJob, helm, kubectl, waitForJobCondition } from './cluster/testenv.ts'
import { imageRootfs, runAsPod } from './in-pod.ts'
import { chart as demoChart, immutableJobError, release, useScenario } from './scenario.ts'

const scenario = useScenario('pre-upgrade-hook')
const snippet = join(import.meta.dirname, '..', 'examples', 'pre-upgrade-hook.yaml')

type Doc = { kind: string; metadata: V1ObjectMeta }

/** The demo chart with the snippet added to its templates, unchanged. */
function chartWithHook(): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'hooked-chart-')), 'migrate-demo')
  cpSync(demoChart, dir, { recursive: true })
  cpSync(snippet, join(dir, 'templates', 'job-sweeper-pre-upgrade.yaml'))
  return dir
}

test('helm upgrade of a chart carrying the hook: fails while the hook has not run job-sweeper, goes through once its command has run as its ServiceAccount', async () => {
  const { ns, otherNs } = scenario
  const chart = chartWithHook()
  expect(helm('lint', '--strict', chart).code).toBe(0)
  const install = helm('install', release, chart, '-n', ns)
  expect({ code: install.code, stderr: install.stderr }).toMatchObject({ code: 0 })
  const migrate = await waitForJobCondition(ns, `${release}-migrate`, 'Complete')

  // The hook's objects as the upgrade renders them (helm template includes hooks).
  const rendered = helm(
    'template',
    release,
    chart,
    '-n',
    ns,
    '--kube-version',
    pinnedKubernetesVersion(),
    '--set',
    'migrationVersion=2',
    '--show-only',
    'templates/job-sweeper-pre-upgrade.yaml'
  )
  expect(rendered.code).toBe(0)
  const hooks = (loadAllYaml(rendered.stdout) as (Doc | null)[]).filter((d): d is Doc => d !== null)
  expect(hooks.map((d) => [d.kind, d.metadata.annotations?.['helm.sh/hook'], d.metadata.annotations?.['helm.sh/hook-weight']])).toEqual([
    ['ServiceAccount', 'pre-upgrade', '-10'],
    ['Role', 'pre-upgrade', '-10'],
    ['RoleBinding', 'pre-upgrade', '-10'],
    ['Job', 'pre-upgrade', '-5']
  ])
  const hookJob = hooks.find((d) => d.kind === 'Job') as unknown as V1Job
  const pod = hookJob.spec?.template.spec
  const container = pod?.containers[0] as V1Container
  expect(container.args?.slice(0, 3)).toEqual(['pre', '--release', release])
  // Only the chart's migration Job; within Helm's default --timeout (5m): pre's wait, and the Job's whole life.
  expect(container.args?.slice(3, 5)).toEqual(['--jobs', `${release}-migrate`])
  expect(container.args?.join(' ')).toContain('--wait-timeout 2m')
  expect(hookJob.spec?.activeDeadlineSeconds).toBeLessThan(300)

  // Positive control: Helm runs the hook (kwok completes its Job without running job-sweeper),
  // then patches the migration Job, which the API server refuses.
  const refused = helm('upgrade', release, chart, '-n', ns, '--set', 'migrationVersion=2')
  expect(refused.code).not.toBe(0)
  expect(refused.stderr).toMatch(immutableJobError(ns, `${release}-migrate`))
  expect((await getJob(ns, `${release}-migrate`))?.metadata?.uid).toBe(migrate.metadata?.uid)
  // hook-succeeded: the hook's ServiceAccount is gone again.
  expect(kubectl('get', 'serviceaccount', `${release}-job-sweeper`, '-n', ns).code).not.toBe(0)

  // What the hook does at weight -10 (its ServiceAccount and Role), then its Job's command.
  const rbacFile = join(mkdtempSync(join(tmpdir(), 'hook-rbac-')), 'rbac.yaml')
  writeFileSync(
    rbacFile,
    hooks
      .filter((d) => d.kind !== 'Job')
      .map((d) => JSON.stringify(d))
      .join('\n---\n')
  )
  expect(kubectl('apply', '-n', ns, '-f', rbacFile).code).toBe(0)
  const account = `--as=system:serviceaccount:${ns}:${pod?.serviceAccountName}`
  // kubectl names a subresource apart (pods --subresource=log; pods/log would be the pod named log)
  const can = (verb: string, resource: string, namespace: string): string => {
    const [kind, sub] = resource.split('/')
    return kubectl('auth', 'can-i', verb, kind, ...(sub ? [`--subresource=${sub}`] : []), '-n', namespace, account).stdout.trim()
  }
  // By name: kubectl auth can-i VERB RESOURCE/NAME.
  const canNamed = (verb: string, resource: string, name: string): string =>
    kubectl('auth', 'can-i', verb, `${resource}/${name}`, '-n', ns, account).stdout.trim()
  const role = hooks.find((d) => d.kind === 'Role') as unknown as V1Role
  const lease = role.rules?.find((r) => r.resources?.includes('leases') && r.resourceNames)?.resourceNames?.[0] ?? ''
  // The Lease is named in the snippet, for the Job's --lease-name and the Role alike (no copy of
  // how job-sweeper derives its default name); were they to differ, pre's read of its Lease would be
  // refused (403) and it would warn `no lock`, which the run below must not.
  expect(lease).toBe(`${release}-job-sweeper`)
  expect(container.args?.[(container.args?.indexOf('--lease-name') ?? -2) + 1]).toBe(lease)
  expect([
    canNamed('delete', 'jobs', `${release}-migrate`),
    can('get', 'pods/log', ns),
    can('create', 'leases.coordination.k8s.io', ns),
    canNamed('update', 'leases.coordination.k8s.io', lease),
    can('list', 'events', ns)
  ]).toEqual(['yes', 'yes', 'yes', 'yes', 'yes'])
  // Only the release's migration Jobs and pre's own Lease (another controller's leader election is not its to take).
  expect([
    canNamed('delete', 'jobs', `${release}-seed`),
    canNamed('delete', 'jobs', 'nightly-report-29012345'),
    canNamed('update', 'leases.coordination.k8s.io', 'some-controller-leader'),
    can('delete', 'jobs', otherNs),
    can('patch', 'jobs', ns),
    can('get', 'secrets', ns),
    can('delete', 'pods', ns)
  ]).toEqual(['no', 'no', 'no', 'no', 'no', 'no', 'no'])

  const run = await runAsPod(ns, pod?.serviceAccountName ?? '', container, imageRootfs(), ['--json'])
  expect(run.stdout).not.toContain(run.token)
  expect(run.stderr).not.toContain(run.token)
  expect(run.stderr).not.toContain('warning:')
  expect(run.code).toBe(0)
  const result = JSON.parse(run.stdout) as { pruned: { namespace: string; name: string }[]; errors: string[]; warnings: string[] }
  expect([result.errors, result.warnings]).toEqual([[], []])
  // The release's plain migration Job; its post-install hook Job and the decoys (a hook Job of
  // the release, another release, another namespace, a running Job) stay.
  expect(result.pruned.map((j) => `${j.namespace}/${j.name}`)).toEqual([`${ns}/${release}-migrate`])
  expect(await getJob(ns, `${release}-hook`)).toBeDefined()

  const upgraded = helm('upgrade', release, chart, '-n', ns, '--set', 'migrationVersion=2')
  expect({ code: upgraded.code, stderr: upgraded.stderr }).toMatchObject({ code: 0 })
  const recreated = await waitForJobCondition(ns, `${release}-migrate`, 'Complete')
  expect(recreated.spec?.template.spec?.containers[0].env?.[0]).toEqual({ name: 'MIGRATION_VERSION', value: '2' })
  // The upgrade's own hook objects replaced the ones above (before-hook-creation); its RBAC went
  // when the hooks succeeded, its Job stays (with its pod's log) until the next upgrade.
  for (const kind of ['serviceaccount', 'role', 'rolebinding']) expect([kind, kubectl('get', kind, `${release}-job-sweeper`, '-n', ns).code]).toEqual([kind, 1])
  expect(kubectl('get', 'job', `${release}-job-sweeper`, '-n', ns).code).toBe(0)
})
