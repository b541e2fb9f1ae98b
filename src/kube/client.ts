// The one real implementation of JobsClient (jobs-client.ts): plain JSON requests (rest.ts) over
// @kubernetes/client-node's KubeConfig, and its Watch; pod logs are streamed over the same requests.
//
// Every request goes through one rate limiter and is retried when the failure is transient
// (retry.ts); every write names the field manager `job-sweeper`, so server-side apply (Helm 4)
// sees exactly which fields are ours.
import { AsyncLocalStorage } from 'node:async_hooks'
import type { Readable } from 'node:stream'
import PQueue from 'p-queue'
import { KubeConfig, Watch, type CoreV1Event, type V1Job, type V1JobList, type V1Lease, type V1Pod } from '@kubernetes/client-node'
import { apiErrorMessage, statusCode } from './errors.ts'
import { FIELD_MANAGER, toJobRecord, type JobRecord } from './job-record.ts'
import type {
  DeleteResult,
  DryRunAnswer,
  DryRunMethod,
  JobEvent,
  JobListing,
  JobsClient,
  LogKeep,
  LogTarget,
  PatchType,
  Precondition,
  Propagation,
  SavedLog,
  WatchHandler
} from './jobs-client.ts'
import { KubeManifestClient, type ManifestClient } from './manifest-client.ts'
import { KubeClusterObjects, type ClusterObjects } from './objects.ts'
import { streamLog, type LogQuery } from './log-stream.ts'
import { Rest, seg, type Method, type RestOptions } from './rest.ts'
import { cancelledBy, ClusterUnreachable, DEFAULT_RETRY, isTransient, NoAnswer, withRetry, type RetryPolicy } from './retry.ts'

export type * from './jobs-client.ts'

const jobsPath = (namespace: string): string => `/apis/batch/v1/namespaces/${seg(namespace)}/jobs`
const MERGE_PATCH = 'application/merge-patch+json'
const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json'
/** Job UIDs in one pod list's label selector. */
const PODS_LIST_UIDS = 50
/** Server-side apply, as Helm 4 sends it (the body is JSON, which is YAML too). */
const APPLY_PATCH = 'application/apply-patch+yaml'

// client-node's Watch (its private requestTimeoutMs): the deadline for the answer's headers, then
// for each silence of the stream.
const WATCH_TIMEOUT_S = 30

// The deadline of the attempt in progress, for send() to hand to the request.
const attemptSignal = new AsyncLocalStorage<AbortSignal>()

/** Tuning of the client: how many Jobs one list page holds, request rate, timeouts, retries. */
export interface ClientOptions {
  /** Jobs per list page (tests make it small to cross pages). */
  pageSize: number
  /** At most this many requests start per second (client-side rate limit). */
  requestsPerSecond: number
  /** One request's deadline, in milliseconds. */
  requestTimeoutMs: number
  /** A log stream that sends nothing for this long is given up (and retried). */
  logStallMs: number
  retry: RetryPolicy
  /**
   * The run's cancellation: once aborted, no retry is slept for, a request in flight gets
   * CANCEL_GRACE_MS more to settle, and a new one (the Lease's release) that long in all.
   */
  signal?: AbortSignal
  /** Called with each credential a request carries (an exec plugin's token, a rotated one), to mask it. */
  onCredential?: (secret: string) => void
}

export const DEFAULT_CLIENT_OPTIONS: ClientOptions = {
  pageSize: 500,
  requestsPerSecond: 300,
  requestTimeoutMs: 30_000,
  logStallMs: 60_000,
  retry: DEFAULT_RETRY
}

/** How long a request in flight when the run is cancelled may still take (GitHub's grace is 7.5 s). */
export const CANCEL_GRACE_MS = 2_000

/**
 * A signal aborted `ms` after `signal` is (with its RunCancelled), for what may finish within the
 * grace; dispose() once done, so that no timer or listener outlives it.
 */
export function graceAfter(signal: AbortSignal | undefined, ms: number): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController()
  let timer: NodeJS.Timeout | undefined
  const start = (): void => {
    timer = setTimeout(() => controller.abort(cancelledBy(signal as AbortSignal)), ms)
  }
  if (signal?.aborted) start()
  else signal?.addEventListener('abort', start, { once: true })
  return {
    signal: controller.signal,
    dispose: () => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', start)
    }
  }
}

/**
 * The uid of the Job a pod's controller ownerReference names. The Job controller sets it on every
 * pod it creates; the controller-uid label alone, which anyone who may create pods can set, does
 * not make a pod the Job's (its log would be saved as one of the Job's).
 */
export function controllerUid(pod: V1Pod): string | undefined {
  return pod.metadata?.ownerReferences?.find((r) => r.controller === true && r.kind === 'Job' && r.apiVersion === 'batch/v1')?.uid
}

export class KubeJobsClient implements JobsClient {
  readonly defaultNamespace: string
  private readonly rest: Rest
  private readonly watcher: Watch
  private readonly options: ClientOptions
  private readonly limiter: PQueue
  private readonly objects: ClusterObjects
  private sent = 0
  /** When the API server last answered a request (other than 429 or 5xx), or started a log stream. */
  private answeredAt = 0
  /** Set once a request found the cluster unreachable for the whole budget: every later one fails at once. */
  private unreachable: ClusterUnreachable | undefined

  constructor(kc: KubeConfig, options: Partial<ClientOptions> = {}) {
    this.options = { ...DEFAULT_CLIENT_OPTIONS, ...options }
    this.rest = new Rest(kc, this.options.onCredential)
    this.watcher = new Watch(kc)
    this.defaultNamespace = kc.getContextObject(kc.getCurrentContext())?.namespace || 'default'
    this.limiter = new PQueue({ intervalCap: this.options.requestsPerSecond, interval: 1000 })
    this.objects = new KubeClusterObjects(
      (what, attempt) => this.call(what, attempt),
      (method, path, options) => this.send(method, path, options)
    )
  }

  get requests(): number {
    return this.sent
  }

  /** Preflight's client for objects of any kind, over this client's rate limiter, retries and request count. */
  manifestClient(): ManifestClient {
    return new KubeManifestClient(
      (what, attempt) => this.call(what, attempt),
      (method, path, options) => this.send(method, path, options),
      this.defaultNamespace
    )
  }

  /**
   * Closes the connection pool, and with it any connection still being made: a request abandoned
   * at its deadline leaves its connection attempt to a server that accepts and never answers, and
   * that socket alone kept the process from exiting for minutes after the run had ended.
   */
  close(): Promise<void> {
    return this.rest.close()
  }

  /** One request, counted, with the deadline of the attempt in progress (see call()). */
  private async send<T>(method: Method, path: string, options: RestOptions = {}): Promise<T> {
    this.sent++
    const signal = attemptSignal.getStore() ?? AbortSignal.timeout(this.options.requestTimeoutMs)
    try {
      const answer = await this.rest.request<T>(method, path, { ...options, signal })
      this.answeredAt = Date.now()
      return answer
    } catch (e) {
      // A server that only says 429 or 5xx is not serving: that is no answer.
      const code = statusCode(e)
      if (code !== undefined && code < 500 && code !== 429) this.answeredAt = Date.now()
      throw e
    }
  }

  /**
   * One API call: rate-limited, retried while transient. `attempt` gets the retries so far. Each
   * attempt has its own deadline, cleared as soon as it settles (AbortSignal.timeout() leaves a
   * 30 s timer behind every request). Once the cluster was unreachable for a whole retry budget,
   * the run is over: later calls, and the retries of calls in flight, fail at once instead of
   * spending a budget each, so a run fails within one budget, not one per Job.
   */
  private async call<T>(what: string, attempt: (retries: number) => Promise<T>): Promise<T> {
    const { signal } = this.options
    const once = async (retries: number): Promise<T> => {
      if (this.unreachable) throw this.unreachable
      const deadline = new AbortController()
      const expire = (ms: number): NodeJS.Timeout => setTimeout(() => deadline.abort(new DOMException(`no answer within ${ms / 1000}s`, 'TimeoutError')), ms)
      let timer = expire(signal?.aborted ? CANCEL_GRACE_MS : this.options.requestTimeoutMs)
      // Cancelled meanwhile: the request may settle briefly, then it is abandoned.
      const cancel = (): void => {
        clearTimeout(timer)
        timer = expire(CANCEL_GRACE_MS)
      }
      signal?.addEventListener('abort', cancel, { once: true })
      try {
        return await attemptSignal.run(deadline.signal, () => attempt(retries))
      } finally {
        clearTimeout(timer)
        signal?.removeEventListener('abort', cancel)
      }
    }
    try {
      return await withRetry(
        what,
        (retries) => this.limiter.add(() => once(retries)),
        this.options.retry,
        (since) => this.answeredAt >= since,
        signal
      )
    } catch (e) {
      if (e instanceof ClusterUnreachable) this.unreachable ??= e
      throw e
    }
  }

  async listJobs(namespace: string | undefined, labelSelector?: string, onPage?: (jobs: JobRecord[]) => void): Promise<JobListing> {
    const jobs: JobRecord[] = []
    let _continue: string | undefined
    let resourceVersion = ''
    const where = namespace ?? 'all namespaces'
    do {
      const limit = this.options.pageSize
      const page: V1JobList = await this.call(`list Jobs in ${where}`, () =>
        this.send<V1JobList>('GET', namespace === undefined ? '/apis/batch/v1/jobs' : jobsPath(namespace), {
          query: { labelSelector, limit, continue: _continue }
        })
      )
      // Each page is trimmed before the next arrives: memory stays in proportion to what is kept.
      const records = page.items.map(toJobRecord)
      if (onPage) onPage(records)
      else for (const job of records) jobs.push(job)
      // Every page of one list is the same snapshot: the first page's resourceVersion is the list's.
      resourceVersion ||= page.metadata?.resourceVersion ?? ''
      // Plain JSON: the field is `continue` (client-node's model renames it `_continue`).
      _continue = (page.metadata as { continue?: string } | undefined)?.continue || undefined
    } while (_continue)
    return { jobs, resourceVersion }
  }

  async getJob(namespace: string, name: string): Promise<V1Job | undefined> {
    try {
      return await this.call(`read Job ${namespace}/${name}`, () => this.send<V1Job>('GET', `${jobsPath(namespace)}/${seg(name)}`))
    } catch (e) {
      if (statusCode(e) === 404) return undefined
      throw e
    }
  }

  async deleteJob(namespace: string, name: string, precondition: Precondition, propagation: Propagation): Promise<DeleteResult> {
    // An attempt that got no answer (reset, timeout) may have deleted the Job; a 429 or 5xx did not.
    let answerLost = false
    try {
      await this.call(`delete Job ${namespace}/${name}`, async () => {
        try {
          return await this.send('DELETE', `${jobsPath(namespace)}/${seg(name)}`, { body: { preconditions: precondition, propagationPolicy: propagation } })
        } catch (e) {
          if (statusCode(e) === undefined) answerLost = true
          throw e
        }
      })
      return 'deleted'
    } catch (e) {
      // A retry that finds the Job gone follows an attempt whose answer was lost: that one deleted it.
      if (statusCode(e) === 404) return answerLost ? 'deleted' : 'gone'
      if (statusCode(e) !== 409) throw e
      // So did a retry that finds it being deleted (a foreground delete keeps it until its pods are
      // gone): the lost attempt's delete changed its resourceVersion, hence the conflict.
      if (answerLost) {
        const fresh = await this.getJob(namespace, name)
        if (!fresh) return 'deleted'
        if (fresh.metadata?.uid === precondition.uid && fresh.metadata?.deletionTimestamp) return 'deleted'
      }
      return 'conflict'
    }
  }

  async deletePod(namespace: string, name: string, uid: string): Promise<'deleted' | 'gone'> {
    try {
      await this.call(`delete pod ${namespace}/${name}`, () =>
        this.send('DELETE', `/api/v1/namespaces/${seg(namespace)}/pods/${seg(name)}`, { body: { preconditions: { uid } } })
      )
      return 'deleted'
    } catch (e) {
      // 404: gone already; 409: the uid precondition failed, another pod of that name.
      const code = statusCode(e)
      if (code === 404 || code === 409) return 'gone'
      throw e
    }
  }

  async patchJob(
    namespace: string,
    name: string,
    precondition: Precondition,
    patch: object,
    type: PatchType = 'merge'
  ): Promise<JobRecord | 'gone' | 'conflict'> {
    // The uid (and resourceVersion) in a merge patch are preconditions: the API server refuses
    // the patch (409) if the Job is another one by now, or changed since it was read.
    const body = { ...patch, metadata: { ...(patch as { metadata?: object }).metadata, ...precondition } }
    try {
      const patched = await this.call(`patch Job ${namespace}/${name}`, () =>
        this.send<V1Job>('PATCH', `${jobsPath(namespace)}/${seg(name)}`, {
          body,
          contentType: type === 'strategic' ? STRATEGIC_MERGE_PATCH : MERGE_PATCH,
          query: { fieldManager: FIELD_MANAGER }
        })
      )
      return toJobRecord(patched)
    } catch (e) {
      if (statusCode(e) === 404) return 'gone'
      if (statusCode(e) === 409 || (statusCode(e) === 422 && /uid/i.test(apiErrorMessage(e)))) return 'conflict'
      throw e
    }
  }

  async dryRunJob(namespace: string, job: V1Job, method: DryRunMethod): Promise<DryRunAnswer> {
    const name = job.metadata?.name ?? ''
    // The apply goes as Helm's (its manager, its force), so it meets the conflicts the upgrade will.
    const path = `${jobsPath(namespace)}/${seg(name)}`
    const [verb, send] =
      method === 'replace'
        ? ['replace', () => this.send('PUT', path, { body: job, query: { dryRun: 'All', fieldManager: FIELD_MANAGER } })]
        : ['apply', () => this.send('PATCH', path, { body: job, contentType: APPLY_PATCH, query: { dryRun: 'All', ...method.apply } })]
    return this.call(`dry-run ${verb} Job ${namespace}/${name}`, async (): Promise<DryRunAnswer> => {
      try {
        await send()
        return { accepted: true }
      } catch (e) {
        const status = statusCode(e)
        // A webhook that cannot be called answers 500 too, but waiting does not make it answer.
        if (status === undefined || (isTransient(e) && !/failed calling webhook/i.test(apiErrorMessage(e)))) throw e
        return { accepted: false, status, message: apiErrorMessage(e) }
      }
    })
  }

  async watchJobs(namespace: string, resourceVersion: string, handler: WatchHandler, done: (error: unknown) => void): Promise<{ abort(): void }> {
    this.sent++
    // client-node's Watch ends with the same TimeoutError whether the server never answered the
    // request or a healthy watch sent nothing for a while. Before the answer's headers (watch()
    // resolves with them) it is the former: a server that accepts connections and never replies.
    let answered = false
    const ended = (error: unknown): void => {
      const timedOut = (error as { name?: string } | null)?.name === 'TimeoutError'
      done(
        timedOut && !answered
          ? new NoAnswer(`no answer to the watch of Jobs in ${namespace === '' ? 'all namespaces' : `namespace ${namespace}`} within ${WATCH_TIMEOUT_S}s`, {
              cause: error
            })
          : error
      )
    }
    const watch = await this.watcher.watch(
      namespace === '' ? '/apis/batch/v1/jobs' : `/apis/batch/v1/namespaces/${encodeURIComponent(namespace)}/jobs`,
      { resourceVersion, allowWatchBookmarks: true },
      (type: string, object: Record<string, unknown>) => handler(type, object),
      ended
    )
    answered = true
    return watch
  }

  async listPodsOfJob(namespace: string, jobUid: string, notOlderThan?: string): Promise<V1Pod[]> {
    // A list with no resourceVersion is a consistent read: the API server first waits for its cache
    // to reach etcd's current revision (about 45 ms a list here while Jobs are being written, nine
    // tenths of the keeper's time per Job). The Job's own resourceVersion is a revision of the same
    // etcd: every pod change the Job's status counts came before it, so a list not older than it
    // holds them, and the cache answers at once.
    const version = notOlderThan ? { resourceVersion: notOlderThan, resourceVersionMatch: 'NotOlderThan' } : {}
    const owned = (pods: V1Pod[]): V1Pod[] => pods.filter((p) => controllerUid(p) === jobUid)
    // Paged as listJobs pages (a Job of thousands of pods is not one answer held whole), and only
    // the Job's own pods kept of each page. The version goes with the first page only: the API
    // server refuses resourceVersionMatch beside a continue token, which carries the list's snapshot.
    const list = async (labelSelector: string): Promise<V1Pod[]> => {
      const pods: V1Pod[] = []
      let _continue: string | undefined
      do {
        const page = await this.call(`list the pods of Job uid ${jobUid}`, () =>
          this.send<{ items?: V1Pod[]; metadata?: { continue?: string } }>('GET', `/api/v1/namespaces/${seg(namespace)}/pods`, {
            query: _continue
              ? { labelSelector, limit: this.options.pageSize, continue: _continue }
              : { labelSelector, limit: this.options.pageSize, ...version }
          })
        )
        pods.push(...owned(page.items ?? []))
        _continue = page.metadata?.continue || undefined
      } while (_continue)
      return pods
    }
    const pods = await list(`batch.kubernetes.io/controller-uid=${jobUid}`)
    // Jobs created before Kubernetes 1.27 label their pods with the legacy key only.
    return pods.length > 0 ? pods : list(`controller-uid=${jobUid}`)
  }

  async listPodsOfJobs(namespace: string, jobUids: string[]): Promise<V1Pod[]> {
    const pods: V1Pod[] = []
    const uids = new Set(jobUids)
    // A selector of 50 UIDs is about 2 KB: well within any proxy's limit on a URL.
    for (let i = 0; i < jobUids.length; i += PODS_LIST_UIDS) {
      const labelSelector = `batch.kubernetes.io/controller-uid in (${jobUids.slice(i, i + PODS_LIST_UIDS).join(',')})`
      let _continue: string | undefined
      do {
        const page = await this.call(`list the pods of ${jobUids.length} Job(s) in ${namespace}`, () =>
          this.send<{ items?: V1Pod[]; metadata?: { continue?: string } }>('GET', `/api/v1/namespaces/${seg(namespace)}/pods`, {
            query: { labelSelector, limit: this.options.pageSize, continue: _continue }
          })
        )
        pods.push(...(page.items ?? []).filter((p) => uids.has(controllerUid(p) ?? '')))
        _continue = page.metadata?.continue || undefined
      } while (_continue)
    }
    return pods
  }

  saveLog(namespace: string, pod: string, container: string, previous: boolean, keep: LogKeep, open: () => Promise<LogTarget>): Promise<SavedLog> {
    // Each attempt writes a target anew: a retried read never appends to a half-written one.
    return this.call(`read the log of ${namespace}/${pod}/${container}`, async () => {
      this.sent++
      // A log may take longer than a request's deadline to stream, so only the run's cancellation
      // bounds it: CANCEL_GRACE_MS after the signal, as any request in flight.
      const stop = graceAfter(this.options.signal, CANCEL_GRACE_MS)
      try {
        return await streamLog(
          (query, signal) => this.openLog(query, signal),
          { namespace, pod, container, previous, stallMs: this.options.logStallMs },
          keep,
          open,
          () => {
            this.answeredAt = Date.now()
          },
          stop.signal
        )
      } finally {
        stop.dispose()
      }
    })
  }

  followLog(namespace: string, pod: string, container: string, limitBytes: number, signal: AbortSignal): Promise<Readable> {
    this.sent++
    return this.openLog({ namespace, pod, container, previous: false, limitBytes, follow: true }, signal)
  }

  /** A log read through the shared pool (not client-node's Log, which drops the Status of a refusal). */
  private async openLog({ namespace, pod, container, previous, limitBytes, follow }: LogQuery, signal: AbortSignal): Promise<Readable> {
    try {
      return await this.rest.stream(`/api/v1/namespaces/${seg(namespace)}/pods/${seg(pod)}/log`, {
        query: { container, previous, limitBytes, follow },
        signal
      })
    } catch (e) {
      const code = statusCode(e)
      if (code !== undefined && code < 500 && code !== 429) this.answeredAt = Date.now()
      throw e
    }
  }

  listWarningEvents(namespace: string, uid: string): Promise<CoreV1Event[]> {
    return this.eventsWhere(namespace, uid, `involvedObject.uid=${uid},type=Warning`)
  }

  listEventsOf(namespace: string, uid: string): Promise<CoreV1Event[]> {
    return this.eventsWhere(namespace, uid, `involvedObject.uid=${uid}`)
  }

  private async eventsWhere(namespace: string, uid: string, fieldSelector: string): Promise<CoreV1Event[]> {
    const list = await this.call(`list the Events of uid ${uid} in ${namespace}`, () =>
      this.send<{ items?: CoreV1Event[] }>('GET', `/api/v1/namespaces/${seg(namespace)}/events`, { query: { fieldSelector } })
    )
    return list.items ?? []
  }

  async recordEvent(job: JobRecord, event: JobEvent): Promise<void> {
    const namespace = job.metadata?.namespace ?? this.defaultNamespace
    const now = new Date()
    // A name made of the Job's uid and the reason: a retried or concurrent create of the same
    // Event is refused (409) instead of recording it twice.
    const name = `${job.metadata?.name}.${job.metadata?.uid}.${event.reason.toLowerCase()}`
    try {
      await this.call(`record an Event on Job ${namespace}/${job.metadata?.name}`, () =>
        this.send('POST', `/api/v1/namespaces/${seg(namespace)}/events`, {
          query: { fieldManager: FIELD_MANAGER },
          body: {
            metadata: { name, namespace },
            involvedObject: { apiVersion: 'batch/v1', kind: 'Job', name: job.metadata?.name, namespace, uid: job.metadata?.uid },
            reason: event.reason,
            message: event.message,
            type: event.type,
            source: { component: FIELD_MANAGER },
            reportingComponent: FIELD_MANAGER,
            reportingInstance: FIELD_MANAGER,
            firstTimestamp: now,
            lastTimestamp: now,
            count: 1
          }
        })
      )
    } catch (e) {
      if (statusCode(e) !== 409) throw e
    }
  }
  namespaceExists(name: string): Promise<boolean> {
    return this.objects.namespaceExists(name)
  }
  hasHelmRecord(namespace: string, release: string, kind: 'Secret' | 'ConfigMap'): Promise<boolean> {
    return this.objects.hasHelmRecord(namespace, release, kind)
  }
  getLease(namespace: string, name: string): Promise<V1Lease | undefined> {
    return this.objects.getLease(namespace, name)
  }
  createLease(namespace: string, lease: V1Lease): Promise<V1Lease | 'exists'> {
    return this.objects.createLease(namespace, lease)
  }
  replaceLease(namespace: string, lease: V1Lease): Promise<V1Lease | 'conflict' | 'gone'> {
    return this.objects.replaceLease(namespace, lease)
  }
  deleteLease(namespace: string, name: string, precondition: Precondition): Promise<DeleteResult> {
    return this.objects.deleteLease(namespace, name, precondition)
  }
}
