// The post and sweep phases end to end, through the bundle as the runner runs it, on the real
// cluster whose TTL controller does the deleting. Decoys must survive every scenario.
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { outputNames, runAction, WORKFLOW_RUN_ENV, WORKFLOW_RUN_URL } from './action.ts'
import {
  batchApi,
  createJob,
  escapeRegExp,
  eventually,
  getJob,
  jobManifest,
  missingImage,
  testOnRealNode,
  waitForJobCondition,
  type TestJob
} from './cluster/testenv.ts'
import { finishedReleaseJob, helmChart, release, releaseAnnotations, useScenario } from './scenario.ts'
import { savedFolder } from './saved-folder.ts'

// No decoy may get a TTL or job-sweeper's annotations either.
const scenario = useScenario('post', async (decoys) => {
  for (const d of decoys) {
    const job = await getJob(d.namespace, d.name)
    expect([d.name, job?.spec?.ttlSecondsAfterFinished, job?.metadata?.labels?.['job-sweeper.io/managed']]).toEqual([d.name, undefined, undefined])
  }
})
let ns: string
let otherNs: string
beforeEach(() => {
  ;({ ns, otherNs } = scenario)
})

test('one step: main prunes before the upgrade, post gives the new Jobs TTLs by outcome, and the TTL controller acts on them', async () => {
  expect(helmChart('install', ns, { hookJob: false }, '--wait', '--wait-for-jobs').code).toBe(0)
  const inputs = { release, namespace: ns, ttl: '4s', 'failure-grace': '1h' }
  const main = await runAction(inputs, { env: WORKFLOW_RUN_ENV })
  expect(main.code).toBe(0)
  expect(outputNames(main, 'pruned')).toEqual([`${release}-migrate`])

  const upgrade = helmChart('upgrade', ns, { hookJob: false, migrationVersion: '2', 'seedJob.enabled': true, 'seedJob.fail': true })
  expect(upgrade.stderr).toBe('')
  await waitForJobCondition(ns, `${release}-migrate`, 'Complete')
  await waitForJobCondition(ns, `${release}-seed`, 'Failed')

  const post = await runAction(inputs, { post: main, env: WORKFLOW_RUN_ENV })
  expect(post.stdout).not.toContain('::error::')
  expect(post.code).toBe(0)
  expect(outputNames(post, 'ttl-set')).toEqual([`${release}-migrate`, `${release}-seed`])
  expect(post.outputs['ttl-set-count']).toBe('2')
  expect(post.summary).toContain('**✅ 2 TTL set · 1 kept**') // kept: the release's hook decoy
  const seed = await getJob(ns, `${release}-seed`)
  expect(seed?.spec?.ttlSecondsAfterFinished).toBe(3600)
  expect(seed?.metadata?.annotations).toMatchObject({
    'job-sweeper.io/ttl': '4s',
    'job-sweeper.io/failure-grace': '1h',
    'job-sweeper.io/run-url': WORKFLOW_RUN_URL,
    'job-sweeper.io/commit': WORKFLOW_RUN_ENV.GITHUB_SHA
  })
  expect(seed?.metadata?.labels?.['job-sweeper.io/managed']).toBe('true')

  // The real TTL-after-finished controller deletes the succeeded Job; the failed one stays.
  await eventually(
    'the succeeded Job to be deleted by its TTL',
    () => getJob(ns, `${release}-migrate`),
    (j) => j === undefined,
    60_000
  )
  expect((await getJob(ns, `${release}-seed`))?.metadata?.uid).toBe(seed?.metadata?.uid)
})

test('two steps (phase: pre, then phase: post): the pre step’s own post step leaves the post phase to the explicit step that ran it (its TTLs stay, no second summary); without that step it runs post itself', async () => {
  expect(helmChart('install', ns, { hookJob: false }, '--wait', '--wait-for-jobs').code).toBe(0)
  const preInputs = { phase: 'pre', release, namespace: ns }
  const pre = await runAction(preInputs)
  expect(pre.code).toBe(0)
  expect(pre.state).toMatchObject({ 'pre-phase': 'completed' }) // the runner will run this step's post at the job's end
  expect(helmChart('upgrade', ns, { hookJob: false, migrationVersion: '2' }).code).toBe(0)
  await waitForJobCondition(ns, `${release}-migrate`, 'Complete')

  const explicit = await runAction({ phase: 'post', release, namespace: ns, ttl: '2h' })
  expect(explicit.code).toBe(0)
  expect((await getJob(ns, `${release}-migrate`))?.spec?.ttlSecondsAfterFinished).toBe(7200)
  const exported = Object.keys(explicit.exported).filter((k) => k.startsWith('JOB_SWEEPER_POST_RAN_'))
  expect(exported).toHaveLength(1)

  // The job's end: the pre step's post step, with the pre step's inputs (ttl 1h by default), and what the explicit step exported.
  const atEnd = await runAction(preInputs, { post: pre, env: explicit.exported })
  expect(atEnd.code).toBe(0)
  expect(atEnd.stdout).toContain('a phase: post step of this job ran the post phase for the same scope already')
  expect([atEnd.summary, atEnd.outputs['ttl-set-count']]).toEqual(['', undefined])
  expect((await getJob(ns, `${release}-migrate`))?.spec?.ttlSecondsAfterFinished).toBe(7200)

  // Control: a job without the explicit post step (or one whose post step never ran): the pre step's post step runs post.
  const alone = await runAction(preInputs, { post: pre })
  expect(alone.code).toBe(0)
  expect(alone.outputs['ttl-set-count']).toBe('1')
  expect((await getJob(ns, `${release}-migrate`))?.spec?.ttlSecondsAfterFinished).toBe(3600)
})
test('the post step does nothing when the main step did not complete the pre phase', async () => {
  const main = await runAction({ release, namespace: ns, 'wait-timeout': 'soon' })
  expect(main.code).toBe(1)
  await finishedReleaseJob(ns, `${release}-migrate`)
  const post = await runAction({ release, namespace: ns }, { post: main })
  expect(post.code).toBe(0)
  expect(post.stdout).toContain('the main step did not complete a pre phase, so there is nothing to do')
  expect((await getJob(ns, `${release}-migrate`))?.spec?.ttlSecondsAfterFinished).toBeUndefined()
})

test('wait-for-jobs with a failing migration: the step fails, its logs are saved, and the Job is kept for failure-grace', async () => {
  // Runs 15 s: still running when post plans, however slowly the machine starts it.
  const install = helmChart('install', ns, { hookJob: false, failMigration: true, migrationRunFor: '15s' })
  expect(install.code).toBe(0)
  await eventually(
    'migration running',
    () => getJob(ns, `${release}-migrate`),
    (j) => j?.status?.active === 1
  )
  const logsDir = mkdtempSync(join(tmpdir(), 'post-logs-'))
  const run = await runAction({ phase: 'post', release, namespace: ns, 'wait-for-jobs': '2m', 'failure-grace': '2d', 'logs-dir': logsDir })
  expect(run.code).toBe(1)
  // Why, in the error line: the Job controller's reason and the container's exit code.
  expect(run.stdout).toMatch(
    new RegExp(
      `::error::Job ${ns}/${release}-migrate failed: BackoffLimitExceeded .*: container migrate exit code [1-9]\\d*; kept for failure-grace 2d so it can be inspected`
    )
  )
  expect(outputNames(run, 'waited')).toEqual([`${release}-migrate`])
  const job = await getJob(ns, `${release}-migrate`)
  expect(job?.spec?.ttlSecondsAfterFinished).toBe(172800)
  const jobDir = savedFolder(logsDir, ns, `${release}-migrate`, job?.metadata?.uid)
  // One pod's folder, and job.json beside it, in the Job's uid's folder.
  const [pod] = readdirSync(jobDir).filter((f) => f !== 'job.json')
  expect(readdirSync(jobDir).sort()).toEqual([pod, 'job.json'].sort())
  expect(existsSync(join(jobDir, pod, 'migrate.log'))).toBe(true)
  expect(run.summary).toContain(`Last lines of failed Job ${release}-migrate`)
  expect(run.summary).toContain('| failed |')
  expect(run.summary).toContain(
    `**❌ 1 failed: Job ${ns}/${release}-migrate failed: BackoffLimitExceeded (its pods failed more often than backoffLimit allows)`
  )
  // Its row: waited, then given its TTL, and where its log is, relative to logs-dir.
  expect(run.summary).toMatch(
    new RegExp(`\\| waited [^|]+, then TTL set \\| .* \\| <code>${ns}/${release}-migrate/${job?.metadata?.uid}/${pod}/migrate.log</code> \\|`)
  )
})

test('a Job that finished before the post phase: its TTL counts from its finish time', async () => {
  const annotations = releaseAnnotations(ns)
  await createJob({ namespace: ns, name: `${release}-early`, annotations })
  await createJob({ namespace: ns, name: `${release}-recent`, annotations, behaviour: 'hold' })
  await waitForJobCondition(ns, `${release}-early`, 'Complete')
  await sleep(5000)
  const run = await runAction({ phase: 'post', release, namespace: ns, ttl: '3s', 'failure-grace': '1h' })
  expect(run.code).toBe(0)
  // The whole ttl is the TTL: the controller measures it from the finish time, which has passed.
  expect(run.summary).toMatch(
    new RegExp(`\\| ${release}-early \\| succeeded \\| TTL set \\| \\d\\d:\\d\\d:\\d\\d UTC \\(\\d+s ago\\) \\| 3s \\(expired \\d+s ago\\) \\|`)
  )
  expect(run.summary).toMatch(new RegExp(`\\| ${release}-recent \\| running \\| TTL set \\| still running \\(\\d+s\\) \\| 1h after it finishes \\|`))
  await eventually(
    'the already-expired Job to be deleted',
    () => getJob(ns, `${release}-early`),
    (j) => j === undefined,
    30_000
  )
  expect((await getJob(ns, `${release}-recent`))?.spec?.ttlSecondsAfterFinished).toBe(3600) // the upper bound
})

test('a Job still running after wait-for-jobs keeps the upper-bound TTL, with a warning', async () => {
  await createJob({ namespace: ns, name: `${release}-slow`, annotations: releaseAnnotations(ns), behaviour: 'hold' })
  await eventually(
    'slow Job running',
    () => getJob(ns, `${release}-slow`),
    (j) => j?.status?.active === 1
  )
  const run = await runAction({ phase: 'post', release, namespace: ns, 'wait-for-jobs': '2s', ttl: '10m', 'failure-grace': '2h' })
  expect(run.code).toBe(0)
  expect(run.stdout).toContain(`::warning::Job ${ns}/${release}-slow was still running after wait-for-jobs 2s; it keeps the upper-bound TTL`)
  expect(outputNames(run, 'waited')).toEqual([`${release}-slow`])
  expect((await getJob(ns, `${release}-slow`))?.spec?.ttlSecondsAfterFinished).toBe(7200)
})

// The pull fails on the real node: a tag its registry does not have.
testOnRealNode('wait-for-jobs on a new Job that never starts: the step fails well before the timeout, saying why; the other wait goes on', async () => {
  const annotations = releaseAnnotations(ns)
  await createJob({ namespace: ns, name: `${release}-migrate`, annotations, behaviour: 'image-pull-backoff', image: missingImage('app:1.2.4') })
  await createJob({ namespace: ns, name: `${release}-seed`, annotations, runFor: '45s' }) // runs, and is waited for
  await eventually(
    'seed running',
    () => getJob(ns, `${release}-seed`),
    (j) => j?.status?.active === 1
  )
  const started = Date.now()
  // stuck-after 25s: the migration is young at the plan (waited on) however slowly the run starts,
  // and stuck while the seed still runs.
  const logsDir = mkdtempSync(join(tmpdir(), 'post-stuck-'))
  const run = await runAction({
    phase: 'post',
    release,
    namespace: ns,
    'wait-for-jobs': '3m',
    'stuck-after': '25s',
    ttl: '10m',
    'failure-grace': '2h',
    'logs-dir': logsDir
  })
  expect(Date.now() - started).toBeLessThan(120_000) // well under wait-for-jobs 3m
  expect(run.code).toBe(1)
  expect(run.stdout).toMatch(
    new RegExp(
      `::error::Job ${ns}/${release}-migrate never started: (ImagePullBackOff|ErrImagePull) \\(${escapeRegExp(missingImage('app:1.2.4'))}(: not found)?\\); Events: pod ${release}-migrate-\\S+ Failed: Failed to pull image .*: no longer waited for after \\d+s of wait-for-jobs 3m; it keeps the upper-bound TTL`
    )
  )
  expect(outputNames(run, 'waited')).toEqual([`${release}-migrate`, `${release}-seed`])
  const rows = JSON.parse(run.outputs['ttl-set']) as { name: string; status: string; reason: string }[]
  expect(rows.map((r) => [r.name, r.status])).toEqual([
    [`${release}-migrate`, 'stuck'],
    [`${release}-seed`, 'succeeded']
  ])
  // The seed's wait went on after the migration was given up: it got its exact TTL.
  expect((await getJob(ns, `${release}-seed`))?.spec?.ttlSecondsAfterFinished).toBe(600)
  expect((await getJob(ns, `${release}-migrate`))?.spec?.ttlSecondsAfterFinished).toBe(7200)
  expect(run.summary).toMatch(new RegExp(`^\\| ${release}-migrate \\| stuck \\| waited [^|]+, then TTL set \\| never started \\(\\d+s\\) \\|`, 'm'))
  // The real kubelet's Event says why the pull failed (its message is cut, the whole one is in job.json).
  // What there is of its record was saved before the TTL: why it never started, its Events, and a
  // note in place of the log of the container that never ran; the seed succeeded, so has none.
  expectStuckRecord(logsDir, `${release}-migrate`, 'Image')
  expect(existsSync(join(logsDir, ns, `${release}-seed`))).toBe(false)
})

/** The record post saved of a stuck Job: job.json saying why, and a never-ran note for its container. */
function expectStuckRecord(logsDir: string, job: string, why: string): void {
  const file = JSON.parse(readFileSync(join(savedFolder(logsDir, ns, job), 'job.json'), 'utf8')) as {
    status: string
    failureReason?: string
    neverRan: string[]
    savedBy: { phase: string }
  }
  expect([file.status, file.savedBy.phase, file.failureReason]).toEqual(['stuck', 'post', expect.stringContaining(why)])
  expect(file.neverRan).toEqual([expect.stringMatching(/never ran|waiting|Pending/)])
  const pods = readdirSync(savedFolder(logsDir, ns, job)).filter((f) => f !== 'job.json')
  expect(pods).toHaveLength(1)
  expect(readdirSync(join(savedFolder(logsDir, ns, job), pods[0])).some((f) => f.endsWith('.never-ran.txt'))).toBe(true)
}

test('wait-for-jobs with fail-on-job-failure false: a Job already stuck when post begins is a warning, and is not waited for', async () => {
  await createJob({ namespace: ns, name: `${release}-migrate`, annotations: releaseAnnotations(ns), behaviour: 'unschedulable' })
  await sleep(3000)
  const started = Date.now()
  const logsDir = mkdtempSync(join(tmpdir(), 'post-stuck-'))
  const run = await runAction({
    phase: 'post',
    release,
    namespace: ns,
    'wait-for-jobs': '3m',
    'stuck-after': '2s',
    'fail-on-job-failure': 'false',
    'logs-dir': logsDir
  })
  expect(Date.now() - started).toBeLessThan(60_000)
  expect(run.code).toBe(0)
  expect(run.stdout).toMatch(
    new RegExp(
      `::warning::Job ${ns}/${release}-migrate never started: 0/\\d nodes are available: 1 node\\(s\\) didn't match Pod's node affinity/selector.*: not waited for; it keeps the upper-bound TTL \\(fail-on-job-failure is false\\)`
    )
  )
  expect(outputNames(run, 'waited')).toEqual([])
  expectStuckRecord(logsDir, `${release}-migrate`, "didn't match Pod's node affinity/selector")
})

test('keep-last 1: post gives the newest revision no TTL (even one it had), and the older one its ttl, which the TTL controller acts on', async () => {
  const annotations = releaseAnnotations(ns)
  await createJob({ namespace: ns, name: `${release}-migrate-1`, annotations })
  await waitForJobCondition(ns, `${release}-migrate-1`, 'Complete')
  await sleep(1000) // keep-last ranks by creation time
  await createJob({ namespace: ns, name: `${release}-migrate-2`, annotations, ttlSecondsAfterFinished: 3600 })
  await waitForJobCondition(ns, `${release}-migrate-2`, 'Complete')

  const run = await runAction({ phase: 'post', release, namespace: ns, ttl: '2s', 'keep-last': '1' })
  expect(run.code).toBe(0)
  expect(outputNames(run, 'ttl-set')).toEqual([`${release}-migrate-1`, `${release}-migrate-2`])
  expect(run.summary).toContain(`the newest of group ${release}-migrate (keep-last 1): no TTL; ttl 2s applies once it is older`)
  const newest = await getJob(ns, `${release}-migrate-2`)
  expect(newest?.spec?.ttlSecondsAfterFinished).toBeUndefined()
  expect(newest?.metadata?.annotations?.['job-sweeper.io/ttl']).toBe('2s') // for a later post or sweep
  await eventually(
    'the older revision to be deleted by its TTL',
    () => getJob(ns, `${release}-migrate-1`),
    (j) => j === undefined,
    30_000
  )
  expect((await getJob(ns, `${release}-migrate-2`))?.metadata?.uid).toBe(newest?.metadata?.uid)
})

describe('sweep', () => {
  async function seed(): Promise<void> {
    const label = { 'sweep-test': 'true' }
    const seeds: TestJob[] = [
      { namespace: ns, name: 'a-succeeded-ttl-2s', labels: label, annotations: { 'job-sweeper.io/ttl': '2s' } },
      { namespace: ns, name: 'b-succeeded-ttl-1h', labels: label, annotations: { 'job-sweeper.io/ttl': '1h' } },
      { namespace: ns, name: 'c-failed-grace-2s', labels: label, behaviour: 'fail', annotations: { 'job-sweeper.io/failure-grace': '2s' } },
      { namespace: ns, name: 'd-failed-no-annotation', labels: label, behaviour: 'fail' },
      { namespace: ns, name: 'e-succeeded-no-annotation', labels: label },
      { namespace: otherNs, name: 'f-other-namespace-ttl-2s', labels: label, annotations: { 'job-sweeper.io/ttl': '2s' } },
      { namespace: ns, name: 'g-running', labels: label, behaviour: 'hold', annotations: { 'job-sweeper.io/ttl': '2s' } },
      { namespace: ns, name: 'h-hook-ttl-2s', labels: label, annotations: { 'job-sweeper.io/ttl': '2s', 'helm.sh/hook': 'post-upgrade' } },
      { namespace: ns, name: 'i-no-label-ttl-2s', annotations: { 'job-sweeper.io/ttl': '2s' } }
    ]
    for (const s of seeds) await createJob(s)
    for (const s of seeds.filter((s) => s.behaviour !== 'hold')) await waitForJobCondition(s.namespace, s.name, s.behaviour === 'fail' ? 'Failed' : 'Complete')
    await sleep(3000) // the 2s retentions expire
  }

  const remaining = async (): Promise<string[]> => {
    const names: string[] = []
    for (const n of [ns, otherNs]) {
      names.push(...(await batchApi().listNamespacedJob({ namespace: n, labelSelector: 'sweep-test=true' })).items.map((j) => `${j.metadata?.uid}`))
    }
    return names.sort()
  }

  test('deletes exactly the expired Jobs across the listed namespaces; a dry run first changes nothing', async () => {
    await seed()
    const inputs = { phase: 'sweep', namespace: `${ns},${otherNs}`, selector: 'sweep-test=true', ttl: '1h', 'failure-grace': '1h' }
    const before = await remaining()

    const dry = await runAction({ ...inputs, 'dry-run': 'true' })
    expect(dry.code).toBe(0)
    expect(await remaining()).toEqual(before)
    expect(dry.summary).toContain('DRY RUN — nothing was changed')
    expect(outputNames(dry, 'pruned')).toEqual(['a-succeeded-ttl-2s', 'c-failed-grace-2s', 'f-other-namespace-ttl-2s'])

    const run = await runAction(inputs)
    expect(run.stdout).not.toContain('::error::')
    expect(run.code).toBe(0)
    expect(outputNames(run, 'pruned')).toEqual(['a-succeeded-ttl-2s', 'c-failed-grace-2s', 'f-other-namespace-ttl-2s'])
    expect(outputNames(run, 'kept')).toEqual(['b-succeeded-ttl-1h', 'd-failed-no-annotation', 'e-succeeded-no-annotation', 'g-running', 'h-hook-ttl-2s'])
    for (const gone of ['a-succeeded-ttl-2s', 'c-failed-grace-2s']) expect(await getJob(ns, gone)).toBeUndefined()
    expect(await getJob(otherNs, 'f-other-namespace-ttl-2s')).toBeUndefined()
    expect(await getJob(ns, 'i-no-label-ttl-2s')).toBeDefined()
    expect(run.summary).toMatch(/\| b-succeeded-ttl-1h \| .* \| 1h \(59m\d+s left\) \|/)
    expect(run.summary).toContain('## job-sweeper: sweep phase in namespaces')
  })

  test("keep-last 2: the 2 newest of each group (per-revision Jobs of a release, a CronJob's Jobs) stay though their ttl expired; the last failure stays for failure-grace", async () => {
    const label = { 'keep-test': 'true' }
    const annotations = releaseAnnotations(ns)
    const cronJob = await batchApi().createNamespacedCronJob({
      namespace: ns,
      body: {
        metadata: { name: 'nightly' },
        spec: {
          schedule: '0 0 1 1 *',
          suspend: true,
          jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'x' }] } } } }
        }
      }
    })
    const owner = { apiVersion: 'batch/v1', kind: 'CronJob', name: 'nightly', uid: cronJob.metadata?.uid ?? '', controller: true }
    const seeds: (TestJob & { cron?: boolean })[] = [
      ...[1, 2, 3, 4].map((i) => ({ namespace: ns, name: `${release}-migrate-${i}`, labels: label, annotations })),
      { namespace: ns, name: `${release}-migrate-5`, labels: label, annotations, behaviour: 'fail' as const },
      ...[100, 200, 300].map((i) => ({ namespace: ns, name: `nightly-${i}`, labels: label, cron: true })),
      { namespace: ns, name: 'loner-1', labels: label } // in no group: its ttl alone
    ]
    // One at a time, a second apart: keep-last ranks by creation time.
    for (const { cron, ...seed } of seeds) {
      const body = jobManifest(seed)
      if (cron) body.metadata = { ...body.metadata, ownerReferences: [owner] }
      await batchApi().createNamespacedJob({ namespace: ns, body })
      await sleep(1000)
    }
    for (const s of seeds) await waitForJobCondition(s.namespace, s.name, s.behaviour === 'fail' ? 'Failed' : 'Complete')
    await sleep(2000) // the 1s ttl expires for all of them

    const run = await runAction({ phase: 'sweep', namespace: ns, selector: 'keep-test=true', ttl: '1s', 'failure-grace': '1h', 'keep-last': '2' })
    expect(run.stdout).not.toContain('::error::')
    expect(run.code).toBe(0)
    const pruned = [`${release}-migrate-1`, `${release}-migrate-2`, 'loner-1', 'nightly-100']
    const kept = [`${release}-migrate-3`, `${release}-migrate-4`, `${release}-migrate-5`, 'nightly-200', 'nightly-300']
    expect(outputNames(run, 'pruned')).toEqual(pruned)
    expect(outputNames(run, 'kept')).toEqual(kept)
    for (const name of pruned) expect([name, await getJob(ns, name)]).toEqual([name, undefined])
    for (const name of kept) expect([name, (await getJob(ns, name))?.metadata?.name]).toEqual([name, name])
    expect(run.summary).toContain(`one of the 2 newest of group ${release}-migrate (keep-last 2)`)
    expect(run.summary).toContain('one of the 2 newest of group CronJob nightly (keep-last 2)')
    expect(run.summary).toContain(`the last failure of group ${release}-migrate; failed`)
  })
})
