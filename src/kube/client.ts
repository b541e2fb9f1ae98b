// The narrow interface job-sweeper needs from Kubernetes, and its one real implementation over
// @kubernetes/client-node. Everything above this file takes JobsClient, not the library.
import { PassThrough } from 'node:stream'
import { BatchV1Api, CoreV1Api, KubeConfig, Log, PatchStrategy, Watch, setHeaderOptions, type V1Job, type V1JobList, type V1Pod } from '@kubernetes/client-node'
import { apiErrorMessage, statusCode } from './errors.ts'

/** Result of a delete with a UID precondition. */
export type DeleteResult = 'deleted' | 'gone' | 'replaced'

/** An event job-sweeper records about a Job it acted on. */
export interface JobEvent {
  reason: string
  message: string
  type: 'Normal' | 'Warning'
}

export interface JobsClient {
  /** The namespace used when Settings names none: the context's, else `default`. */
  readonly defaultNamespace: string
  /** All Jobs in `namespace` matching the label selector (paginated). */
  listJobs(namespace: string, labelSelector?: string): Promise<V1Job[]>
  /** All Jobs in every namespace matching the label selector (paginated). */
  listAllJobs(labelSelector?: string): Promise<V1Job[]>
  /** The Job, or undefined when it does not exist. */
  getJob(namespace: string, name: string): Promise<V1Job | undefined>
  /** Deletes the Job if it still has `uid`, with foreground propagation (its pods go first). */
  deleteJob(namespace: string, name: string, uid: string): Promise<DeleteResult>
  /**
   * JSON merge patch of the Job if it still has `uid` (the UID in the patch makes the API server
   * refuse a Job that took the name since); undefined when it is gone or was replaced.
   */
  patchJob(namespace: string, name: string, uid: string, patch: object): Promise<V1Job | undefined>
  /** Server-side dry-run replace of the live Job by `job`: undefined if accepted, else the API server's refusal. */
  dryRunReplaceJob(namespace: string, job: V1Job): Promise<string | undefined>
  /**
   * Watches the Job until `done(job)` holds (job undefined: it was deleted, or replaced by another
   * UID) and resolves with the last state seen; rejects with WaitTimeout after `timeoutMs`.
   */
  watchJob(namespace: string, name: string, uid: string, done: (job: V1Job | undefined) => boolean, timeoutMs: number): Promise<V1Job | undefined>
  /** The pods the Job controller created for the Job with this UID. */
  listPodsOfJob(namespace: string, jobUid: string): Promise<V1Pod[]>
  /** A container's log; `previous` reads the restart before the current one. */
  readLog(namespace: string, pod: string, container: string, previous: boolean): Promise<string>
  /** Records a Kubernetes Event on the Job, so `kubectl get events` explains what happened. */
  recordEvent(job: V1Job, event: JobEvent): Promise<void>
}

/** A wait that ran out of time. */
export class WaitTimeout extends Error {
  override name = 'WaitTimeout'
}

const PAGE_SIZE = 500

/** Follows `continue` tokens, so thousands of Jobs arrive in pages of PAGE_SIZE. */
async function allPages(list: (_continue: string | undefined) => Promise<V1JobList>): Promise<V1Job[]> {
  const jobs: V1Job[] = []
  let _continue: string | undefined
  do {
    const page = await list(_continue)
    jobs.push(...page.items)
    _continue = page.metadata?._continue || undefined
  } while (_continue)
  return jobs
}

export class KubeJobsClient implements JobsClient {
  readonly defaultNamespace: string
  private readonly batch: BatchV1Api
  private readonly core: CoreV1Api
  private readonly watcher: Watch
  private readonly logs: Log

  private readonly pageSize: number

  /** `pageSize`: how many Jobs one list request returns (tests make it small to cross pages). */
  constructor(kc: KubeConfig, pageSize = PAGE_SIZE) {
    this.pageSize = pageSize
    this.batch = kc.makeApiClient(BatchV1Api)
    this.core = kc.makeApiClient(CoreV1Api)
    this.watcher = new Watch(kc)
    this.logs = new Log(kc)
    this.defaultNamespace = kc.getContextObject(kc.getCurrentContext())?.namespace || 'default'
  }

  listJobs(namespace: string, labelSelector?: string): Promise<V1Job[]> {
    return allPages((_continue) => this.batch.listNamespacedJob({ namespace, labelSelector, limit: this.pageSize, _continue }))
  }

  listAllJobs(labelSelector?: string): Promise<V1Job[]> {
    return allPages((_continue) => this.batch.listJobForAllNamespaces({ labelSelector, limit: this.pageSize, _continue }))
  }

  async patchJob(namespace: string, name: string, uid: string, patch: object): Promise<V1Job | undefined> {
    const body = { ...patch, metadata: { ...(patch as { metadata?: object }).metadata, uid } }
    try {
      // Without the header client-node sends a JSON Patch (a list of operations), not a merge patch.
      return await this.batch.patchNamespacedJob({ name, namespace, body }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch))
    } catch (e) {
      // 404: gone; 409/422: the UID differs (a new Job has the name).
      if (statusCode(e) === 404 || statusCode(e) === 409 || (statusCode(e) === 422 && /uid/i.test(apiErrorMessage(e)))) return undefined
      throw e
    }
  }

  async getJob(namespace: string, name: string): Promise<V1Job | undefined> {
    try {
      return await this.batch.readNamespacedJob({ name, namespace })
    } catch (e) {
      if (statusCode(e) === 404) return undefined
      throw e
    }
  }

  async deleteJob(namespace: string, name: string, uid: string): Promise<DeleteResult> {
    try {
      await this.batch.deleteNamespacedJob({
        name,
        namespace,
        // The precondition makes the API server refuse (409) if a new Job took the old name.
        body: { preconditions: { uid }, propagationPolicy: 'Foreground' }
      })
      return 'deleted'
    } catch (e) {
      if (statusCode(e) === 404) return 'gone'
      if (statusCode(e) === 409) return 'replaced'
      throw e
    }
  }

  async dryRunReplaceJob(namespace: string, job: V1Job): Promise<string | undefined> {
    try {
      await this.batch.replaceNamespacedJob({ name: job.metadata?.name ?? '', namespace, body: job, dryRun: 'All' })
      return undefined
    } catch (e) {
      if (statusCode(e) === 422) return apiErrorMessage(e)
      throw e
    }
  }

  async watchJob(namespace: string, name: string, uid: string, done: (job: V1Job | undefined) => boolean, timeoutMs: number): Promise<V1Job | undefined> {
    const deadline = Date.now() + timeoutMs
    const same = (job: V1Job | undefined): V1Job | undefined => (job?.metadata?.uid === uid ? job : undefined)
    // List-then-watch from the read's resourceVersion, so no change between the two is missed;
    // a watch the server ends (timeout, 410 Gone) is restarted from a fresh read.
    for (;;) {
      const current = same(await this.getJob(namespace, name))
      if (done(current)) return current
      const remaining = deadline - Date.now()
      if (remaining <= 0) throw new WaitTimeout(`timed out waiting for Job ${namespace}/${name}`)
      const watchStarted = Date.now()
      const result = await new Promise<{ job: V1Job | undefined; finished: boolean }>((resolve, reject) => {
        let last = current
        let settled = false
        let abort: AbortController | undefined
        const finish = (finished: boolean): void => {
          if (settled) return
          settled = true
          clearTimeout(timer)
          abort?.abort()
          resolve({ job: last, finished })
        }
        const timer = setTimeout(() => finish(false), remaining)
        this.watcher
          .watch(
            `/apis/batch/v1/namespaces/${namespace}/jobs`,
            { fieldSelector: `metadata.name=${name}`, resourceVersion: current?.metadata?.resourceVersion, allowWatchBookmarks: true },
            (type, obj: V1Job) => {
              if (type === 'BOOKMARK' || type === 'ERROR') return
              last = type === 'DELETED' ? undefined : same(obj)
              if (done(last)) finish(true)
            },
            () => finish(false)
          )
          .then((controller) => {
            abort = controller
            if (settled) controller.abort()
          }, reject)
      })
      if (result.finished) return result.job
      if (Date.now() >= deadline) throw new WaitTimeout(`timed out waiting for Job ${namespace}/${name}`)
      // A watch the server ends at once (410 Gone, a proxy that cuts streams) is retried, but
      // not in a tight loop against the API server.
      if (Date.now() - watchStarted < 1000) await new Promise((r) => setTimeout(r, Math.min(1000, deadline - Date.now())))
    }
  }

  async listPodsOfJob(namespace: string, jobUid: string): Promise<V1Pod[]> {
    const pods = await this.core.listNamespacedPod({ namespace, labelSelector: `batch.kubernetes.io/controller-uid=${jobUid}` })
    return pods.items
  }

  async readLog(namespace: string, pod: string, container: string, previous: boolean): Promise<string> {
    const sink = new PassThrough()
    const chunks: Buffer[] = []
    sink.on('data', (c: Buffer) => chunks.push(c))
    const ended = new Promise<void>((resolve, reject) => {
      sink.on('end', resolve)
      sink.on('error', reject)
    })
    await this.logs.log(namespace, pod, container, sink, { previous, follow: false })
    await ended
    return Buffer.concat(chunks).toString('utf8')
  }

  async recordEvent(job: V1Job, event: JobEvent): Promise<void> {
    const namespace = job.metadata?.namespace ?? this.defaultNamespace
    const now = new Date()
    await this.core.createNamespacedEvent({
      namespace,
      body: {
        metadata: { generateName: `${job.metadata?.name}.`, namespace },
        involvedObject: { apiVersion: 'batch/v1', kind: 'Job', name: job.metadata?.name, namespace, uid: job.metadata?.uid },
        reason: event.reason,
        message: event.message,
        type: event.type,
        source: { component: 'job-sweeper' },
        reportingComponent: 'job-sweeper',
        reportingInstance: 'job-sweeper',
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1
      }
    })
  }
}
