// The shared watch over a scripted fake of JobsClient (listJobs and watchJobs only): how each way a
// watch can end is taken. A quiet watch reconnects; a watch the server never answers, and an
// ERROR event in the stream, are failures, bounded by the retry budget or final at once.
import type { JobsClient, WatchHandler } from '../../src/kube/client.ts'
import { JobInformer, WaitTimeout, WatchFailed } from '../../src/kube/informer.ts'
import { toJobRecord, type JobRecord } from '../../src/kube/job-record.ts'
import { ClusterUnreachable, NoAnswer, type RetryPolicy } from '../../src/kube/retry.ts'
import { newJob } from './jobs.ts'

const running = toJobRecord(newJob({ name: 'migrate', status: 'running' }))
const finished = newJob({ name: 'migrate' })
const isFinished = (job: unknown): boolean => (job as typeof running | undefined)?.status?.conditions !== undefined
const FAST: RetryPolicy = { budgetMs: 400, baseDelayMs: 5, maxDelayMs: 20 }

/** A list as the client answers it: with `onPage`, the page goes there and `jobs` stays empty. */
function listed(jobs: JobRecord[], resourceVersion: string, onPage?: (jobs: JobRecord[]) => void): { jobs: JobRecord[]; resourceVersion: string } {
  onPage?.(jobs)
  return { jobs: onPage ? [] : jobs, resourceVersion }
}

/** What one watch request does: `handler` gets its events, `done` ends it (after `abort`, with an AbortError). */
type Script = (connect: number, handler: WatchHandler, done: (error: unknown) => void) => void

/** A JobsClient whose every watch runs `script`; counts watches and relists. */
function fakeClient(script: Script): { client: JobsClient; watches: () => number; lists: () => number } {
  let watches = 0
  let lists = 0
  const client = {
    listJobs: async (_ns?: string, _selector?: string, onPage?: (jobs: JobRecord[]) => void) => {
      lists++
      return listed([running], `${100 + lists}`, onPage)
    },
    watchJobs: async (_ns: string, _rv: string, handler: WatchHandler, done: (error: unknown) => void) => {
      const n = ++watches
      let ended = false
      const end = (error: unknown): void => {
        if (ended) return
        ended = true
        done(error)
      }
      script(n, handler, end)
      return { abort: () => end(new DOMException('aborted', 'AbortError')) }
    }
  } as unknown as JobsClient
  return { client, watches: () => watches, lists: () => lists }
}

const status = (code: number, message: string): Record<string, unknown> => ({ kind: 'Status', status: 'Failure', code, message })

async function waitOn(informer: JobInformer, timeoutMs: number): Promise<unknown> {
  informer.track(running)
  try {
    return await informer.waitFor(running, isFinished, timeoutMs)
  } catch (e) {
    return e
  } finally {
    informer.stop()
  }
}

test('an ERROR event with a 5xx inside the stream is a failure: the watch retries within the budget, then the cluster is unreachable', async () => {
  // The server keeps the stream open after the event: only the informer ends it.
  const fake = fakeClient((_, handler) => setTimeout(() => handler('ERROR', status(500, 'etcdserver: request timed out')), 5))
  const e = await waitOn(new JobInformer(fake.client, 'prod', '100', FAST), 10_000)
  expect(e).toBeInstanceOf(ClusterUnreachable)
  expect((e as Error).message).toMatch(
    /^cluster unreachable: the watch of Jobs in namespace prod kept failing for \d+s \(last: etcdserver: request timed out\)$/
  )
  expect(fake.watches()).toBeGreaterThan(1) // retried, as a 5xx answer to the request would be
})

test('an ERROR event with a 403 inside the stream fails every wait at once, naming the missing right', async () => {
  const fake = fakeClient((_, handler) => setTimeout(() => handler('ERROR', status(403, 'jobs.batch is forbidden')), 5))
  const e = await waitOn(new JobInformer(fake.client, 'prod', '100', FAST), 10_000)
  expect(e).toBeInstanceOf(WatchFailed)
  expect((e as Error).message).toBe("cannot watch Jobs in namespace prod: 403 jobs.batch is forbidden (the credentials lack 'watch' on jobs.batch)")
  expect(fake.watches()).toBe(1)
})

test('positive control: an ERROR event with 410 Gone relists and watches on, and the wait sees the Job finish', async () => {
  const fake = fakeClient((n, handler, done) =>
    setTimeout(() => {
      if (n === 1) {
        handler('ERROR', status(410, 'too old resource version: 1 (100)'))
        done(null) // the server ends the stream after it
      } else handler('MODIFIED', finished as unknown as Record<string, unknown>)
    }, 5)
  )
  const job = await waitOn(new JobInformer(fake.client, 'prod', '100', FAST), 10_000)
  expect(isFinished(job)).toBe(true)
  expect([fake.watches(), fake.lists()]).toEqual([2, 1])
})

test('observeAll: a relist after 410 Gone tells the listener of the Jobs deleted during the gap (DELETED, by uid), and not of those still there', async () => {
  const a = toJobRecord(newJob({ name: 'a', status: 'failed' }))
  const b = toJobRecord(newJob({ name: 'b', status: 'failed' }))
  let lists = 0
  let watches = 0
  const paged: boolean[] = []
  const client = {
    listJobs: async (_ns?: string, _selector?: string, onPage?: (jobs: JobRecord[]) => void) => {
      paged.push(onPage !== undefined)
      return listed(++lists === 1 ? [a, b] : [a], `${100 + lists}`, onPage)
    },
    watchJobs: async (_ns: string, _rv: string, handler: WatchHandler, done: (error: unknown) => void) => {
      // The first watch is too old at once (b is deleted meanwhile, its event never seen); the second stays quiet.
      if (++watches === 1)
        setTimeout(() => {
          handler('ERROR', status(410, 'too old resource version: 101 (150)'))
          done(null)
        }, 5)
      return { abort: () => done(new DOMException('aborted', 'AbortError')) }
    }
  } as unknown as JobsClient
  const informer = new JobInformer(client, 'prod', '', FAST)
  const changes: string[] = []
  informer.observeAll({ change: (type, job) => changes.push(`${type} ${job.metadata?.name} ${job.metadata?.uid}`), failed: () => undefined })
  const deadline = Date.now() + 5_000
  while (lists < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5))
  informer.stop()
  // The relist tells each page as it comes, then the Jobs it did not list as deleted.
  expect(changes).toEqual(['ADDED a uid-a', 'ADDED b uid-b', 'ADDED a uid-a', 'DELETED b uid-b'])
  // Each list taken page by page (onPage), none of it kept as a second copy of the Jobs.
  expect(paged).toEqual([true, true])
})

test('a watch the server never answers (no headers before the deadline) fails within the retry budget: cluster unreachable', async () => {
  const fake = fakeClient((_, __, done) => setTimeout(() => done(new NoAnswer('no answer to the watch of Jobs in namespace prod within 30s')), 50))
  const started = Date.now()
  const e = await waitOn(new JobInformer(fake.client, 'prod', '100', FAST), 10_000)
  expect(e).toBeInstanceOf(ClusterUnreachable)
  expect((e as Error).message).toMatch(/kept failing for \d+s \(last: no answer to the watch of Jobs in namespace prod within 30s\)$/)
  // Counted from when the first unanswered watch was sent, as a request's budget is.
  expect(Date.now() - started).toBeLessThan(FAST.budgetMs + 50 + 1000)
})

test('positive control: a quiet watch (nothing for a while after its answer) reconnects and is never a failure', async () => {
  const timeout = (): DOMException => new DOMException('The operation was aborted due to timeout', 'TimeoutError')
  const fake = fakeClient((_, __, done) => setTimeout(() => done(timeout()), 20))
  const e = await waitOn(new JobInformer(fake.client, 'prod', '100', FAST), FAST.budgetMs * 3)
  expect(e).toBeInstanceOf(WaitTimeout)
  expect((e as WaitTimeout).watchFailing).toBeUndefined() // still running, as far as anyone knows
  expect(fake.watches()).toBeGreaterThan(3)
})

test('a wait that times out while the watch is failing says so: the Job was not seen, not "still running"', async () => {
  const fake = fakeClient((_, __, done) => setTimeout(() => done(new NoAnswer('no answer to the watch of Jobs in namespace prod within 30s')), 20))
  const e = await waitOn(new JobInformer(fake.client, 'prod', '100', { ...FAST, budgetMs: 60_000 }), 300)
  expect(e).toBeInstanceOf(WaitTimeout)
  expect((e as WaitTimeout).watchFailing).toMatch(
    /^the watch of Jobs in namespace prod has failed for \d+s \(last: no answer to the watch of Jobs in namespace prod within 30s\)$/
  )
})
