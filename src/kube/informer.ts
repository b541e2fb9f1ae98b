// One shared watch of a namespace's Jobs that answers every "is it finished / is it gone"
// question of a run, as client-go's informer does for the TTL-after-finished controller: it
// continues from the resourceVersion of the list the plan was made from, with bookmarks, relists
// on 410 Gone, reconnects after transient failures, and fails every wait at once on a 401/403.
// A watch the server never answers (it accepts connections and never replies) is a failure, not
// a quiet watch: it counts toward "cluster unreachable" within the same budget as requests.
//
// Hand-written rather than client-node's ListWatch (makeInformer): that one asks for no
// bookmarks, stops for good on any error that is not a 410, and caches whole Job objects; this one
// keeps JobRecords of the Jobs a run waits on only.
import type { V1Job } from '@kubernetes/client-node'
import { apiErrorMessage, statusCode } from './errors.ts'
import type { JobsClient } from './client.ts'
import { realClock, type Clock } from './clock.ts'
import { toJobRecord, type JobRecord } from './job-record.ts'
import { ApiError } from './rest.ts'
import { cancelledBy, ClusterUnreachable, DEFAULT_RETRY, isTransient, networkMessage, NoAnswer, type RetryPolicy } from './retry.ts'

/** A wait that ran out of time. */
export class WaitTimeout extends Error {
  override name = 'WaitTimeout'
  /**
   * Set when the watch was failing as time ran out (not yet for the whole budget): the Job was not
   * seen, so whether it finished is unknown. `the watch of Jobs in namespace x has failed for 40s (last: …)`.
   */
  readonly watchFailing?: string
  constructor(message: string, watchFailing?: string) {
    super(message)
    this.watchFailing = watchFailing
  }
}

/** The watch cannot go on (forbidden, or the cluster unreachable for the whole retry budget). */
export class WatchFailed extends Error {
  override name = 'WatchFailed'
}

interface Waiter {
  done: (job: JobRecord | undefined) => boolean
  resolve: (job: JobRecord | undefined) => void
  reject: (e: Error) => void
  /** Aborted when the wait ends otherwise: its timeout's sleep is cut short. */
  timer: AbortController
}

interface Tracked {
  uid: string
  /** The last state seen; undefined once the Job (with this uid) is gone. */
  job: JobRecord | undefined
  waiters: Set<Waiter>
}

/** Where observeAll() hands what it sees. */
export interface JobListener {
  /** A change; after a relist, a Job gone meanwhile comes as DELETED with its metadata only (uid, namespace, name). */
  change(type: 'ADDED' | 'MODIFIED' | 'DELETED', job: JobRecord): void
  failed(error: Error): void
}

/** A watch failure in words: `no answer … within 30s`, `connect ECONNREFUSED …`, or the API server's message. */
const lastFailure = (error: unknown): string => (error instanceof NoAnswer ? error.message : (networkMessage(error) ?? apiErrorMessage(error)))

export class JobInformer {
  private readonly tracked = new Map<string, Tracked>()
  private connection: { abort(): void } | undefined
  private running = false
  private stopped = false
  private failure: Error | undefined
  private failingSince: number | undefined
  private reconnects = 0
  /** When the watch in progress was requested. */
  private connectedAt = 0
  /** An ERROR event in the stream other than 410: how the watch in progress ended. */
  private streamError: ApiError | undefined
  /** The last failure of the watch, while it is failing. */
  private lastError: unknown
  /** observeAll(): every Job's changes go there, and the failure that ends the watch. */
  private listener: JobListener | undefined
  /**
   * observeAll(): the Jobs the listener was told of and not of their deletion (uid → where), so
   * that a relist tells it of those gone meanwhile: a watch resumed after 410 Gone sees no DELETED
   * event of a Job deleted during the gap.
   */
  private readonly known = new Map<string, { namespace?: string; name?: string }>()
  private listed = false

  private readonly client: JobsClient
  readonly namespace: string
  private resourceVersion: string
  private readonly retry: RetryPolicy
  private readonly signal: AbortSignal | undefined
  private readonly clock: Clock

  /**
   * `resourceVersion`: where the plan's list left off ('' lists first). `signal`: the run's
   * cancellation, which fails every wait at once (RunCancelled).
   */
  constructor(
    client: JobsClient,
    namespace: string,
    resourceVersion: string,
    retry: RetryPolicy = DEFAULT_RETRY,
    signal?: AbortSignal,
    clock: Clock = realClock
  ) {
    this.client = client
    this.namespace = namespace
    this.resourceVersion = resourceVersion
    this.retry = retry
    this.signal = signal
    this.clock = clock
    signal?.addEventListener('abort', () => this.fail(cancelledBy(signal)), { once: true })
  }

  /** Follows the Job from its last known state (the plan's), so no change after that is missed. */
  track(job: JobRecord): void {
    const name = job.metadata?.name ?? ''
    if (!this.tracked.has(name)) this.tracked.set(name, { uid: job.metadata?.uid ?? '', job, waiters: new Set() })
  }

  /** The last state seen of a tracked Job (undefined: gone). */
  current(name: string): JobRecord | undefined {
    return this.tracked.get(name)?.job
  }

  /**
   * Resolves with the Job's state once `done` holds for it (undefined: it is gone, or another Job
   * took its name); rejects with WaitTimeout after `timeoutMs`, or WatchFailed.
   */
  waitFor(job: JobRecord, done: (job: JobRecord | undefined) => boolean, timeoutMs: number): Promise<JobRecord | undefined> {
    this.track(job)
    const t = this.tracked.get(job.metadata?.name ?? '') as Tracked
    if (done(t.job)) return Promise.resolve(t.job)
    if (this.failure) return Promise.reject(this.failure)
    if (this.signal?.aborted) return Promise.reject(cancelledBy(this.signal))
    this.start()
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { done, resolve, reject, timer: new AbortController() }
      t.waiters.add(waiter)
      this.clock.sleep(timeoutMs, waiter.timer.signal).then(
        () => {
          t.waiters.delete(waiter)
          reject(new WaitTimeout(`timed out waiting for Job ${this.namespace}/${job.metadata?.name}`, this.failingWords()))
        },
        () => undefined // the wait ended otherwise
      )
    })
  }

  /**
   * Follows every Job of the namespace, as a controller's informer does (the keeper): `listener`
   * gets each listed Job (at the start, and again after each relist) and then each change;
   * `failed` gets the failure that ends the watch (forbidden, or the cluster unreachable for the
   * whole retry budget). A watch cut short, or a 410, is resumed or relisted here.
   */
  observeAll(listener: JobListener): void {
    this.listener = listener
    this.start()
  }

  /** observeAll(): the first list has been handed over. */
  get synced(): boolean {
    return this.listed
  }

  stop(): void {
    this.stopped = true
    this.connection?.abort()
    this.connection = undefined
    for (const t of this.tracked.values()) for (const w of t.waiters) w.timer.abort()
  }

  private start(): void {
    if (this.running || this.stopped) return
    this.running = true
    void this.connect()
  }

  private async connect(): Promise<void> {
    while (!this.stopped && !this.failure) {
      try {
        if (!this.resourceVersion) await this.relist()
        this.connectedAt = this.clock.now()
        this.streamError = undefined
        const ended = new Promise<unknown>((resolve) => {
          void this.client
            .watchJobs(this.namespace, this.resourceVersion, (type, object) => this.onEvent(type, object), resolve)
            .then((c) => {
              this.connection = c
              if (this.stopped) c.abort()
            }, resolve)
        })
        const error = await ended
        this.connection = undefined
        if (this.stopped) return
        await this.afterWatch(this.streamError ?? error)
      } catch (e) {
        if (this.stopped) return
        await this.afterWatch(e)
      }
    }
  }

  /** Decides, after a watch ended, whether and when to watch again. */
  private async afterWatch(error: unknown): Promise<void> {
    // The client already found the cluster unreachable for a whole budget (the relist): over.
    if (error instanceof ClusterUnreachable) return this.fail(error)
    const code = statusCode(error)
    if (code === 410) {
      this.resourceVersion = '' // too old: relist, then watch from the new list
      return
    }
    const clientTimeout = (error as { name?: string } | null)?.name === 'TimeoutError'
    if (!error || clientTimeout) {
      // The server ended a healthy watch (its timeout), or nothing came for a while: go on at once,
      // unless it keeps ending at once (a proxy cutting streams): then not in a tight loop.
      this.reconnects++
      if (this.reconnects > 3) await this.sleep(Math.min(1000 * (this.reconnects - 3), 5000))
      return
    }
    if (code !== undefined && !isTransient(error)) {
      this.fail(
        new WatchFailed(
          `cannot watch Jobs in ${this.where}: ${code} ${apiErrorMessage(error)}${code === 403 ? " (the credentials lack 'watch' on jobs.batch)" : ''}`
        )
      )
      return
    }
    // A watch never answered failed from when it was sent, as a request's budget counts from its first attempt.
    this.failingSince ??= error instanceof NoAnswer ? this.connectedAt : this.clock.now()
    this.lastError = error
    const failing = this.clock.now() - this.failingSince
    this.reconnects++
    const delay = Math.random() * Math.min(this.retry.maxDelayMs, this.retry.baseDelayMs * 2 ** Math.min(this.reconnects, 10))
    // As withRetry: no attempt that would begin past the budget.
    if (failing + delay > this.retry.budgetMs) {
      this.fail(
        new ClusterUnreachable(
          `cluster unreachable: the watch of Jobs in ${this.where} kept failing for ${Math.round(failing / 1000)}s (last: ${lastFailure(error)})`
        )
      )
      return
    }
    await this.sleep(delay)
  }

  /** How the watch is failing, if it is (see WaitTimeout.watchFailing). */
  private failingWords(): string | undefined {
    if (this.failingSince === undefined) return undefined
    const seconds = Math.round((this.clock.now() - this.failingSince) / 1000)
    return `the watch of Jobs in ${this.where} has failed for ${seconds}s (last: ${lastFailure(this.lastError)})`
  }

  /** `namespace x`, or `all namespaces` (the keeper's --all-namespaces: namespace ''). */
  private get where(): string {
    return this.namespace === '' ? 'all namespaces' : `namespace ${this.namespace}`
  }

  /** A pause before reconnecting, cut short by the run's cancellation (the loop then ends: failed). */
  private sleep(ms: number): Promise<void> {
    return this.clock.sleep(ms, this.signal).catch(() => undefined)
  }

  private async relist(): Promise<void> {
    // Page by page, each told as it arrives and not kept: a relist of every Job of a busy cluster
    // holds one page and the uids listed, not a second copy of what the listener keeps.
    const listedUids = new Set<string>()
    const listedTracked = new Set<string>()
    const listing = await this.client.listJobs(this.namespace === '' ? undefined : this.namespace, undefined, (page) => {
      for (const job of page) {
        const name = job.metadata?.name ?? ''
        const t = this.tracked.get(name)
        if (t) {
          listedTracked.add(name)
          this.update(t, job)
        }
        if (this.listener) {
          listedUids.add(job.metadata?.uid ?? '')
          this.tell('ADDED', job)
        }
      }
    })
    for (const [name, t] of this.tracked) if (!listedTracked.has(name)) this.update(t, undefined)
    this.resourceVersion = listing.resourceVersion
    if (this.listener) {
      for (const [uid, where] of this.known) {
        if (listedUids.has(uid)) continue
        this.known.delete(uid)
        this.listener.change('DELETED', { metadata: { uid, ...where } })
      }
      this.listed = true
    }
  }

  private onEvent(type: string, object: Record<string, unknown>): void {
    if (type === 'ERROR') {
      // A Status inside the stream: 410 Gone means the resourceVersion is too old (the server
      // ends the stream; a relist follows). Any other is how this watch failed: a 5xx counts
      // toward the budget, a 403 fails every wait, as the same answer to the request would.
      const status = object as { code?: number }
      if (status.code === 410) this.resourceVersion = ''
      else {
        this.streamError = new ApiError(status.code ?? 500, JSON.stringify(object), {}, `the watch of Jobs in ${this.where}`)
        this.connection?.abort()
      }
      return
    }
    this.failingSince = undefined
    this.reconnects = 0
    const metadata = (object.metadata ?? {}) as { name?: string; resourceVersion?: string }
    if (metadata.resourceVersion) this.resourceVersion = metadata.resourceVersion
    if (type === 'BOOKMARK') return
    const t = this.tracked.get(metadata.name ?? '')
    // A run's wait follows a few Jobs of a busy namespace: the others' events are not decoded.
    if (!t && !this.listener) return
    const job = toJobRecord(object as V1Job)
    if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') this.tell(type, job)
    if (!t) return
    if (type === 'DELETED') {
      if (job.metadata?.uid === t.uid) this.update(t, undefined)
    } else this.update(t, job)
  }

  /** Hands a change to observeAll's listener, and keeps what it knows. */
  private tell(type: 'ADDED' | 'MODIFIED' | 'DELETED', job: JobRecord): void {
    if (!this.listener) return
    const uid = job.metadata?.uid ?? ''
    if (type === 'DELETED') this.known.delete(uid)
    else this.known.set(uid, { namespace: job.metadata?.namespace, name: job.metadata?.name })
    this.listener.change(type, job)
  }

  private update(t: Tracked, job: JobRecord | undefined): void {
    // Another Job with the same name means the tracked one is gone.
    t.job = job?.metadata?.uid === t.uid ? job : undefined
    for (const w of [...t.waiters]) {
      if (!w.done(t.job)) continue
      w.timer.abort()
      t.waiters.delete(w)
      w.resolve(t.job)
    }
  }

  private fail(e: Error): void {
    this.failure = e
    this.listener?.failed(e)
    for (const t of this.tracked.values()) {
      for (const w of t.waiters) {
        w.timer.abort()
        w.reject(e)
      }
      t.waiters.clear()
    }
  }
}
