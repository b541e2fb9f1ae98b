// The product through the fault proxy, in front of the real API server: every transient fault the
// retry policy promises to survive (429 with Retry-After, 5xx, connection resets before and after
// the server acted, watch streams cut mid-event, latency, a request that hangs past its timeout),
// in the pre, post and sweep phases. Each run ends as it would without the fault: every Job in
// scope pruned (or given its TTL) exactly once, with one JobSwept Event, and every decoy untouched.
import { outputNames } from './action.ts'
import { createFinishedJobs } from './bench/finished-jobs.ts'
import { batchApi, getJob, kubeConfig } from './cluster/testenv.ts'
import { useFaultProxy } from './faults/fixture.ts'
import type { FaultProxy } from './faults/proxy.ts'
import { expectNoStackTrace, expectPrunedOnce, heldReleaseJob, releaseJobs, runThrough, STACK_FRAME, sweptEvents } from './faults/product.ts'
import { release, useScenario } from './scenario.ts'

const scenario = useScenario('faulty')
const faults = useFaultProxy({ tally: { file: 'faults-product', decoys: () => scenario.decoys.length } })
const { inject } = faults
let ns: string
let proxy: FaultProxy

beforeEach(() => {
  ns = scenario.ns
  proxy = faults.proxy
})

const jobsPath = (): RegExp => new RegExp(`^/apis/batch/v1/namespaces/${ns}/jobs$`)
const jobPath = (): RegExp => new RegExp(`^/apis/batch/v1/namespaces/${ns}/jobs/[^/]+$`)
const deletes = (): number => proxy.requests.count({ method: 'DELETE', path: jobPath() })

test('the stack-trace check catches a stack trace (positive control)', () => {
  expect(new Error('boom').stack).toMatch(STACK_FRAME)
  expect('Job a/b: cluster unreachable: delete Job a/b kept failing for 60s').not.toMatch(STACK_FRAME)
})

describe('pre', () => {
  test('429 with Retry-After on the list and on deletes: it waits as told, and prunes every Job once', async () => {
    const names = await releaseJobs(ns, `${release}-job`, 6)
    const [list, del] = inject(
      { method: 'GET', path: jobsPath(), times: 1, fault: { kind: 'status', code: 429, retryAfterSeconds: 1 } },
      { method: 'DELETE', path: jobPath(), times: 3, fault: { kind: 'status', code: 429, retryAfterSeconds: 1 } }
    )
    const run = await runThrough(proxy, { release, namespace: ns })
    expectNoStackTrace(run)
    expect(run.code).toBe(0)
    expect([list.fired, del.fired]).toEqual([1, 3])
    expect(deletes()).toBe(names.length + 3)
    expect(outputNames(run, 'pruned')).toEqual(names)
    await expectPrunedOnce(ns, names)
  })

  test('500 and 503 on deletes, on the pod list and on the log read: retried; the failed Jobs’ logs are saved, then pruned once', async () => {
    const names = [...(await releaseJobs(ns, `${release}-ok`, 3)), ...(await releaseJobs(ns, `${release}-bad`, 3, 'fail'))]
    const faults = inject(
      { method: 'DELETE', path: jobPath(), times: 2, fault: { kind: 'status', code: 500 } },
      { method: 'DELETE', path: jobPath(), times: 2, fault: { kind: 'status', code: 503 } },
      { method: 'GET', path: `/api/v1/namespaces/${ns}/pods`, times: 2, fault: { kind: 'status', code: 503 } },
      { method: 'GET', path: /\/pods\/[^/]+\/log$/, times: 2, fault: { kind: 'status', code: 500 } }
    )
    const run = await runThrough(proxy, { release, namespace: ns })
    expectNoStackTrace(run)
    expect(run.code).toBe(0)
    expect(faults.map((r) => r.fired)).toEqual([2, 2, 2, 2])
    expect(outputNames(run, 'pruned')).toEqual(names.sort())
    // Three failed Jobs, one log each: every read that was answered 500 was made again.
    expect(proxy.requests.all.filter((r) => r.path.endsWith('/log') && r.status === 200)).toHaveLength(3)
    await expectPrunedOnce(ns, names)
  })

  test('connection reset before the request reached the server: the delete and the Event are sent again', async () => {
    const names = await releaseJobs(ns, `${release}-job`, 4)
    const [del, event] = inject(
      { method: 'DELETE', path: jobPath(), times: 2, fault: { kind: 'reset', when: 'before' } },
      { method: 'POST', path: `/api/v1/namespaces/${ns}/events`, times: 2, fault: { kind: 'reset', when: 'before' } }
    )
    const run = await runThrough(proxy, { release, namespace: ns })
    expectNoStackTrace(run)
    expect(run.code).toBe(0)
    expect([del.fired, event.fired]).toEqual([2, 2])
    expect(outputNames(run, 'pruned')).toEqual(names)
    await expectPrunedOnce(ns, names)
  })

  test('connection reset after the server deleted the Job: the retry finds it gone, and it counts as pruned, with one Event', async () => {
    const names = await releaseJobs(ns, `${release}-job`, 4)
    const [del, event] = inject(
      { method: 'DELETE', path: jobPath(), times: 2, fault: { kind: 'reset', when: 'after' } },
      // The Event was recorded, its answer lost: the retry must not record a second one.
      { method: 'POST', path: `/api/v1/namespaces/${ns}/events`, times: 2, fault: { kind: 'reset', when: 'after' } }
    )
    const run = await runThrough(proxy, { release, namespace: ns })
    expectNoStackTrace(run)
    expect(run.code).toBe(0)
    expect([del.fired, event.fired]).toEqual([2, 2])
    expect(proxy.requests.all.filter((r) => r.method === 'DELETE' && r.status === 404)).toHaveLength(2)
    expect(outputNames(run, 'pruned')).toEqual(names)
    expect(JSON.parse(run.outputs.pruned).map((j: { reason: string }) => j.reason)).not.toContainEqual(expect.stringContaining('already gone'))
    await expectPrunedOnce(ns, names)
  })

  test('connection reset after a foreground delete of a running Job (on-running: delete): counted as pruned, with one Event', async () => {
    const name = `${release}-migrate`
    const held = await heldReleaseJob(ns, name, true)
    // Foreground: the Job stays, terminating, while its pod lingers; the retried DELETE meets it.
    const [del] = inject({ method: 'DELETE', path: jobPath(), times: 1, fault: { kind: 'reset', when: 'after' } })
    const pending = runThrough(proxy, { release, namespace: ns, 'on-running': 'delete', 'harvest-logs': 'none' })
    await proxy.requests.waitFor({ method: 'DELETE', path: jobPath() }, 2)
    await new Promise((r) => setTimeout(r, 1000))
    await held.letGo()
    const run = await pending
    expectNoStackTrace(run)
    expect(run.code).toBe(0)
    expect(del.fired).toBe(1)
    expect(outputNames(run, 'pruned')).toEqual([name])
    expect(JSON.parse(run.outputs.pruned)[0].reason).toContain('on-running: delete')
    await expectPrunedOnce(ns, [name])
  })

  test('positive control: a Job another client deletes while a 503 delays the retry is "already gone", not pruned, and has no Event', async () => {
    const [name] = await releaseJobs(ns, `${release}-job`, 1)
    // A 503 is an answer: that attempt deleted nothing, so the 404 of the retry is someone else's doing.
    const [unavailable] = inject({ method: 'DELETE', path: jobPath(), times: 1, fault: { kind: 'status', code: 503, retryAfterSeconds: 3 } })
    const pending = runThrough(proxy, { release, namespace: ns })
    await proxy.requests.waitFor({ method: 'DELETE', path: jobPath() }, 1)
    await batchApi().deleteNamespacedJob({ name, namespace: ns, propagationPolicy: 'Background' })
    const run = await pending
    expectNoStackTrace(run)
    expect(run.code).toBe(0)
    expect(unavailable.fired).toBe(1)
    expect(JSON.parse(run.outputs.pruned)).toEqual([])
    expect(run.outputs['pruned-count']).toBe('0')
    expect(JSON.parse(run.outputs.gone)).toEqual([expect.objectContaining({ name, reason: expect.stringContaining('already gone') })])
    expect(run.outputs['gone-count']).toBe('1')
    // The hook decoy of the release is kept; the headline counts the Job apart, not as pruned.
    expect(run.summary).toContain('**✅ 0 pruned · 1 kept · 1 already gone**')
    expect(await sweptEvents(ns)).toEqual([])
  })

  test('400 ms of latency on every request: the run is slower, and its outcome the same', async () => {
    const names = await releaseJobs(ns, `${release}-job`, 5, 'fail')
    const [slow] = inject({ fault: { kind: 'delay', ms: 400 } })
    const run = await runThrough(proxy, { release, namespace: ns })
    expectNoStackTrace(run)
    expect(run.code).toBe(0)
    expect(slow.fired).toBeGreaterThan(names.length * 4) // list, pods, log, delete, event per Job
    expect(outputNames(run, 'pruned')).toEqual(names)
    await expectPrunedOnce(ns, names)
  })

  test('the watch cut mid-event while on-running: wait waits: it reconnects, sees the Job finish, then prunes it', async () => {
    const name = `${release}-migrate`
    const held = await heldReleaseJob(ns, name)
    const watch = { path: jobsPath(), query: { watch: 'true' } }
    const [cut] = inject({ ...watch, times: 3, fault: { kind: 'cut', afterEvents: 0, plusBytes: 30 } })
    const pending = runThrough(proxy, { release, namespace: ns, 'on-running': 'wait', 'wait-timeout': '3m' })
    await proxy.requests.waitFor(watch, 1)
    await held.release()
    const run = await pending
    expectNoStackTrace(run)
    expect(run.code).toBe(0)
    expect(cut.fired).toBe(3)
    expect(proxy.requests.count(watch)).toBeGreaterThanOrEqual(4)
    expect(outputNames(run, 'waited')).toEqual([name])
    expect(outputNames(run, 'pruned')).toEqual([name])
    await expectPrunedOnce(ns, [name])
  })

  test('a delete that hangs past the 30 s request timeout is abandoned and sent again', async () => {
    const names = await releaseJobs(ns, `${release}-job`, 2)
    const [hang] = inject({ method: 'DELETE', path: jobPath(), times: 1, fault: { kind: 'delay', ms: 45_000 } })
    const started = Date.now()
    const run = await runThrough(proxy, { release, namespace: ns })
    expectNoStackTrace(run)
    expect(run.code).toBe(0)
    expect(hang.fired).toBe(1)
    expect(deletes()).toBe(names.length + 1)
    expect(Date.now() - started).toBeGreaterThanOrEqual(30_000)
    await expectPrunedOnce(ns, names)
  })
})

describe('post', () => {
  test('503 and a reset after the patch was applied: every Job gets its TTL, and the step succeeds', async () => {
    const names = [...(await releaseJobs(ns, `${release}-ok`, 3)), ...(await releaseJobs(ns, `${release}-bad`, 2, 'fail'))].sort()
    const faults = inject(
      { method: 'PATCH', path: jobPath(), times: 2, fault: { kind: 'status', code: 503 } },
      { method: 'PATCH', path: jobPath(), times: 2, fault: { kind: 'reset', when: 'after' } },
      { method: 'GET', path: jobsPath(), times: 1, fault: { kind: 'status', code: 500 } }
    )
    const run = await runThrough(proxy, { phase: 'post', release, namespace: ns, ttl: '1h', 'failure-grace': '2h' })
    expectNoStackTrace(run)
    expect(run.code).toBe(0)
    expect(faults.map((r) => r.fired)).toEqual([2, 2, 1])
    expect(outputNames(run, 'ttl-set')).toEqual(names)
    for (const name of names) expect((await getJob(ns, name))?.spec?.ttlSecondsAfterFinished).toBe(name.includes('-bad-') ? 7200 : 3600)
  })

  test('the watch cut mid-event during wait-for-jobs: the Job that finishes gets the TTL of its outcome', async () => {
    const name = `${release}-migrate`
    const held = await heldReleaseJob(ns, name)
    const watch = { path: jobsPath(), query: { watch: 'true' } }
    const [cut] = inject({ ...watch, times: 3, fault: { kind: 'cut', afterEvents: 0, plusBytes: 30 } })
    const pending = runThrough(proxy, { phase: 'post', release, namespace: ns, 'wait-for-jobs': '3m', ttl: '10m', 'failure-grace': '2h' })
    await proxy.requests.waitFor(watch, 1)
    await held.release()
    const run = await pending
    expectNoStackTrace(run)
    expect(run.code).toBe(0)
    expect(cut.fired).toBe(3)
    expect(outputNames(run, 'waited')).toEqual([name])
    expect((await getJob(ns, name))?.spec?.ttlSecondsAfterFinished).toBe(600)
  })
})

describe('sweep', () => {
  test('429 on the lists, 500 and a reset after on deletes: every expired Job is pruned once', async () => {
    const labels = { 'sweep-faults': 'true' }
    const made = await createFinishedJobs(kubeConfig(), ns, 5, { prefix: 'expired', labels, timeoutMs: 120_000 })
    const failed = await createFinishedJobs(kubeConfig(), ns, 2, { prefix: 'expired-failed', labels, behaviour: 'fail', timeoutMs: 120_000 })
    const names = [...made.names, ...failed.names].sort()
    const faults = inject(
      { method: 'GET', path: jobsPath(), times: 2, fault: { kind: 'status', code: 429, retryAfterSeconds: 1 } },
      { method: 'DELETE', path: jobPath(), times: 2, fault: { kind: 'status', code: 500 } },
      { method: 'DELETE', path: jobPath(), times: 1, fault: { kind: 'reset', when: 'after' } }
    )
    const run = await runThrough(proxy, { phase: 'sweep', namespace: ns, selector: 'sweep-faults=true', ttl: '0s', 'failure-grace': '0s' })
    expectNoStackTrace(run)
    expect(run.code).toBe(0)
    expect(faults.map((r) => r.fired)).toEqual([2, 2, 1])
    expect(outputNames(run, 'pruned')).toEqual(names)
    await expectPrunedOnce(ns, names)
  })
})
