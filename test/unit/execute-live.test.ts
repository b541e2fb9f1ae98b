// Live output while pre and post wait on running Jobs (src/execute/live.ts), over the fake client
// and clock: each waited Job's container logs followed into the run's log, lines prefixed
// job/pod/container, capped at max-log-bytes, masked; stream-logs: false prints none; a follow that
// fails is a warning and holds nothing up; a cancelled run ends every follow; a failed Job's reason.
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node'
import { MAX_FOLLOWED_JOBS } from '../../src/execute/live.ts'
import { RunCancelled } from '../../src/kube/retry.ts'
import { secretMasker } from '../../src/text/secrets.ts'
import { executorOf, type Executor } from '../fake/executor.ts'
import { observeFailures } from '../../src/observe/observe.ts'
import { planPost } from '../../src/plan/retention.ts'
import { apiError, fail, slow } from '../fake/jobs-client.ts'
import { newJob } from './jobs.ts'

const preInputs = { release: 'app', 'harvest-logs': 'none', 'on-running': 'wait', 'wait-timeout': '10m' }
const postInputs = { phase: 'post', release: 'app', 'harvest-logs': 'none', 'wait-for-jobs': '10m' }
const migrate = newJob({ name: 'app-migrate', release: 'app', status: 'running' })
const seed = newJob({ name: 'app-seed', release: 'app', status: 'running' })

const runningMain: V1ContainerStatus = { name: 'main', image: 'x', imageID: '', ready: true, restartCount: 0, state: { running: { startedAt: new Date() } } }
const pod = (name: string, statuses: V1ContainerStatus[] = [runningMain], phase = 'Running'): V1Pod => ({
  metadata: { name, creationTimestamp: new Date() },
  spec: { containers: statuses.map((s) => ({ name: s.name, image: 'x' })) },
  status: { phase, containerStatuses: statuses }
})

/** The log line index of the first line containing `text` (-1: none). */
const at = (ex: Executor, text: string): number => ex.log.findIndex((l) => l.includes(text))

test('pre streams a waited Job’s log into the run’s log while it runs, each line prefixed namespace/job/pod/container', async () => {
  const ex = executorOf(preInputs, [migrate])
  ex.client.addPod(migrate, pod('app-migrate-x1'), { main: 'migrating 1/3\nmigrating 2/3\n' })
  void ex.clock.sleep(40_000).then(() => ex.client.appendLog('prod', 'app-migrate-x1', 'main', 'migrating 3/3\n'))
  void ex.clock.sleep(90_000).then(() => {
    ex.client.endLog('prod', 'app-migrate-x1', 'main')
    ex.client.finish('prod', 'app-migrate', 'Complete')
  })
  const result = await ex.execute()
  expect(result.errors).toEqual([])
  expect(result.warnings).toEqual([])
  const finished = at(ex, 'Job prod/app-migrate finished: succeeded')
  expect(finished).toBeGreaterThan(0)
  for (const line of ['migrating 1/3', 'migrating 2/3', 'migrating 3/3']) {
    expect(ex.log).toContain(`prod/app-migrate/app-migrate-x1/main | ${line}`)
    expect(at(ex, line)).toBeLessThan(finished)
  }
  // One follow per container, opened once the pod list showed it running; none left open.
  expect(ex.client.callsOf('followLog')).toEqual([['prod/app-migrate-x1/main', ex.settings.maxLogBytes]])
  expect(ex.client.openFollows).toBe(0)
})

test('post with wait-for-jobs streams every waited Job, interleaved lines told apart by their prefixes', async () => {
  const ex = executorOf(postInputs, [migrate, seed])
  ex.client.addPod(migrate, pod('app-migrate-x1'), { main: 'm1\n' })
  ex.client.addPod(seed, pod('app-seed-y1'), { main: 's1\n' })
  void ex.clock.sleep(20_000).then(() => {
    ex.client.appendLog('prod', 'app-seed-y1', 'main', 's2\n')
    ex.client.appendLog('prod', 'app-migrate-x1', 'main', 'm2\n')
  })
  void ex.clock.sleep(60_000).then(() => {
    ex.client.finish('prod', 'app-migrate', 'Complete')
    ex.client.finish('prod', 'app-seed', 'Complete')
  })
  const result = await ex.execute()
  expect(result.errors).toEqual([])
  const streamed = ex.log.filter((l) => l.includes(' | '))
  expect(streamed).toEqual(
    expect.arrayContaining([
      'prod/app-migrate/app-migrate-x1/main | m1',
      'prod/app-migrate/app-migrate-x1/main | m2',
      'prod/app-seed/app-seed-y1/main | s1',
      'prod/app-seed/app-seed-y1/main | s2'
    ])
  )
  expect(streamed).toHaveLength(4)
})

test('stream-logs: false prints no log line and opens no follow; the wait and delete are the same', async () => {
  const ex = executorOf({ ...preInputs, 'stream-logs': 'false' }, [migrate])
  ex.client.addPod(migrate, pod('app-migrate-x1'), { main: 'migrating 1/3\n' })
  void ex.clock.sleep(90_000).then(() => ex.client.finish('prod', 'app-migrate', 'Complete'))
  const result = await ex.execute()
  expect(result.errors).toEqual([])
  expect(ex.log.some((l) => l.includes('migrating'))).toBe(false)
  expect(ex.client.callsOf('followLog')).toEqual([])
  expect(ex.client.job('prod', 'app-migrate')).toBeUndefined()
  // The pods are still listed: a Job that never starts still ends its wait.
  expect(ex.client.callsOf('listPodsOfJobs').length).toBeGreaterThan(0)
})

test('a Job’s log beyond max-log-bytes is cut, and the run’s log says so once; its follows end', async () => {
  const ex = executorOf({ ...preInputs, 'max-log-bytes': '30' }, [migrate])
  ex.client.addPod(migrate, pod('app-migrate-x1'), { main: 'line 0001\nline 0002\n' }) // 20 bytes
  void ex.clock.sleep(30_000).then(() => ex.client.appendLog('prod', 'app-migrate-x1', 'main', 'line 0003\nline 0004\nline 0005\n'))
  void ex.clock.sleep(90_000).then(() => ex.client.finish('prod', 'app-migrate', 'Complete'))
  const result = await ex.execute()
  expect(result.errors).toEqual([])
  const streamed = ex.log.filter((l) => l.includes(' | '))
  expect(streamed).toEqual(['line 0001', 'line 0002', 'line 0003'].map((l) => `prod/app-migrate/app-migrate-x1/main | ${l}`))
  expect(ex.log.filter((l) => l.includes('live log cut'))).toEqual([
    "prod/app-migrate: live log cut at 30 bytes (max-log-bytes); no more of this Job's log is printed"
  ])
  expect(ex.client.openFollows).toBe(0)
})

test('streamed lines have the run’s secrets replaced by *** (as the tails are)', async () => {
  secretMasker.add('tok-9f8e7d6c5b4a')
  const ex = executorOf(preInputs, [migrate])
  ex.client.addPod(migrate, pod('app-migrate-x1'), { main: 'connecting with token tok-9f8e7d6c5b4a\n' })
  void ex.clock.sleep(90_000).then(() => ex.client.finish('prod', 'app-migrate', 'Complete'))
  await ex.execute()
  expect(ex.log).toContain('prod/app-migrate/app-migrate-x1/main | connecting with token ***')
  expect(ex.log.join('\n')).not.toContain('tok-9f8e7d6c5b4a')
})

test('a follow that fails is one warning; the wait and the delete happen as they would without it', async () => {
  const ex = executorOf(preInputs, [migrate])
  ex.client.addPod(migrate, pod('app-migrate-x1'), { main: 'x\n' })
  ex.client.every('followLog', fail(apiError(500, 'etcdserver: request timed out')))
  void ex.clock.sleep(90_000).then(() => ex.client.finish('prod', 'app-migrate', 'Complete'))
  const started = ex.clock.now()
  const result = await ex.execute()
  expect(result.errors).toEqual([])
  expect(result.outcomes.map((o) => [o.name, o.result])).toEqual([['app-migrate', 'pruned']])
  expect(ex.clock.now() - started).toBe(90_000)
  expect(result.warnings).toEqual(['live log of prod/app-migrate/app-migrate-x1/main stopped: etcdserver: request timed out (the saved logs are not affected)'])
})

test('a follow that never answers holds nothing up: the Job is deleted when it finishes', async () => {
  const ex = executorOf(preInputs, [migrate])
  ex.client.addPod(migrate, pod('app-migrate-x1'), { main: 'x\n' })
  ex.client.every('followLog', slow(ex.clock, 86_400_000))
  void ex.clock.sleep(90_000).then(() => ex.client.finish('prod', 'app-migrate', 'Complete'))
  const started = ex.clock.now()
  const result = await ex.execute()
  expect(result.errors).toEqual([])
  expect(ex.clock.now() - started).toBe(90_000)
  expect(ex.client.job('prod', 'app-migrate')).toBeUndefined()
})

test('a cancelled run ends every follow at once, and prints no more', async () => {
  const ex = executorOf(preInputs, [migrate])
  ex.client.addPod(migrate, pod('app-migrate-x1'), { main: 'before cancel\n' })
  const cancel = new AbortController()
  void ex.clock.sleep(30_000).then(() => cancel.abort(new RunCancelled('cancelled by SIGTERM')))
  const result = await ex.execute(undefined, cancel.signal)
  expect(result.cancelled).toBeDefined()
  expect(ex.log).toContain('prod/app-migrate/app-migrate-x1/main | before cancel')
  expect(ex.client.openFollows).toBe(0)
  ex.client.appendLog('prod', 'app-migrate-x1', 'main', 'after cancel\n')
  await ex.clock.advance(1000)
  expect(ex.log.some((l) => l.includes('after cancel'))).toBe(false)
})

test('a waited Job that fails: the run’s log says why, from its condition and its pods (BackoffLimitExceeded, OOMKilled, exit code)', async () => {
  const ex = executorOf(preInputs, [migrate])
  const oom: V1ContainerStatus = { ...runningMain, ready: false, state: { terminated: { exitCode: 137, reason: 'OOMKilled' } } }
  ex.client.addPod(migrate, pod('app-migrate-x1', [oom], 'Failed'))
  void ex.clock.sleep(60_000).then(() =>
    ex.client.update('prod', 'app-migrate', (job) => {
      job.status = { failed: 1, conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', lastTransitionTime: new Date(ex.clock.now()) }] }
    })
  )
  const result = await ex.execute()
  expect(result.errors).toEqual([])
  expect(ex.log).toContain(
    'Job prod/app-migrate failed: BackoffLimitExceeded (its pods failed more often than backoffLimit allows); pod app-migrate-x1: container main OOMKilled (exit code 137)'
  )
  expect(at(ex, 'Job prod/app-migrate failed:')).toBeGreaterThan(at(ex, 'Job prod/app-migrate finished: failed'))
})

test(`at most ${MAX_FOLLOWED_JOBS} waited Jobs are followed; the run's log says so once`, async () => {
  const jobs = Array.from({ length: MAX_FOLLOWED_JOBS + 5 }, (_, i) =>
    newJob({ name: `app-m${String(i).padStart(2, '0')}`, release: 'app', status: 'running' })
  )
  const ex = executorOf(preInputs, jobs)
  for (const job of jobs) ex.client.addPod(job, pod(`${job.metadata?.name}-p`), { main: 'hello\n' })
  void ex.clock.sleep(60_000).then(() => {
    for (const job of jobs) ex.client.finish('prod', job.metadata?.name ?? '', 'Complete')
  })
  const result = await ex.execute()
  expect(result.errors).toEqual([])
  expect(ex.client.callsOf('followLog')).toHaveLength(MAX_FOLLOWED_JOBS)
  expect(ex.log.filter((l) => l.includes(' | hello'))).toHaveLength(MAX_FOLLOWED_JOBS)
  expect(ex.log.filter((l) => l.startsWith('live logs: '))).toEqual([
    `live logs: the first ${MAX_FOLLOWED_JOBS} Jobs waited on are followed, no more (their saved logs are not affected)`
  ])
  expect(result.outcomes.filter((o) => o.result === 'pruned')).toHaveLength(MAX_FOLLOWED_JOBS + 5)
})

test('post with wait-for-jobs: a new Job that fails past its deadline says so (DeadlineExceeded), and the step still fails on it', async () => {
  const ex = executorOf(postInputs, [migrate])
  const killed: V1ContainerStatus = { ...runningMain, ready: false, state: { terminated: { exitCode: 143, reason: 'Error', signal: 15 } } }
  ex.client.addPod(migrate, pod('app-migrate-x1', [killed], 'Failed'))
  void ex.clock.sleep(60_000).then(() =>
    ex.client.update('prod', 'app-migrate', (job) => {
      job.status = { failed: 1, conditions: [{ type: 'Failed', status: 'True', reason: 'DeadlineExceeded', lastTransitionTime: new Date(ex.clock.now()) }] }
    })
  )
  const result = await ex.execute()
  expect(ex.log).toContain('Job prod/app-migrate finished: failed')
  expect(ex.log).toContain(
    'Job prod/app-migrate failed: DeadlineExceeded (it ran longer than activeDeadlineSeconds); pod app-migrate-x1: container main exit code 143, signal 15'
  )
  // Its error line and its row say why, not only the log (#35 item 11).
  const why = 'DeadlineExceeded (it ran longer than activeDeadlineSeconds); pod app-migrate-x1: container main exit code 143, signal 15'
  expect(result.errors).toEqual([`Job prod/app-migrate failed: ${why}; kept for failure-grace 1d so it can be inspected`])
  expect(result.outcomes.find((o) => o.name === 'app-migrate')?.reason).toBe(`failed after waiting: ${why}; deleted failure-grace 1d after it finished`)
  expect(result.outcomes.find((o) => o.name === 'app-migrate')?.waitedSeconds).toBe(60)
})

test('post: a Job the kernel killed for memory before post began: OOMKilled with exit code 137 in its row and its error line', async () => {
  const oom = newJob({ name: 'app-migrate', release: 'app', status: 'failed', finishedAgo: 30 })
  const ex = executorOf(postInputs, [oom])
  const killed: V1ContainerStatus = { ...runningMain, ready: false, state: { terminated: { exitCode: 137, reason: 'OOMKilled' } } }
  ex.client.addPod(oom, pod('app-migrate-x1', [killed], 'Failed'))
  // Observed as run.ts observes post's Jobs: the failed ones' pods read for why.
  const { jobs, resourceVersion } = await ex.client.listJobs('prod')
  await observeFailures(ex.client, jobs)
  const result = await ex.execute(planPost({ namespace: 'prod', jobs, resourceVersions: { prod: resourceVersion } }, ex.settings, new Date(ex.clock.now())))
  const why = 'pod app-migrate-x1: container main OOMKilled (exit code 137)'
  expect(result.errors).toEqual([expect.stringContaining(`Job prod/app-migrate failed: `)])
  expect(result.errors[0]).toContain(why)
  expect(result.outcomes[0].reason).toContain(why)
})
