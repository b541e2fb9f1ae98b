// The manifest verdict on the real cluster with the real helm: Helm 4 releases are compared by a
// dry-run server-side apply as Helm's field manager, Helm 3 releases by a dry-run replace; the
// summary names what changed in the pod template, and a dry run that cannot answer does not stop
// the phase.
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { outputNames, runAction } from './action.ts'
import { pinnedKubernetesVersion } from './cluster/cluster.ts'
import { helmMajor, kubectl } from './cluster/testenv.ts'
import { helmChart, release, useScenario } from './scenario.ts'

const scenario = useScenario('manifest')
const migrate = `${release}-migrate`
const seed = `${release}-seed`
// Both Jobs, neither a hook: the seed Job stays the same in every rendering.
const base = { hookJob: 'false', 'seedJob.enabled': 'true' }

function install(): void {
  const result = helmChart('install', scenario.ns, { ...base, migrationVersion: '1' }, '--wait', '--wait-for-jobs')
  if (result.code !== 0) throw new Error(`helm install failed: ${result.stderr}`)
}

function rendered(values: Record<string, string>): string {
  const out = helmChart('template', scenario.ns, { ...base, ...values }, '--kube-version', pinnedKubernetesVersion())
  expect(out.stderr).toBe('')
  const file = join(mkdtempSync(join(tmpdir(), 'rendered-')), 'rendered.yaml')
  writeFileSync(file, out.stdout)
  return file
}

const reasonOf = (json: string, name: string): string | undefined =>
  (JSON.parse(json) as { name: string; reason: string }[]).find((j) => j.name === name)?.reason

test('a changed pod template: the dry run Helm’s upgrade corresponds to refuses it, and the reason lists the changes', async () => {
  install()
  const run = await runAction({ manifest: rendered({ migrationVersion: '2' }), namespace: scenario.ns })
  expect(run.code).toBe(0)
  // Which dry run ran shows in the log, with the API server's whole message.
  const dryRun = helmMajor() === 4 ? 'dry-run apply as helm' : 'dry-run replace'
  expect(run.stdout).toMatch(new RegExp(`Job ${scenario.ns}/${migrate}: the ${dryRun} was refused \\(422\\): .*field is immutable`))
  expect(outputNames(run, 'pruned')).toEqual([migrate, seed])
  expect(reasonOf(run.outputs.pruned, migrate)).toContain(
    'differs from the rendered manifest: containers[migrate].env[MIGRATION_VERSION]: 1 → 2; containers[migrate].image: example.invalid/migrate:1 → 2'
  )
  expect(reasonOf(run.outputs.pruned, seed)).toContain('differs from the rendered manifest: containers[seed].image: example.invalid/seed:1 → 2')
  expect(run.summary).toContain('containers&#91;migrate&#93;.image: example.invalid/migrate:1 → 2') // escaped for Markdown
  expect(run.summary).not.toContain('field is immutable') // the API error is for the log
  expect(helmChart('upgrade', scenario.ns, { ...base, migrationVersion: '2' }).stderr).toBe('')
})

test('an unchanged Job another field manager changed: Helm 4’s upgrade would conflict, so it is pruned and the upgrade succeeds', async () => {
  if (helmMajor() !== 4) return // Helm 3 patches client-side: no field-manager conflicts
  install()
  expect(kubectl('label', 'job', '-n', scenario.ns, migrate, '--overwrite', 'app.kubernetes.io/component=database').code).toBe(0)
  // Negative control: the upgrade fails on it as long as the Job is there.
  expect(helmChart('upgrade', scenario.ns, { ...base, migrationVersion: '1' }).stderr).toMatch(/conflict with "kubectl-label"/)

  const run = await runAction({ manifest: rendered({ migrationVersion: '1' }), namespace: scenario.ns })
  expect(run.code).toBe(0)
  expect(outputNames(run, 'pruned')).toEqual([migrate])
  expect(reasonOf(run.outputs.pruned, migrate)).toMatch(
    /helm upgrade would fail on a field-manager conflict: conflict with "kubectl-label".*\.metadata\.labels\.app\.kubernetes\.io\/component/
  )
  expect(outputNames(run, 'kept')).toEqual([seed]) // positive control: the unchanged, unconflicted Job stays
  expect(helmChart('upgrade', scenario.ns, { ...base, migrationVersion: '1' }).stderr).toBe('')
})

test('an admission webhook that cannot be called: the phase goes on, the Job is treated as changed, and a warning says why', async () => {
  install()
  const webhook = `unreachable-${scenario.ns}`
  const config = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: webhook },
    webhooks: [
      {
        name: 'unreachable.job-sweeper.test',
        // Called on dry runs too (no side effects), and nothing listens: every update of a Job fails.
        sideEffects: 'None',
        failurePolicy: 'Fail',
        timeoutSeconds: 2,
        admissionReviewVersions: ['v1'],
        clientConfig: { url: 'https://127.0.0.1:9/validate' },
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': scenario.ns } },
        rules: [{ apiGroups: ['batch'], apiVersions: ['v1'], operations: ['UPDATE'], resources: ['jobs'] }]
      }
    ]
  }
  const file = join(mkdtempSync(join(tmpdir(), 'webhook-')), 'webhook.json')
  writeFileSync(file, JSON.stringify(config))
  expect(kubectl('apply', '-f', file).stderr).toBe('')
  try {
    const started = Date.now()
    const run = await runAction({ manifest: rendered({ migrationVersion: '1' }), namespace: scenario.ns })
    expect(run.code).toBe(0)
    expect(Date.now() - started).toBeLessThan(30_000) // not retried for the minute a transient 500 gets
    expect(run.stdout).toMatch(/refused \(500\): .*failed calling webhook "unreachable\.job-sweeper\.test"/)
    expect(run.stdout).toContain(
      `::warning::manifest: could not compare Job ${scenario.ns}/${migrate} (500 Internal Server Error from admission webhook unreachable.job-sweeper.test)`
    )
    // Both rendered Jobs meet the webhook: both are treated as changed, as release scope would.
    expect(outputNames(run, 'pruned')).toEqual([migrate, seed])
    expect(reasonOf(run.outputs.pruned, migrate)).toContain('could not compare it with the rendered manifest (500 Internal Server Error from admission webhook')
    expect(run.summary).not.toContain('127.0.0.1:9') // the API error is for the log
  } finally {
    kubectl('delete', 'validatingwebhookconfiguration', webhook)
  }
  expect(helmChart('upgrade', scenario.ns, { ...base, migrationVersion: '1' }).stderr).toBe('')
})
