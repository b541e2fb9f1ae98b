// Field ownership on the real cluster with the real helm: after the post phase, a `helm upgrade`
// that keeps the Job as it is must still succeed. Helm 4 applies every object of the release
// server-side on each upgrade, without forcing conflicts: any field the chart sets that
// job-sweeper changed would fail it ("conflict with \"job-sweeper\"").
import { join } from 'node:path'
import type { V1Job } from '@kubernetes/client-node'
import { runAction, WORKFLOW_RUN_ENV, WORKFLOW_RUN_URL } from './action.ts'
import { getJob, helm, helmMajor, kubectl, waitForJobCondition, type CommandResult } from './cluster/testenv.ts'
import { release, useScenario } from './scenario.ts'

const chart = join(import.meta.dirname, 'chart', 'owned-fields')

// No decoy may get a TTL or job-sweeper's label.
const scenario = useScenario('owned', async (decoys) => {
  for (const d of decoys) {
    const job = await getJob(d.namespace, d.name)
    expect([d.name, job?.spec?.ttlSecondsAfterFinished, job?.metadata?.labels?.['job-sweeper.io/managed']]).toEqual([d.name, undefined, undefined])
  }
})

/** helm install|upgrade of the owned-fields chart; `chartTtl` and `failureGrace` are what the chart sets. */
function deploy(verb: 'install' | 'upgrade', revision: string, chartSets: { ttl?: number; failureGrace?: string }): CommandResult {
  const sets = ['--set', `revision=${revision}`]
  if (chartSets.ttl !== undefined) sets.push('--set', `ttlSecondsAfterFinished=${chartSets.ttl}`)
  if (chartSets.failureGrace !== undefined) sets.push('--set-string', `annotations.job-sweeper\\.io/failure-grace=${chartSets.failureGrace}`)
  return helm(verb, release, chart, '-n', scenario.ns, ...sets, ...(verb === 'install' ? ['--wait', '--wait-for-jobs'] : []))
}

/** The fields a manager owns on the Job, as managedFields lists them (JSON of its fieldsV1). */
const ownedBy = (job: V1Job | undefined, manager: string): string =>
  JSON.stringify((job?.metadata?.managedFields ?? []).filter((m) => m.manager === manager && !m.subresource).map((m) => m.fieldsV1))

const name = `${release}-migrate`

test('the chart sets the TTL and a job-sweeper.io/ annotation: post leaves them as the chart sets them, and the next upgrade keeping the Job succeeds', async () => {
  const chartSets = { ttl: 600, failureGrace: '7d' }
  expect(deploy('install', '1', chartSets).stderr).toBe('')
  await waitForJobCondition(scenario.ns, name, 'Complete')
  const installed = await getJob(scenario.ns, name)

  const post = await runAction({ phase: 'post', release, namespace: scenario.ns, ttl: '1h', 'failure-grace': '1h' }, { env: WORKFLOW_RUN_ENV })
  expect(post.stdout).not.toContain('::error::')
  expect(post.code).toBe(0)
  const after = await getJob(scenario.ns, name)
  // job-sweeper's own fields are written (positive control: its patch did reach the Job).
  expect(after?.metadata?.annotations).toMatchObject({ 'job-sweeper.io/ttl': '1h', 'job-sweeper.io/run-url': WORKFLOW_RUN_URL })
  expect(ownedBy(after, 'job-sweeper')).toContain('"f:job-sweeper.io/ttl"')

  if (helmMajor() === 4) {
    // Helm 4 applied them server-side: the chart's values stand, and the summary says so.
    expect([after?.spec?.ttlSecondsAfterFinished, after?.metadata?.annotations?.['job-sweeper.io/failure-grace']]).toEqual([600, '7d'])
    expect(ownedBy(after, 'job-sweeper')).not.toMatch(/f:ttlSecondsAfterFinished|f:job-sweeper\.io\/failure-grace|f:job-sweeper\.io\/managed/)
    expect(post.summary).toContain('the chart sets ttlSecondsAfterFinished 600 (applied by helm): the chart&#39;s value stands')
    expect(post.summary).toContain('the chart&#39;s label job-sweeper.io/managed, annotation job-sweeper.io/failure-grace left as it sets it')
  } else {
    // Helm 3 updates client-side: no field is the chart's to keep, job-sweeper sets the input's.
    expect([after?.spec?.ttlSecondsAfterFinished, after?.metadata?.annotations?.['job-sweeper.io/failure-grace']]).toEqual([3600, '1h'])
  }

  const upgrade = deploy('upgrade', '2', chartSets)
  expect(upgrade.stderr).toBe('')
  expect(upgrade.code).toBe(0)
  const upgraded = await getJob(scenario.ns, name)
  expect(upgraded?.metadata?.uid).toBe(installed?.metadata?.uid) // the same Job, kept by the upgrade
  expect(upgraded?.metadata?.annotations?.['job-sweeper.io/ttl']).toBe('1h')
  // Helm 3's three-way merge writes the chart's values back over job-sweeper's; Helm 4 never lost them.
  expect([upgraded?.spec?.ttlSecondsAfterFinished, upgraded?.metadata?.annotations?.['job-sweeper.io/failure-grace']]).toEqual([600, '7d'])

  if (helmMajor() === 4) {
    // Negative control: had job-sweeper taken the chart's annotation over, the same upgrade fails.
    expect(kubectl('annotate', 'job', '-n', scenario.ns, name, '--overwrite', '--field-manager=job-sweeper', 'job-sweeper.io/failure-grace=1h').code).toBe(0)
    const conflicting = deploy('upgrade', '3', chartSets)
    expect(conflicting.stderr).toMatch(/conflict with "job-sweeper".*\.metadata\.annotations\.job-sweeper\.io\/failure-grace/)
  }
})

test('the chart does not set the TTL: post sets it, and it survives the next upgrade keeping the Job', async () => {
  expect(deploy('install', '1', {}).stderr).toBe('')
  await waitForJobCondition(scenario.ns, name, 'Complete')
  const installed = await getJob(scenario.ns, name)

  const post = await runAction({ phase: 'post', release, namespace: scenario.ns, ttl: '1h', 'failure-grace': '1d' })
  expect(post.code).toBe(0)
  const after = await getJob(scenario.ns, name)
  expect(after?.spec?.ttlSecondsAfterFinished).toBe(3600)
  expect(ownedBy(after, 'job-sweeper')).toContain('"f:ttlSecondsAfterFinished"')
  expect(post.summary).not.toContain('the chart&#39;s value stands')

  const upgrade = deploy('upgrade', '2', {})
  expect(upgrade.stderr).toBe('')
  expect(upgrade.code).toBe(0)
  const upgraded = await getJob(scenario.ns, name)
  expect([upgraded?.metadata?.uid, upgraded?.spec?.ttlSecondsAfterFinished]).toEqual([installed?.metadata?.uid, 3600])
  // The ConfigMap did change: the upgrade really applied the release.
  expect(kubectl('get', 'configmap', '-n', scenario.ns, `${release}-config`, '-o', 'jsonpath={.data.revision}').stdout).toBe('2')
})
