// The executor's waits over the fake client and clock (test/fake/): a running Job waited for, a
// watch that drops and relists (410), a watch the server never answers (cluster unreachable within
// the retry budget), wait-timeout, and a deleted Job that a finalizer keeps. Minutes of waiting
// take milliseconds: time moves only when nothing else can run. The cluster suites
// (watch-failures, faults-product, execute) prove that a real API server and watch behave so.
import { executorOf, outcomesOf } from '../fake/executor.ts'
import { apiError, drops, errorEvent, fail, neverAnswers, type FakeWatch, type Step } from '../fake/jobs-client.ts'
import { newJob } from './jobs.ts'

const waitInputs = { release: 'app', 'harvest-logs': 'none', 'on-running': 'wait', 'wait-timeout': '10m' }
const running = newJob({ name: 'app-migrate', release: 'app', status: 'running' })
const finished = newJob({ name: 'app-old', release: 'app' })

test('pre waits for a running Job, then deletes it and the finished one (all or nothing)', async () => {
  const ex = executorOf(waitInputs, [running, finished])
  void ex.clock.sleep(90_000).then(() => ex.client.finish('prod', 'app-migrate', 'Complete'))
  const started = ex.clock.now()
  const result = await ex.execute()
  expect(result.errors).toEqual([])
  expect(result.outcomes.map((o) => [o.name, o.result, o.waited])).toEqual([
    ['app-migrate', 'pruned', true],
    ['app-old', 'pruned', false]
  ])
  expect(ex.clock.now() - started).toBe(90_000)
  expect(ex.client.callsOf('watchJobs')).toEqual([['prod', expect.any(String)]]) // one watch for the namespace
})

test('a watch that drops while the Job finishes, its resourceVersion compacted meanwhile (410): the informer relists, sees it finished, and pre deletes it', async () => {
  const ex = executorOf(waitInputs, [running, finished])
  // The first stream ends after 30 s; before the informer is back, the Job finishes and etcd compacts.
  const dropsAsItFinishes: Step = async (proceed) => {
    const watch = (await proceed()) as FakeWatch
    void ex.clock.sleep(30_000).then(() => {
      watch.end(null)
      ex.client.finish('prod', 'app-migrate', 'Complete')
      ex.client.compact()
    })
    return watch
  }
  ex.client.script('watchJobs', dropsAsItFinishes)
  const result = await ex.execute()
  expect(result.errors).toEqual([])
  expect(outcomesOf(result)['app-migrate'][0]).toBe('pruned')
  // The plan's list, and the relist after the 410; the second watch got the 410, the third followed the relist.
  expect(ex.client.callsOf('listJobs')).toHaveLength(2)
  expect(ex.client.callsOf('watchJobs').length).toBeGreaterThanOrEqual(3)
  expect(ex.client.job('prod', 'app-migrate')).toBeUndefined()
})

test('a watch cut mid-stream again and again still sees the Job finish: transient failures reconnect', async () => {
  const ex = executorOf(waitInputs, [running])
  ex.client.every('watchJobs', drops(ex.clock, 5_000, Object.assign(new Error('terminated'), { cause: { code: 'ECONNRESET' } })))
  void ex.clock.sleep(40_000).then(() => ex.client.finish('prod', 'app-migrate', 'Failed'))
  const result = await ex.execute()
  expect(result.errors).toEqual([])
  expect(outcomesOf(result)['app-migrate'][0]).toBe('pruned')
  expect(ex.client.callsOf('watchJobs').length).toBeGreaterThan(3)
})

test('a watch refused with 429, then ended by a 500 ERROR event in its stream: both transient, the informer watches on and sees the Job finish', async () => {
  const ex = executorOf(waitInputs, [running])
  ex.client.script(
    'watchJobs',
    fail(apiError(429, 'too many requests', { 'retry-after': '1' })),
    errorEvent(ex.clock, 2_000, 500, 'etcdserver: leader changed')
  )
  void ex.clock.sleep(30_000).then(() => ex.client.finish('prod', 'app-migrate', 'Complete'))
  const result = await ex.execute()
  expect(result.errors).toEqual([])
  expect(outcomesOf(result)['app-migrate'][0]).toBe('pruned')
  expect(ex.client.callsOf('watchJobs')).toHaveLength(3)
})

test('a watch the server never answers counts toward cluster unreachable: pre fails within the retry budget, not after wait-timeout, and deletes nothing', async () => {
  const ex = executorOf(waitInputs, [running, finished])
  ex.client.every('watchJobs', neverAnswers(ex.clock))
  const started = ex.clock.now()
  const result = await ex.execute()
  const elapsed = ex.clock.now() - started
  expect(elapsed).toBeGreaterThanOrEqual(60_000) // the budget
  expect(elapsed).toBeLessThan(120_000) // far under the 10m wait-timeout
  expect(result.errors).toEqual([
    expect.stringMatching(
      /^cluster unreachable: the watch of Jobs in namespace prod kept failing for \d+s \(last: no answer to the watch of Jobs in namespace prod within 30s\); nothing was deleted$/
    )
  ])
  expect(outcomesOf(result)['app-migrate']).toEqual(['blocked', 'not seen finished: the cluster became unreachable'])
  expect(outcomesOf(result)['app-old'][0]).toBe('kept')
  expect(ex.client.callsOf('deleteJob')).toEqual([])
})

test('wait-timeout: a Job still running after it blocks the phase; nothing is deleted, and the error gives its age', async () => {
  const ex = executorOf({ ...waitInputs, 'wait-timeout': '5m' }, [running, finished])
  const started = ex.clock.now()
  const result = await ex.execute()
  expect(ex.clock.now() - started).toBe(300_000)
  // newJob's running Job was created 10 minutes before the plan: 15 minutes old when the wait gave up.
  expect(result.errors).toEqual(['Job prod/app-migrate did not finish within wait-timeout 5m (running for 15m); nothing was deleted'])
  expect(outcomesOf(result)['app-migrate']).toEqual(['blocked', 'still running after waiting 5m'])
  expect(outcomesOf(result)['app-old'][1]).toMatch(/ — not deleted, because of app-migrate$/)
  expect(ex.client.callsOf('deleteJob')).toEqual([])
})

describe('a deleted Job that does not go', () => {
  const held = (finalizers: string[]) => newJob({ name: 'app-held', release: 'app', finalizers })

  test('held by a finalizer that is not Kubernetes’ own: reported after wait-timeout, never stripped', async () => {
    const ex = executorOf({ release: 'app', 'harvest-logs': 'none', 'wait-timeout': '3s' }, [held(['example.com/keep'])])
    const result = await ex.execute()
    expect(result.errors).toEqual([
      'Job prod/app-held was deleted but is not gone after 3s: deleted, but stuck on finalizer example.com/keep (job-sweeper does not remove finalizers it does not own)'
    ])
    expect(outcomesOf(result)['app-held'][0]).toBe('error')
    expect(ex.client.job('prod', 'app-held')?.metadata?.finalizers).toEqual(['example.com/keep'])
    expect(ex.client.callsOf('patchJob')).toEqual([])
  })

  test('held by Kubernetes’ own finalizer only: "still present", not blamed on a finalizer', async () => {
    const ex = executorOf({ release: 'app', 'harvest-logs': 'none', 'wait-timeout': '3s' }, [held(['batch.kubernetes.io/job-tracking'])])
    const result = await ex.execute()
    expect(result.errors).toEqual(['Job prod/app-held was deleted but is not gone after 3s: deleted, but still present: timed out'])
  })

  test('positive control: a finalizer removed within wait-timeout lets it go, and pre succeeds once it is gone', async () => {
    const ex = executorOf({ release: 'app', 'harvest-logs': 'none', 'wait-timeout': '1m' }, [held(['example.com/keep'])])
    void ex.clock.sleep(10_000).then(() => ex.client.removeFinalizers('prod', 'app-held'))
    const result = await ex.execute()
    expect(result.errors).toEqual([])
    expect(outcomesOf(result)['app-held'][0]).toBe('pruned')
  })

  test('the watch refused (403) while waiting for it to be gone: whether it is gone is unknown, not "timed out"', async () => {
    const ex = executorOf({ release: 'app', 'harvest-logs': 'none', 'wait-timeout': '10m' }, [held(['example.com/keep'])])
    ex.client.every('watchJobs', () => Promise.reject(apiError(403, 'jobs.batch is forbidden')))
    const started = ex.clock.now()
    const result = await ex.execute()
    expect(ex.clock.now() - started).toBe(0) // no time passed: a 403 is final
    expect(result.errors).toEqual([
      "Job prod/app-held was deleted, but whether it is gone is unknown: cannot watch Jobs in namespace prod: 403 jobs.batch is forbidden (the credentials lack 'watch' on jobs.batch); it was still there when read right after"
    ])
    expect(result.jobErrors).toBeUndefined() // the cluster's refusal: the CLI's exit 3
  })
})

describe('post with wait-for-jobs', () => {
  const postInputs = { phase: 'post', release: 'app', 'harvest-logs': 'none', 'wait-for-jobs': '5m' }
  const ttlOf = (patch: unknown): unknown => (patch as { spec?: { ttlSecondsAfterFinished?: unknown } }).spec?.ttlSecondsAfterFinished

  test.each([
    ['fail-on-job-failure (default): the step fails', {}, 'errors', 'Job prod/app-migrate failed; kept for failure-grace 1d so it can be inspected'],
    [
      'fail-on-job-failure false: a warning',
      { 'fail-on-job-failure': 'false' },
      'warnings',
      'Job prod/app-migrate failed (fail-on-job-failure is false); kept for failure-grace 1d'
    ]
  ] as const)('a Job that fails while waited for gets failure-grace; %s', async (_, inputs, where, message) => {
    const ex = executorOf({ ...postInputs, ...inputs }, [running])
    void ex.clock.sleep(60_000).then(() => ex.client.finish('prod', 'app-migrate', 'Failed'))
    const result = await ex.execute()
    expect(result[where]).toEqual([message])
    expect(result[where === 'errors' ? 'warnings' : 'errors']).toEqual([])
    // The Job's own failure (the CLI's exit 1), not the cluster's.
    expect(result.jobErrors ?? []).toEqual(where === 'errors' ? [message] : [])
    expect(outcomesOf(result)['app-migrate']).toEqual(['ttl-set', 'failed after waiting; deleted failure-grace 1d after it finished'])
    // The upper bound at once, then the TTL of its outcome.
    expect(ex.client.callsOf('patchJob').map(([, , patch]) => ttlOf(patch))).toEqual([86400, 86400])
  })

  test('positive control: a Job that succeeds while waited for gets its ttl, and no problem', async () => {
    const ex = executorOf(postInputs, [running])
    void ex.clock.sleep(60_000).then(() => ex.client.finish('prod', 'app-migrate', 'Complete'))
    const result = await ex.execute()
    expect([result.errors, result.warnings]).toEqual([[], []])
    expect(outcomesOf(result)['app-migrate']).toEqual(['ttl-set', 'succeeded after waiting; deleted ttl 1h after it finished'])
    expect(ex.client.callsOf('patchJob').map(([, , patch]) => ttlOf(patch))).toEqual([86400, 3600])
  })

  test('a Job still running after wait-for-jobs keeps the upper-bound TTL, with a warning', async () => {
    const ex = executorOf(postInputs, [running])
    const started = ex.clock.now()
    const result = await ex.execute()
    expect(ex.clock.now() - started).toBe(300_000)
    expect(result.warnings).toEqual(['Job prod/app-migrate was still running after wait-for-jobs 5m; it keeps the upper-bound TTL'])
    expect(ex.client.callsOf('patchJob')).toHaveLength(1)
  })
})
