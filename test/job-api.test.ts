// The current Job API on the real job controller: interim conditions are not final, and Jobs with
// several pods (Indexed, retried) have every pod's logs saved by the pre phase.
import { readdirSync, readFileSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { V1Job } from '@kubernetes/client-node'
import { isFinished, jobStatus } from '../src/plan/predicates.ts'
import { outputNames, runAction } from './action.ts'
import { createJob, eventually, getJob, kubectl, podsOfJob, waitForJobCondition, type TestJob } from './cluster/testenv.ts'
import { release, releaseAnnotations, useScenario } from './scenario.ts'
import { savedFolder } from './saved-folder.ts'

const scenario = useScenario('jobapi')
let ns: string
beforeEach(() => {
  ns = scenario.ns
})

const conditions = (job: V1Job | undefined): string[] =>
  (job?.status?.conditions ?? [])
    .filter((c) => c.status === 'True')
    .map((c) => c.type)
    .sort()

/** Lets the pods of `job` selected by `selector` (besides job-name) go: removes `label` from them. */
function unlabelPods(job: string, label: string, selector = ''): void {
  const result = kubectl('label', 'pod', '-n', ns, '-l', `job-name=${job}${selector ? `,${selector}` : ''}`, `${label}-`)
  expect(result.stderr).toBe('')
}

describe('interim conditions are not final', () => {
  test('a successPolicy Job with SuccessCriteriaMet is running until the controller adds Complete', async () => {
    const name = `${release}-indexed`
    await createJob({
      namespace: ns,
      name,
      annotations: releaseAnnotations(ns),
      behaviour: 'hold',
      linger: true,
      spec: { completionMode: 'Indexed', completions: 2, parallelism: 2, successPolicy: { rules: [{ succeededIndexes: '0' }] } }
    })
    await eventually(
      `${name}: two pods running`,
      () => getJob(ns, name),
      (j) => j?.status?.active === 2
    )
    // Index 0 succeeds: the success policy is met, and the controller deletes index 1's pod,
    // which stays Terminating (linger) — so the Job cannot be Complete yet.
    unlabelPods(name, 'job-sweeper.test/hold', 'batch.kubernetes.io/job-completion-index=0')
    const interim = (await eventually(
      `${name}: SuccessCriteriaMet`,
      () => getJob(ns, name),
      (j) => conditions(j).includes('SuccessCriteriaMet')
    )) as V1Job
    await new Promise((r) => setTimeout(r, 2000)) // the controller had time to finish it, if it would
    const stillInterim = await getJob(ns, name)
    expect(conditions(stillInterim)).toEqual(['SuccessCriteriaMet'])
    expect(stillInterim?.status?.terminating).toBe(1)
    for (const job of [interim, stillInterim as V1Job]) {
      expect([isFinished(job), jobStatus(job)]).toEqual([false, 'running'])
    }

    // The pre phase treats it as running too: on-running fail stops and deletes nothing.
    const run = await runAction({ release, namespace: ns, 'on-running': 'fail' })
    expect(run.code).toBe(1)
    expect(run.stdout).toContain(`::error::Job ${ns}/${name} is still running`)
    expect((await getJob(ns, name))?.metadata?.uid).toBe(interim.metadata?.uid)

    unlabelPods(name, 'job-sweeper.test/linger')
    const complete = await waitForJobCondition(ns, name, 'Complete')
    expect(conditions(complete)).toEqual(['Complete', 'SuccessCriteriaMet'])
    expect([isFinished(complete), jobStatus(complete)]).toEqual([true, 'succeeded'])
  })

  test('a Job past its deadline with FailureTarget is running until the controller adds Failed', async () => {
    const name = `${release}-deadline`
    await createJob({ namespace: ns, name, annotations: releaseAnnotations(ns), behaviour: 'hold', linger: true, spec: { activeDeadlineSeconds: 2 } })
    const interim = (await eventually(
      `${name}: FailureTarget`,
      () => getJob(ns, name),
      (j) => conditions(j).includes('FailureTarget')
    )) as V1Job
    await new Promise((r) => setTimeout(r, 2000))
    const stillInterim = await getJob(ns, name)
    expect(conditions(stillInterim)).toEqual(['FailureTarget'])
    for (const job of [interim, stillInterim as V1Job]) {
      expect([isFinished(job), jobStatus(job)]).toEqual([false, 'running'])
    }

    unlabelPods(name, 'job-sweeper.test/linger')
    const failed = await waitForJobCondition(ns, name, 'Failed')
    expect(conditions(failed)).toEqual(['Failed', 'FailureTarget'])
    expect([isFinished(failed), jobStatus(failed)]).toEqual([true, 'failed'])
  })
})

describe('every pod of a Job has its logs saved before the Job is deleted', () => {
  /** The pods of the finished Job `spec`, and the pre phase's run over the release with `inputs`. */
  async function harvest(spec: TestJob, condition: 'Complete' | 'Failed', inputs: Record<string, string>) {
    await createJob(spec)
    const job = await waitForJobCondition(ns, spec.name, condition)
    const pods = (await podsOfJob(ns, job)).sort()
    const logsDir = mkdtempSync(join(tmpdir(), 'job-api-logs-'))
    const run = await runAction({ release, namespace: ns, 'logs-dir': logsDir, ...inputs })
    expect(run.stdout).not.toContain('::error::')
    expect(run.code).toBe(0)
    expect(outputNames(run, 'pruned')).toEqual([spec.name])
    expect(await getJob(ns, spec.name)).toBeUndefined()
    return { job, pods, jobDir: savedFolder(logsDir, ns, spec.name, job.metadata?.uid) }
  }

  test('an Indexed Job with completions 3 (harvest-logs all): one log per pod, each index', async () => {
    const name = `${release}-indexed`
    const spec = { completionMode: 'Indexed' as const, completions: 3, parallelism: 3 }
    const { job, pods, jobDir } = await harvest({ namespace: ns, name, annotations: releaseAnnotations(ns), spec }, 'Complete', { 'harvest-logs': 'all' })
    expect(job.status?.succeeded).toBe(3)
    expect(pods).toHaveLength(3)
    expect(pods.map((p) => p.replace(/-[a-z0-9]+$/, '')).sort()).toEqual([`${name}-0`, `${name}-1`, `${name}-2`])
    expect(readdirSync(jobDir).sort()).toEqual([...pods, 'job.json'].sort())
    for (const pod of pods) expect(readFileSync(join(jobDir, pod, 'main.log'), 'utf8')).toContain('migrate: applying 0042_add_tuples_index')
  })

  test('a Job that failed twice (backoffLimit 1, harvest-logs failed): both failed pods', async () => {
    const name = `${release}-retried`
    const { job, pods, jobDir } = await harvest(
      { namespace: ns, name, annotations: releaseAnnotations(ns), behaviour: 'fail', spec: { backoffLimit: 1 } },
      'Failed',
      { 'harvest-logs': 'failed' }
    )
    expect(job.status?.failed).toBe(2)
    expect(pods).toHaveLength(2)
    expect(readdirSync(jobDir).sort()).toEqual([...pods, 'job.json'].sort())
    for (const pod of pods) expect(readFileSync(join(jobDir, pod, 'main.log'), 'utf8')).toContain('migrate: ERROR: relation "tuples" already exists')
  })
})
