// Cancelled runs, with real signals sent to the bundled action and CLI as GitHub sends them (SIGINT,
// then SIGTERM 7.5 s later) or a terminal's Ctrl-C: the run stops starting work, ends every wait,
// releases its Lease, writes its summary and outputs (the CLI its report) saying it was cancelled
// and what was not done, and exits non-zero well within the grace, without a stack trace. No Job
// is deleted without its logs; the next run does not wait for the cancelled one's Lease; the post
// step does the right thing after a cancelled pre, and after a completed one.
import { existsSync, mkdtempSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CoordinationV1Api, V1MicroTime } from '@kubernetes/client-node'
import { outputNames, runAction, type ActionRun } from './action.ts'
import { runCli, type CliRun } from './bin.ts'
import { createFinishedJobs } from './bench/finished-jobs.ts'
import { batchApi, createJob, getJob, kubeConfig, testCluster } from './cluster/testenv.ts'
import { startFaultProxy } from './faults/proxy.ts'
import { preflightDemo } from './preflight-demo.ts'
import { finishedReleaseJob, release, releaseAnnotations, useScenario } from './scenario.ts'
import { leaseName } from '../src/kube/lease.ts'

const scenario = useScenario('cancel')
const lease = leaseName({ release })

async function leaseExists(namespace: string): Promise<boolean> {
  return kubeConfig()
    .makeApiClient(CoordinationV1Api)
    .readNamespacedLease({ namespace, name: lease })
    .then(() => true)
    .catch((e: { code?: number }) => (e.code === 404 ? false : Promise.reject(e)))
}

/** GitHub's grace between SIGINT and SIGTERM: a cancelled run must have exited well within it. */
const GRACE_MS = 7_500

function expectCancelledCleanly(run: ActionRun | CliRun, signal: string): void {
  expect(run.code).not.toBe(0)
  expect(run.exitedAfterSignalMs).toBeDefined()
  expect(run.exitedAfterSignalMs).toBeLessThan(GRACE_MS - 2_500)
  // No stack trace, nor the launcher's "stopped" line of a run that missed its deadline.
  expect(`${run.stdout}\n${run.stderr}`).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m)
  expect(run.stderr).not.toContain('before the cancelled run had finished')
  expect(`${run.stdout}\n${run.stderr}`).toContain(`the run was cancelled (${signal})`)
}

/** A CLI run on the same scope right after: it takes the Lease at once, as nobody holds it. */
async function nextRunDoesNotWait(ns: string): Promise<void> {
  expect(await leaseExists(ns)).toBe(false)
  const started = Date.now()
  const next = await runCli(['pre', '--release', release, '--namespace', ns, '--on-running', 'delete', '--json'])
  expect({ code: next.code, stderr: next.stderr }).toEqual({ code: 0, stderr: expect.not.stringContaining('waiting for another run') })
  // A Lease left behind would hold it up to 30 s (its duration after the last renewal).
  expect(Date.now() - started).toBeLessThan(20_000)
}

test('action pre, SIGINT while it waits on a running Job: nothing deleted, summary and outputs say cancelled, Lease released, post then does nothing', async () => {
  const ns = scenario.ns
  await finishedReleaseJob(ns, `${release}-seed`)
  await createJob({ namespace: ns, name: `${release}-migrate`, annotations: releaseAnnotations(ns), behaviour: 'hold' })
  const run = await runAction({ release, namespace: ns, 'wait-timeout': '5m' }, { signal: { signal: 'SIGINT', when: 'waiting up to' } })
  expectCancelledCleanly(run, 'SIGINT')
  expect(run.stdout).toMatch(/^::error::.*the run was cancelled \(SIGINT\): 2 Job\(s\) not done/m)
  expect(run.summary).toContain('❌ the run was cancelled (SIGINT): 2 Job(s) not done')
  expect(run.summary).toContain('not seen finished: the run was cancelled')
  expect(run.outputs['pruned-count']).toBe('0')
  expect(outputNames(run, 'kept')).toEqual([`${release}-migrate`, `${release}-pre-upgrade-hook`, `${release}-seed`])
  expect(outputNames(run, 'waited')).toEqual([`${release}-migrate`])
  expect(run.state['pre-phase']).toBeUndefined()
  expect(await getJob(ns, `${release}-seed`)).toBeDefined()
  expect(await getJob(ns, `${release}-migrate`)).toBeDefined()

  // The post step of the cancelled job: the pre phase did not complete, so it does nothing, and says so.
  const post = await runAction({ release, namespace: ns }, { post: run })
  expect(post.code).toBe(0)
  expect(post.stdout).toContain('the main step did not complete a pre phase, so there is nothing to do')
  expect(await getJob(ns, `${release}-migrate`)).toBeDefined()

  await nextRunDoesNotWait(ns)
})

test('action pre, SIGTERM while it prunes with harvest-logs all: every deleted Job has its logs, the rest are reported not done', async () => {
  const ns = scenario.ns
  const { names } = await createFinishedJobs(kubeConfig(), ns, 60, { prefix: `${release}-job`, annotations: releaseAnnotations(ns) })
  const logsDir = mkdtempSync(join(tmpdir(), 'cancel-logs-'))
  const run = await runAction(
    { release, namespace: ns, 'harvest-logs': 'all', 'logs-dir': logsDir, concurrency: '1' },
    { signal: { signal: 'SIGTERM', when: /deleted Job .*\n[\s\S]*deleted Job / } }
  )
  expectCancelledCleanly(run, 'SIGTERM')
  const left = new Set((await batchApi().listNamespacedJob({ namespace: ns })).items.map((j) => j.metadata?.name ?? ''))
  const deleted = names.filter((n) => !left.has(n))
  // Cancelled mid-prune: some deleted, some not.
  expect(deleted.length).toBeGreaterThanOrEqual(2)
  expect(deleted.length).toBeLessThan(names.length)
  // Exactly the deleted ones are reported pruned, and each has its log on disk.
  expect(outputNames(run, 'pruned')).toEqual(deleted.sort())
  const withoutLogs = deleted.filter((n) => !existsSync(join(logsDir, ns, n)) || readdirSync(join(logsDir, ns, n)).length === 0)
  expect(withoutLogs).toEqual([])
  expect(Number(run.outputs['kept-count'])).toBe(names.length - deleted.length + 1) // and the hook
  expect(run.summary).toMatch(new RegExp(`❌ the run was cancelled \\(SIGTERM\\): ${names.length - deleted.length} Job\\(s\\) not done`))
  expect(run.summary).toContain('not attempted: the run was cancelled')
  expect(existsSync(join(logsDir, 'job-sweeper-pre.json'))).toBe(true)
  await nextRunDoesNotWait(ns)
})

test('CLI, Ctrl-C (SIGINT) while it waits: --json says cancelled and what was not done, exit 3, Lease released', async () => {
  const ns = scenario.ns
  await finishedReleaseJob(ns, `${release}-seed`)
  await createJob({ namespace: ns, name: `${release}-migrate`, annotations: releaseAnnotations(ns), behaviour: 'hold' })
  const run = await runCli(['pre', '--release', release, '--namespace', ns, '--wait-timeout', '5m', '--json'], {}, { signal: 'SIGINT', when: 'waiting up to' })
  expectCancelledCleanly(run, 'SIGINT')
  expect(run.code).toBe(3)
  const json = JSON.parse(run.stdout) as { cancelled: string; 'pruned-count': number; errors: string[] }
  expect(json.cancelled).toMatch(/^the run was cancelled \(SIGINT\): 2 Job\(s\) not done/)
  expect(json['pruned-count']).toBe(0)
  expect(await getJob(ns, `${release}-seed`)).toBeDefined()
  await nextRunDoesNotWait(ns)
})

test('CLI text report, Ctrl-C while it waits for a Lease another run holds: stops at once, changed nothing, leaves that Lease alone', async () => {
  const ns = scenario.ns
  await finishedReleaseJob(ns, `${release}-seed`)
  // Another run holds the Lease, renewed just now: a run on the same scope waits up to 30 s for it.
  await kubeConfig()
    .makeApiClient(CoordinationV1Api)
    .createNamespacedLease({
      namespace: ns,
      body: { metadata: { name: lease }, spec: { holderIdentity: 'other-runner-7', leaseDurationSeconds: 30, renewTime: new V1MicroTime() } }
    })
  const run = await runCli(['pre', '--release', release, '--namespace', ns], {}, { signal: 'SIGINT', when: 'waiting for another run' })
  expectCancelledCleanly(run, 'SIGINT')
  expect(run.code).toBe(3)
  const cancelled = `the run was cancelled (SIGINT) while waiting for Lease ${ns}/${lease}, held by other-runner-7; nothing was changed`
  expect(run.stderr).toContain(`job-sweeper: ${cancelled}`)
  // The same with --json: standard output still has the report, saying so.
  const json = await runCli(['pre', '--release', release, '--namespace', ns, '--json'], {}, { signal: 'SIGINT', when: 'waiting for another run' })
  expectCancelledCleanly(json, 'SIGINT')
  expect(JSON.parse(json.stdout)).toMatchObject({ phase: 'pre', cancelled, errors: [cancelled] })
  expect(await getJob(ns, `${release}-seed`)).toBeDefined()
  expect(await leaseExists(ns)).toBe(true) // not this run's to release
})

test('action post with wait-for-jobs, SIGTERM while it waits: the running Job keeps its upper-bound TTL, the Lease is released', async () => {
  const ns = scenario.ns
  await createJob({ namespace: ns, name: `${release}-migrate`, annotations: releaseAnnotations(ns), behaviour: 'hold' })
  const run = await runAction({ phase: 'post', release, namespace: ns, 'wait-for-jobs': '5m' }, { signal: { signal: 'SIGTERM', when: 'waiting up to' } })
  expectCancelledCleanly(run, 'SIGTERM')
  expect(run.summary).toContain(`❌ the run was cancelled (SIGTERM): 1 Job(s) not done (${release}-migrate)`)
  expect(outputNames(run, 'ttl-set')).toEqual([`${release}-migrate`])
  expect((await getJob(ns, `${release}-migrate`))?.spec?.ttlSecondsAfterFinished).toBeGreaterThan(0)
  expect(await leaseExists(ns)).toBe(false)
})

test('post after a completed pre and a cancelled helm upgrade: the upgrade’s new Job gets its TTL as usual', async () => {
  const ns = scenario.ns
  await finishedReleaseJob(ns, `${release}-seed`)
  const pre = await runAction({ release, namespace: ns })
  expect(pre.code).toBe(0)
  expect(pre.state['pre-phase']).toBe('completed')
  // The upgrade created its migration, then was cancelled: the job ends, and GitHub runs post.
  await createJob({ namespace: ns, name: `${release}-migrate`, annotations: releaseAnnotations(ns), behaviour: 'hold' })
  const post = await runAction({ release, namespace: ns, ttl: '1h' }, { post: pre })
  expect(post.code).toBe(0)
  expect(outputNames(post, 'ttl-set')).toContain(`${release}-migrate`)
  expect((await getJob(ns, `${release}-migrate`))?.spec?.ttlSecondsAfterFinished).toBeGreaterThan(0)
})

test('action pre with a manifest, SIGINT while its preflight checks the release: nothing is observed after it (no Job listed, watched or deleted), Lease released', async () => {
  const ns = scenario.ns
  const { install, rendered } = preflightDemo(() => ns)
  await install()
  const migrate = await getJob(ns, `${release}-migrate`)
  expect(migrate).toBeDefined()
  // The preflight's dry runs take a second each here, so the signal comes while they are in flight.
  const proxy = await startFaultProxy(testCluster())
  try {
    proxy.addRule({ query: { dryRun: 'All' }, fault: { kind: 'delay', ms: 1_000 } })
    const run = await runAction(
      { manifest: rendered({ migrationVersion: '2' }), namespace: ns },
      { env: proxy.env(), signal: { signal: 'SIGINT', when: /::group::Preflight: \d+ object/ } }
    )
    expectCancelledCleanly(run, 'SIGINT')
    // Positive control: the preflight had begun its dry runs through the proxy.
    expect(proxy.requests.count({ query: { dryRun: 'All' } })).toBeGreaterThan(0)
    // Observing pre lists the namespace's Jobs (and watches them) first: after the cancellation it never does.
    expect(proxy.requests.count({ method: 'GET', path: `/apis/batch/v1/namespaces/${ns}/jobs` })).toBe(0)
    expect(proxy.requests.count({ method: 'DELETE', path: /\/jobs\// })).toBe(0)
    expect((await getJob(ns, `${release}-migrate`))?.metadata?.uid).toBe(migrate?.metadata?.uid)
    expect(run.state['pre-phase']).toBeUndefined()
  } finally {
    await proxy.close()
  }
  await nextRunDoesNotWait(ns)
})
