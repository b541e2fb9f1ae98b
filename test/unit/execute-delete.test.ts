// The executor's delete branches over the fake client and clock (test/fake/): act on what was
// planned or decide again on a 409, a 404 is "already gone", someone else's delete is not ours,
// dry-run changes nothing, one Job's error does not stop the others, and a cluster that went away
// stops the run with one error. The cluster suites (test/execute.test.ts) prove the API server's
// side of these: that it refuses a stale precondition, that a finalizer holds a Job.
import { executorOf, outcomesOf } from '../fake/executor.ts'
import { apiError, fail, first, slow, unreachable, type Step } from '../fake/jobs-client.ts'
import { newJob } from './jobs.ts'

const releaseJob = (name: string, status: 'running' | 'succeeded' | 'failed' = 'succeeded') => newJob({ name, release: 'app', status })
const quietInputs = { release: 'app', 'harvest-logs': 'none' }

test('409: a Job that became a Helm hook after planning is decided again on its fresh copy and kept; the unchanged one is deleted', async () => {
  const ex = executorOf(quietInputs, [releaseJob('app-migrate'), releaseJob('app-seed')])
  const plan = await ex.plan()
  expect(plan.jobs.map((p) => [p.name, p.action])).toEqual([
    ['app-migrate', 'delete'],
    ['app-seed', 'delete']
  ])
  ex.client.update('prod', 'app-migrate', (j) => {
    j.metadata!.annotations = { ...j.metadata!.annotations, 'helm.sh/hook': 'pre-upgrade' }
  })
  const result = await ex.execute(plan)
  expect(result.errors).toEqual([])
  expect(outcomesOf(result)['app-migrate']).toEqual([
    'kept',
    'changed since it was planned: hook Job (helm.sh/hook: pre-upgrade): its own hook-delete-policy manages it; set include-hooks to include it'
  ])
  expect(ex.client.job('prod', 'app-migrate')).toBeDefined()
  expect(ex.client.callsOf('getJob')).toEqual([['prod/app-migrate']]) // re-read once, on the 409
  // Positive control: the Job that did not change is deleted.
  expect(outcomesOf(result)['app-seed'][0]).toBe('pruned')
  expect(ex.client.job('prod', 'app-seed')).toBeUndefined()
})

test('409 on a Job that changed and is still to be deleted: deleted again with the fresh resourceVersion', async () => {
  const ex = executorOf(quietInputs, [releaseJob('app-migrate')])
  const plan = await ex.plan()
  const planned = plan.jobs[0].resourceVersion
  const fresh = ex.client.update('prod', 'app-migrate', (j) => (j.metadata!.labels = { touched: 'yes' }))
  const result = await ex.execute(plan)
  expect(result.errors).toEqual([])
  expect(outcomesOf(result)['app-migrate'][0]).toBe('pruned')
  const deletes = ex.client.callsOf('deleteJob').map(([, pre]) => (pre as { resourceVersion: string }).resourceVersion)
  expect(deletes).toEqual([planned, fresh.metadata?.resourceVersion])
  expect(ex.client.events).toHaveLength(1) // one Event, for the delete that took
})

test('a Job replaced by a new one of the same name after planning is left alone (uid precondition)', async () => {
  const ex = executorOf(quietInputs, [releaseJob('app-migrate')])
  const plan = await ex.plan()
  ex.client.remove('prod', 'app-migrate')
  const again = releaseJob('app-migrate')
  const replacement = ex.client.create({ ...again, metadata: { ...again.metadata, uid: undefined } })
  expect(replacement.metadata?.uid).not.toBe(plan.jobs[0].uid)
  const result = await ex.execute(plan)
  expect(result.errors).toEqual([])
  expect(outcomesOf(result)['app-migrate']).toEqual(['replaced', 'a new Job took its name since it was planned; left alone'])
  expect(ex.client.job('prod', 'app-migrate')?.metadata?.uid).toBe(replacement.metadata?.uid)
})

test('a Job that changes again between every read and delete is left alone after three rounds, with an error naming it', async () => {
  const ex = executorOf(quietInputs, [releaseJob('app-migrate')])
  let n = 0
  ex.client.every(
    'deleteJob',
    first(() => ex.client.update('prod', 'app-migrate', (j) => (j.metadata!.labels = { round: String(++n) })))
  )
  const result = await ex.execute()
  expect(ex.client.callsOf('deleteJob')).toHaveLength(3)
  expect(outcomesOf(result)['app-migrate']).toEqual(['error', 'kept changing while job-sweeper tried to delete it; left alone'])
  expect(result.errors).toEqual(['Job prod/app-migrate kept changing while job-sweeper tried to delete it; left alone'])
  expect(ex.client.job('prod', 'app-migrate')).toBeDefined()
})

test('404: a Job deleted by someone else after planning is "already gone", not pruned, and gets no Event', async () => {
  const ex = executorOf(quietInputs, [releaseJob('app-migrate'), releaseJob('app-seed')])
  const plan = await ex.plan()
  ex.client.remove('prod', 'app-migrate')
  const result = await ex.execute(plan)
  expect(result.errors).toEqual([])
  expect(outcomesOf(result)['app-migrate']).toEqual([
    'gone',
    'succeeded; a Job’s pod template is immutable, so helm upgrade fails while it exists — already gone'
  ])
  expect(ex.client.callsOf('getJob')).toEqual([]) // a 404 is final: nothing to read again
  // Positive control: the other one is pruned, with its Event.
  expect(outcomesOf(result)['app-seed'][0]).toBe('pruned')
  expect(ex.client.events).toEqual([expect.stringMatching(/^prod\/app-seed JobSwept: Deleted by job-sweeper \(pre phase\)/)])
})

test('a Job another client is already deleting (a finalizer holds it) is waited for until gone, never deleted again nor counted as pruned', async () => {
  const theirs = newJob({ name: 'app-theirs', release: 'app', finalizers: ['example.com/hold'] })
  const ex = executorOf({ ...quietInputs, 'wait-timeout': '1m' }, [theirs, releaseJob('app-ours')])
  const plan = await ex.plan()
  ex.client.remove('prod', 'app-theirs') // terminating: its finalizer holds it
  void ex.clock.sleep(20_000).then(() => ex.client.removeFinalizers('prod', 'app-theirs'))
  const started = ex.clock.now()
  const result = await ex.execute(plan)
  expect(result.errors).toEqual([])
  expect(outcomesOf(result)['app-theirs']).toEqual(['gone', 'being deleted by someone else since it was planned; waiting until it is gone'])
  expect(outcomesOf(result)['app-ours'][0]).toBe('pruned')
  // Its one delete met the 409 of the other client's change; none was sent once it was seen terminating.
  expect(ex.client.callsOf('deleteJob').filter(([job]) => job === 'prod/app-theirs')).toHaveLength(1)
  expect(ex.client.events.map((e) => e.split(' ')[0])).toEqual(['prod/app-ours'])
  // Pre ends only once it is gone: when its finalizer went, 20 s later.
  expect(ex.clock.now() - started).toBe(20_000)
  expect(ex.client.job('prod', 'app-theirs')).toBeUndefined()
})

describe('dry-run changes nothing', () => {
  test.each([
    ['pre', { release: 'app' }, 'would-prune'],
    ['sweep', { phase: 'sweep', release: 'app', ttl: '0s', 'failure-grace': '0s' }, 'would-prune'],
    ['post', { phase: 'post', release: 'app' }, 'would-set-ttl']
  ])('%s: every Job says what would be done; no delete, patch, Event or watch is sent', async (_, inputs, would) => {
    const jobs = [releaseJob('app-migrate'), releaseJob('app-seed', 'failed')]
    const dry = executorOf({ ...inputs, 'dry-run': 'true' }, jobs)
    const result = await dry.execute()
    expect(result.dryRun).toBe(true)
    expect(result.outcomes.map((o) => [o.name, o.result])).toEqual([
      ['app-migrate', would],
      ['app-seed', would]
    ])
    expect(dry.client.calls.map((c) => c.method)).toEqual(['listJobs']) // the plan's list, nothing after it
    // Positive control: the same run without dry-run acts on both.
    const wet = executorOf(inputs, jobs)
    const acted = await wet.execute()
    expect(acted.outcomes.map((o) => o.result)).toEqual(would === 'would-prune' ? ['pruned', 'pruned'] : ['ttl-set', 'ttl-set'])
    expect(wet.client.calls.map((c) => c.method)).toContain(would === 'would-prune' ? 'deleteJob' : 'patchJob')
  })
})

test('one Job’s refused delete does not stop the others: they are pruned, and the run ends with one error naming that Job', async () => {
  const ex = executorOf(quietInputs, [releaseJob('app-a'), releaseJob('app-b'), releaseJob('app-c')])
  const refuseB: Step = (proceed, call) => (call.args[0] === 'prod/app-b' ? fail(apiError(403, 'jobs.batch "app-b" is forbidden'))(proceed, call) : proceed())
  ex.client.every('deleteJob', refuseB)
  const result = await ex.execute()
  expect(result.outcomes.map((o) => [o.name, o.result])).toEqual([
    ['app-a', 'pruned'],
    ['app-b', 'error'],
    ['app-c', 'pruned']
  ])
  expect(result.errors).toEqual(['Job prod/app-b: jobs.batch "app-b" is forbidden'])
  expect(ex.client.callsOf('deleteJob')).toHaveLength(3) // not retried: a 403 is final
})

test('the cluster becoming unreachable stops the run there: the Jobs still queued are not attempted, and one error says how many were not done', async () => {
  const ex = executorOf({ ...quietInputs, concurrency: '1' }, [releaseJob('app-a'), releaseJob('app-b'), releaseJob('app-c')])
  ex.client.script(
    'deleteJob',
    (proceed) => proceed(),
    () => {
      ex.client.goDown(unreachable('delete Job prod/app-b'))
      return Promise.reject(unreachable('delete Job prod/app-b'))
    }
  )
  const result = await ex.execute()
  expect(outcomesOf(result)['app-a'][0]).toBe('pruned')
  expect(outcomesOf(result)['app-b']).toEqual(['error', expect.stringMatching(/ — not known whether it was deleted: the cluster became unreachable$/)])
  expect(outcomesOf(result)['app-c']).toEqual(['kept', expect.stringMatching(/ — not attempted: the cluster became unreachable$/)])
  expect(ex.client.callsOf('deleteJob')).toHaveLength(2)
  expect(result.errors).toEqual([
    'cluster unreachable: delete Job prod/app-b kept failing for 60s over 9 attempt(s) (last: connect ECONNREFUSED 127.0.0.1:6443); the run stopped there, 2 Job(s) not done: run it again once the cluster is reachable'
  ])
})

test('a slow answer holds up only its own Job: the work queue deletes the others meanwhile', async () => {
  const ex = executorOf({ ...quietInputs, concurrency: '2' }, [releaseJob('app-a'), releaseJob('app-b'), releaseJob('app-c')])
  ex.client.script('deleteJob', slow(ex.clock, 25_000))
  const started = ex.clock.now()
  const result = await ex.execute()
  expect(result.outcomes.map((o) => o.result)).toEqual(['pruned', 'pruned', 'pruned'])
  expect(ex.log.filter((l) => l.startsWith('deleted '))).toEqual([
    'deleted Job prod/app-b (succeeded, background)',
    'deleted Job prod/app-c (succeeded, background)',
    'deleted Job prod/app-a (succeeded, background)'
  ])
  expect(ex.clock.now() - started).toBe(25_000)
})
