// The action on a GitHub Actions runner nobody here wrote: nektos/act in host mode runs the
// workflows of test/act/ against the real cluster, with the real helm. What test/action.ts imitates
// (inputs, outputs, state between main and post, the summary, exit codes, post-if) is the runner's
// work here. Decoys must survive every scenario.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { V1Job } from '@kubernetes/client-node'
import { artifactsIn, buildAct, repository, runAct, stepLog, stepResult, stepSummary, zipEntries, zipEntry, type ActRun } from './act/act.ts'
import { createJob, eventually, getJob, jobCondition, kubeConfig, kubectl, podsOfJob, testCluster, waitForJobCondition } from './cluster/testenv.ts'
import { chart, helmChart, release, releaseAnnotations, useScenario } from './scenario.ts'
import { testNeeding } from './cluster/prerequisites.ts'

// No decoy may get a TTL or job-sweeper's annotations.
const scenario = useScenario('act', async (decoys) => {
  for (const d of decoys) {
    const job = await getJob(d.namespace, d.name)
    expect([d.name, job?.spec?.ttlSecondsAfterFinished, job?.metadata?.labels?.['job-sweeper.io/managed']]).toEqual([d.name, undefined, undefined])
  }
})

let act: string
beforeAll(() => {
  act = buildAct()
}, 20 * 60_000)

const secrets = (): Record<string, string> => ({ KUBECONFIG_FILE: testCluster().kubeconfig })

// The tests that read the artifacts act's server holds need zipinfo and unzip: skipped, and said, where they are missing (required under CI=true).
const zipTest = testNeeding('unzip')

/** A container's log as `kubectl logs` prints it. */
function kubectlLogs(namespace: string, pod: string): string {
  const logs = kubectl('logs', '-n', namespace, pod)
  expect([pod, logs.code, logs.stdout.length > 0]).toEqual([pod, 0, true])
  return logs.stdout
}

/** Nothing secret in act's log: the cluster's token, and the kubeconfig's path (a secret here, so masked). */
function expectNoSecrets(run: ActRun): void {
  const token = kubeConfig().getCurrentUser()?.token ?? ''
  expect(token.length).toBeGreaterThan(8)
  expect([run.log.includes(token), run.log.includes(testCluster().kubeconfig)]).toEqual([false, false])
}

zipTest('pre clears the prior migration Job, helm upgrade goes through, a later step reads the outputs, and the post step sets the TTLs', async () => {
  const { ns } = scenario
  expect(helmChart('install', ns, {}, '--wait', '--wait-for-jobs').code).toBe(0)
  const prior = await getJob(ns, `${release}-migrate`)
  const outputsFile = join(mkdtempSync(join(tmpdir(), 'job-sweeper-act-outputs-')), 'outputs.json')
  const artifacts = mkdtempSync(join(tmpdir(), 'job-sweeper-act-artifacts-'))

  const run = await runAct(act, 'pre-post.yml', { ACTION_DIR: repository, NAMESPACE: ns, CHART: chart, OUTPUTS_FILE: outputsFile }, secrets(), { artifacts })
  const steps = ['check out the action', 'job-sweeper', 'helm upgrade', 'read the outputs'].map((s) => [s, stepResult(run, 'deploy', 'Main', s)])
  const post = stepResult(run, 'deploy', 'Post', 'job-sweeper')
  // On failure: what act said, and the post step's log.
  const said = { stderr: run.code === 0 ? '' : run.stderr, postLog: post === 'success' ? '' : stepLog(run, 'deploy', 'Post', 'job-sweeper') }
  expect({ code: run.code, steps, post, ...said }).toEqual({ code: 0, steps: steps.map(([s]) => [s, 'success']), post: 'success', stderr: '', postLog: '' })
  expectNoSecrets(run)

  // The outputs as a later step read them through steps.sweep.outputs (the step checked pruned itself).
  const outputs = JSON.parse(readFileSync(outputsFile, 'utf8')) as Record<string, string>
  expect(JSON.parse(outputs.pruned)).toEqual([expect.objectContaining({ namespace: ns, name: `${release}-migrate`, status: 'succeeded' })])
  expect(outputs['pruned-count']).toBe('1')
  expect([outputs.kept, outputs['kept-count']]).toEqual(['[]', '0'])
  expect(outputs['report-file']).toMatch(/\/job-sweeper\/logs\/.+\.json$/)
  // upload-logs: pre saved no log (the prior Job succeeded), so it uploaded nothing…
  expect(outputs['logs-artifact']).toBe('')
  expect(stepSummary(run, 'deploy', 'Main', 'job-sweeper')).toContain('No log was saved, so no artifact was uploaded')

  // Each step's GITHUB_STEP_SUMMARY, as act prints it once the step ended.
  expect(stepSummary(run, 'deploy', 'Main', 'job-sweeper')).toContain('**✅ 1 pruned · 0 kept**')
  expect(stepSummary(run, 'deploy', 'Post', 'job-sweeper')).toContain('**✅ 2 TTL set')

  // The upgrade's Jobs, new ones, with the TTLs of their outcomes from the post step.
  const migrate = await waitForJobCondition(ns, `${release}-migrate`, 'Complete')
  expect(migrate.metadata?.uid).not.toBe(prior?.metadata?.uid)
  expect(migrate.spec?.ttlSecondsAfterFinished).toBe(3600)
  expect(migrate.metadata?.annotations).toMatchObject({ 'job-sweeper.io/ttl': '1h', 'job-sweeper.io/failure-grace': '2h' })
  // The workflow run as act describes it (GITHUB_REPOSITORY, GITHUB_RUN_ID, GITHUB_SHA of the checkout).
  // act derives the repository from the clone's remote: owner/name for a GitHub remote, a path for
  // a local clone (CI's clean clone of a local repository gives `/work`), so only its shape is fixed.
  expect(migrate.metadata?.annotations?.['job-sweeper.io/run-url']).toMatch(/^https:\/\/github\.com\/.+\/actions\/runs\/\d+$/)
  expect(migrate.metadata?.annotations?.['job-sweeper.io/commit']).toBe(
    execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repository, encoding: 'utf8' }).trim()
  )
  const seed = await waitForJobCondition(ns, `${release}-seed`, 'Failed')
  expect(seed.spec?.ttlSecondsAfterFinished).toBe(7200)
  // …and the post step uploaded the failed seed Job's logs, its job.json and the post's report file,
  // to act's artifact server, and nothing of pre's.
  expect(stepSummary(run, 'deploy', 'Post', 'job-sweeper')).toContain('Logs uploaded as the artifact [`job-sweeper-logs-deploy-post`](https://github.com/')
  const zip = artifactsIn(artifacts).get('job-sweeper-logs-deploy-post')
  expect([...artifactsIn(artifacts).keys()]).toEqual(['job-sweeper-logs-deploy-post'])
  const seedPod = (await podsOfJob(ns, seed))[0]
  const seedDir = `${ns}/${release}-seed/${seed.metadata?.uid}`
  expect(zipEntries(zip as string)).toEqual([`${seedDir}/${seedPod}/seed.log`, `${seedDir}/job.json`, 'job-sweeper-post.json'].sort())
  expect(zipEntry(zip as string, `${seedDir}/${seedPod}/seed.log`).toString()).toBe(kubectlLogs(ns, seedPod))
  expect(JSON.parse(zipEntry(zip as string, `${seedDir}/job.json`).toString())).toMatchObject({
    name: `${release}-seed`,
    status: 'failed',
    savedBy: { phase: 'post' }
  })
  // The release's hook Job is out of the `jobs` scope (a multiline input): untouched.
  expect((await getJob(ns, `${release}-hook`))?.spec?.ttlSecondsAfterFinished).toBeUndefined()
})

test('a phase that fails fails its step with the error in the log, and the post step then has nothing to do', async () => {
  const { ns } = scenario
  const running = await createJob({ namespace: ns, name: `${release}-migrate`, behaviour: 'hold', annotations: releaseAnnotations(ns) })
  await eventually(
    'the migration Job running',
    () => getJob(ns, `${release}-migrate`),
    (j) => j?.status?.active === 1
  )

  const run = await runAct(act, 'failing.yml', { ACTION_DIR: repository, NAMESPACE: ns }, secrets())
  expect(run.code).not.toBe(0)
  expectNoSecrets(run)
  for (const [job, error] of [
    ['bad-input', "::error::Invalid wait-timeout '3 days': expected a duration"],
    ['running-job', `::error::Job ${ns}/${release}-migrate is still running`]
  ]) {
    expect([job, stepResult(run, job, 'Main', 'job-sweeper')]).toEqual([job, 'failure'])
    expect(stepLog(run, job, 'Main', 'job-sweeper')).toContain(error)
    expect(stepLog(run, job, 'Post', 'job-sweeper')).toContain('the main step did not complete a pre phase, so there is nothing to do')
    expect(run.lines.find((l) => l.jobID === job && l.jobResult)?.jobResult).toBe('failure')
  }
  expect(stepSummary(run, 'running-job', 'Main', 'job-sweeper')).toContain('nothing was deleted')
  expect(stepResult(run, 'running-job', 'Main', 'never runs')).toBeUndefined()
  expect((await getJob(ns, `${release}-migrate`))?.metadata?.uid).toBe(running.metadata?.uid)
})

zipTest(
  'the upgrade step fails on its failed migration: the post step runs all the same (post-if: always()), keeps the failed Job for failure-grace and fails',
  async () => {
    const { ns } = scenario
    expect(helmChart('install', ns, { hookJob: false }, '--wait', '--wait-for-jobs').code).toBe(0)

    const artifacts = mkdtempSync(join(tmpdir(), 'job-sweeper-act-artifacts-'))
    const run = await runAct(act, 'upgrade-fails.yml', { ACTION_DIR: repository, NAMESPACE: ns, CHART: chart }, secrets(), { artifacts })
    expect(run.code).not.toBe(0)
    const steps = ['job-sweeper', 'helm upgrade', 'never runs'].map((s) => [s, stepResult(run, 'deploy', 'Main', s)])
    expect(steps).toEqual([
      ['job-sweeper', 'success'],
      ['helm upgrade', 'failure'],
      ['never runs', undefined]
    ])
    expect(stepLog(run, 'deploy', 'Main', 'helm upgrade')).toContain('Error: UPGRADE FAILED')
    // The post step runs after the failed upgrade, waits for the migration Job, and fails on its failure.
    const post = stepLog(run, 'deploy', 'Post', 'job-sweeper')
    expect(stepResult(run, 'deploy', 'Post', 'job-sweeper')).toBe('failure')
    expect(post).toContain(`Job ${ns}/${release}-migrate (failed): ttlSecondsAfterFinished 10800`)
    expect(post).toMatch(new RegExp(`::error::Job ${ns}/${release}-migrate failed: BackoffLimitExceeded .*; kept for failure-grace 3h`))
    const migrate = await getJob(ns, `${release}-migrate`)
    expect([jobCondition(migrate), migrate?.spec?.ttlSecondsAfterFinished]).toEqual(['Failed', 10800])
    // The failed post step uploaded the failed migration's logs all the same (upload-logs).
    const zip = artifactsIn(artifacts).get('job-sweeper-logs-deploy-post') as string
    const pod = (await podsOfJob(ns, migrate as V1Job))[0]
    const migrateDir = `${ns}/${release}-migrate/${migrate?.metadata?.uid}`
    expect(zipEntries(zip)).toEqual([`${migrateDir}/${pod}/migrate.log`, `${migrateDir}/job.json`, 'job-sweeper-post.json'].sort())
    expect(zipEntry(zip, `${migrateDir}/${pod}/migrate.log`).toString()).toBe(kubectlLogs(ns, pod))
  }
)

zipTest(
  'a run cancelled (SIGINT, as a runner cancels) while post waits: it stops, and uploads the logs it saved before (upload-logs)',
  async () => {
    const { ns } = scenario
    await createJob({ namespace: ns, name: `${release}-seed`, behaviour: 'fail', annotations: releaseAnnotations(ns) })
    const running = await createJob({ namespace: ns, name: `${release}-migrate`, behaviour: 'hold', annotations: releaseAnnotations(ns) })
    await waitForJobCondition(ns, `${release}-seed`, 'Failed')
    await eventually(
      'the migration Job running',
      () => getJob(ns, `${release}-migrate`),
      (j) => j?.status?.active === 1
    )
    const artifacts = mkdtempSync(join(tmpdir(), 'job-sweeper-act-artifacts-'))
    const logsDir = mkdtempSync(join(tmpdir(), 'job-sweeper-act-logs-'))
    const outputsFile = join(mkdtempSync(join(tmpdir(), 'job-sweeper-act-outputs-')), 'outputs.json')

    const run = await runAct(act, 'cancelled.yml', { ACTION_DIR: repository, NAMESPACE: ns, LOGS_DIR: logsDir, OUTPUTS_FILE: outputsFile }, secrets(), {
      artifacts
    })
    const log = stepLog(run, 'cancelled', 'Main', 'job-sweeper')
    expect([stepResult(run, 'cancelled', 'Main', 'job-sweeper'), stepResult(run, 'cancelled', 'Main', 'read the outputs')]).toEqual(['failure', 'success'])
    expect(log).toContain('the run was cancelled (SIGINT)')
    expectNoSecrets(run)

    // Both Jobs got their TTLs before the wait (the running one the longer, failure-grace: its outcome
    // is not known yet); the running one is still there, running.
    expect((await getJob(ns, `${release}-seed`))?.spec?.ttlSecondsAfterFinished).toBe(86400)
    const migrate = await getJob(ns, `${release}-migrate`)
    expect([migrate?.metadata?.uid, migrate?.status?.active, migrate?.spec?.ttlSecondsAfterFinished]).toEqual([running.metadata?.uid, 1, 86400])

    // What it saved before the cancellation is in the artifact, byte for byte as on the runner's disk.
    const outputs = JSON.parse(readFileSync(outputsFile, 'utf8')) as Record<string, string>
    expect(outputs['logs-artifact']).toBe('job-sweeper-logs-cancelled-post')
    expect(outputs['logs-artifact-url']).toMatch(/\/actions\/runs\/\d+\/artifacts\/\d+$/)
    const zip = artifactsIn(artifacts).get('job-sweeper-logs-cancelled-post') as string
    const seed = (await getJob(ns, `${release}-seed`)) as V1Job
    const pod = (await podsOfJob(ns, seed))[0]
    const seedDir = `${ns}/${release}-seed/${seed.metadata?.uid}`
    const keys = [`${seedDir}/${pod}/main.log`, `${seedDir}/job.json`]
    expect(zipEntries(zip)).toEqual([...keys, 'job-sweeper-post.json'].sort())
    for (const key of keys) expect([key, zipEntry(zip, key).equals(readFileSync(join(logsDir, key)))]).toEqual([key, true])
    expect(zipEntry(zip, `${seedDir}/${pod}/main.log`).toString()).toBe(kubectlLogs(ns, pod))
    const report = JSON.parse(zipEntry(zip, 'job-sweeper-post.json').toString()) as { errors: string[] }
    expect(report.errors.join('\n')).toContain('the run was cancelled (SIGINT)')
  },
  150_000
)
