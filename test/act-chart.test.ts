// The action's chart input under nektos/act (a runner nobody here wrote), on the real cluster with
// the real helm: the two-step setup with no rendering step of its own. `phase: pre` renders the
// release itself from `chart` and `helm-args` (helm upgrade --dry-run=server with the helm on PATH,
// a values file of the workspace and a --set), checks it (the preflight) and clears the prior
// migration Job; helm upgrade then goes through, and `phase: post` sets the TTLs. A Job of the
// release that the chart does not render shows the rendered release was the scope: release scope
// alone would have deleted it. test/helm-sweep.test.ts covers the input through test/action.ts.
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildAct, repository, runAct, stepLog, stepResult, stepSummary, type ActRun } from './act/act.ts'
import { createJob, getJob, kubeConfig, testCluster, waitForJobCondition } from './cluster/testenv.ts'
import { chart, helmChart, release, releaseAnnotations, useScenario } from './scenario.ts'

// No decoy may be replaced, get a TTL or job-sweeper's label.
const scenario = useScenario('act-chart', async (decoys) => {
  for (const d of decoys) {
    const job = await getJob(d.namespace, d.name)
    expect([d.name, job?.metadata?.uid, job?.spec?.ttlSecondsAfterFinished, job?.metadata?.labels?.['job-sweeper.io/managed']]).toEqual([
      d.name,
      d.uid,
      undefined,
      undefined
    ])
  }
})

let act: string
beforeAll(() => {
  act = buildAct()
}, 20 * 60_000)

const secrets = (): Record<string, string> => ({ KUBECONFIG_FILE: testCluster().kubeconfig })

/** Nothing secret in act's log: the cluster's token, and the kubeconfig's path (a secret here, so masked). */
function expectNoSecrets(run: ActRun): void {
  const token = kubeConfig().getCurrentUser()?.token ?? ''
  expect(token.length).toBeGreaterThan(8)
  expect([run.log.includes(token), run.log.includes(testCluster().kubeconfig)]).toEqual([false, false])
}

/** The release installed (migration 1, no seed Job), and a finished Job of the release that its chart does not render. */
async function installed(ns: string): Promise<{ migrateUid?: string; adhocUid?: string }> {
  expect(helmChart('install', ns, {}, '--wait', '--wait-for-jobs').code).toBe(0)
  const migrate = await waitForJobCondition(ns, `${release}-migrate`, 'Complete')
  await createJob({ namespace: ns, name: `${release}-adhoc`, annotations: releaseAnnotations(ns) })
  const adhoc = await waitForJobCondition(ns, `${release}-adhoc`, 'Complete')
  return { migrateUid: migrate.metadata?.uid, adhocUid: adhoc.metadata?.uid }
}

test('phase: pre renders chart with helm-args as the upgrade will, clears the prior migration Job, helm upgrade goes through, phase: post sets the TTLs', async () => {
  const { ns } = scenario
  const before = await installed(ns)
  const outputsFile = join(mkdtempSync(join(tmpdir(), 'job-sweeper-act-outputs-')), 'outputs.json')

  const run = await runAct(act, 'chart.yml', { ACTION_DIR: repository, NAMESPACE: ns, CHART: chart, OUTPUTS_FILE: outputsFile }, secrets())
  const steps = ['values of this deploy', 'job-sweeper pre', 'helm upgrade', 'read the outputs', 'job-sweeper post'].map((s) => [
    s,
    stepResult(run, 'deploy', 'Main', s)
  ])
  const said = {
    stderr: run.code === 0 ? '' : run.stderr,
    preLog: run.code === 0 ? '' : stepLog(run, 'deploy', 'Main', 'job-sweeper pre'),
    upgradeLog: run.code === 0 ? '' : stepLog(run, 'deploy', 'Main', 'helm upgrade')
  }
  expect({ code: run.code, steps, ...said }).toEqual({ code: 0, steps: steps.map(([s]) => [s, 'success']), stderr: '', preLog: '', upgradeLog: '' })
  expectNoSecrets(run)

  // pre rendered the chart itself, with the values file (migration 2) and the --set (the seed Job).
  const preLog = stepLog(run, 'deploy', 'Main', 'job-sweeper pre')
  expect(preLog).toContain(`Rendering chart '${chart}' as the upgrade will: helm upgrade ${release} ${chart} … --dry-run=server`)
  const outputs = JSON.parse(readFileSync(outputsFile, 'utf8')) as Record<string, string>
  const listed = (name: string): { name: string; reason: string }[] =>
    (JSON.parse(outputs[name]) as { name: string; reason: string }[]).map(({ name, reason }) => ({ name, reason }))
  // The migration differs from the rendering (migrationVersion 2 came from -f): pruned.
  expect(listed('pruned')).toEqual([{ name: `${release}-migrate`, reason: expect.stringContaining('differs from the rendered manifest') }])
  // The Job the chart does not render, of the release and finished, is out of the rendered release's
  // scope: not even listed as kept (release scope alone would have pruned it; it survives, below).
  expect(listed('kept')).toEqual([])
  // …and the rendered release was checked first: the preflight's verdict in pre's summary.
  const preSummary = stepSummary(run, 'deploy', 'Main', 'job-sweeper pre')
  expect(preSummary).toContain('### Preflight of the rendered release')
  expect(preSummary).toMatch(/✅ helm upgrade would apply once pre has cleared 1 Job\(s\) \(\d+ object\(s\) checked, \d+ unchanged\)/)
  expect(preSummary).toContain('**✅ 1 pruned · ')

  // phase: post (the same inputs, rendered again) set the TTLs; pre's own post step left it to that step.
  expect(stepSummary(run, 'deploy', 'Main', 'job-sweeper post')).toContain('**✅ 2 TTL set')
  expect(stepResult(run, 'deploy', 'Post', 'job-sweeper pre')).toBe('success')
  expect(stepLog(run, 'deploy', 'Post', 'job-sweeper pre')).toContain('a phase: post step of this job ran the post phase for the same scope already')

  // The upgrade's Jobs: a new migration and the seed Job of --set, each with the post step's TTL.
  const migrate = await waitForJobCondition(ns, `${release}-migrate`, 'Complete')
  expect(migrate.metadata?.uid).not.toBe(before.migrateUid)
  expect([migrate.spec?.ttlSecondsAfterFinished, migrate.metadata?.annotations?.['job-sweeper.io/ttl']]).toEqual([3600, '1h'])
  const seed = await waitForJobCondition(ns, `${release}-seed`, 'Complete')
  expect(seed.spec?.ttlSecondsAfterFinished).toBe(3600)
  // The unrendered Job and the release's own hook Job: out of scope, untouched (each phase of the
  // one-step setup, with release scope, would have deleted the first and given it a TTL).
  const adhoc = await getJob(ns, `${release}-adhoc`)
  expect([adhoc?.metadata?.uid, adhoc?.spec?.ttlSecondsAfterFinished]).toEqual([before.adhocUid, undefined])
  expect((await getJob(ns, `${release}-hook`))?.spec?.ttlSecondsAfterFinished).toBeUndefined()
})

test('a chart path with no chart fails the step naming the chart input; nothing is deleted and the upgrade never runs', async () => {
  const { ns } = scenario
  const before = await installed(ns)
  const missing = join(mkdtempSync(join(tmpdir(), 'job-sweeper-act-no-chart-')), 'not-a-chart')

  const run = await runAct(act, 'chart-missing.yml', { ACTION_DIR: repository, NAMESPACE: ns, CHART: missing }, secrets())
  expect(run.code).not.toBe(0)
  expectNoSecrets(run)
  expect([stepResult(run, 'deploy', 'Main', 'job-sweeper pre'), stepResult(run, 'deploy', 'Main', 'helm upgrade')]).toEqual(['failure', undefined])
  expect(stepLog(run, 'deploy', 'Main', 'job-sweeper pre')).toContain(
    `::error::Invalid chart '${missing}': helm upgrade --dry-run=server failed (exit code 1), so nothing was done`
  )
  expect(stepLog(run, 'deploy', 'Post', 'job-sweeper pre')).toContain('the main step did not complete a pre phase, so there is nothing to do')
  for (const [name, uid] of [
    [`${release}-migrate`, before.migrateUid],
    [`${release}-adhoc`, before.adhocUid]
  ]) {
    const job = await getJob(ns, name as string)
    expect([name, job?.metadata?.uid, job?.spec?.ttlSecondsAfterFinished]).toEqual([name, uid, undefined])
  }
})
