// A fake of the narrow JobsClient interface (src/kube/jobs-client.ts), for the executor's branch
// tests: an in-memory store of Jobs, pods, logs and Leases with resourceVersions and UIDs, whose
// deletes and patches honour their preconditions (conflict on a uid or resourceVersion mismatch,
// gone when missing), whose deletes leave a Job with finalizers terminating (deletionTimestamp set)
// until they are removed, and whose watches deliver every change after their resourceVersion (410
// Gone once it is compacted away). Any call can be scripted (fail, answer lost, slow, another
// client's change first), as Kubernetes' fake clientset takes reactors. It answers at the
// interface, as the real client does after its retries: it never imitates HTTP.
import { PassThrough, Readable } from 'node:stream'
import type { CoreV1Event, V1Job, V1Lease, V1Pod } from '@kubernetes/client-node'
import type {
  DeleteResult,
  DryRunAnswer,
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
} from '../../src/kube/client.ts'
import type { Clock } from '../../src/kube/clock.ts'
import { toJobRecord, type JobRecord } from '../../src/kube/job-record.ts'
import { streamLog } from '../../src/kube/log-stream.ts'
import { ApiError } from '../../src/kube/rest.ts'
import { ClusterUnreachable, NoAnswer } from '../../src/kube/retry.ts'
import { matchesSelector } from '../../src/settings/selector.ts'

type Methods = { [K in keyof JobsClient]: JobsClient[K] extends (...args: never[]) => unknown ? K : never }[keyof JobsClient]
type Answer<M extends Methods> = Awaited<ReturnType<JobsClient[M]>>

/** One scripted answer: `proceed` lets the store answer; a step may fail instead, delay, or act first. */
export type Step<T = unknown> = (proceed: () => Promise<T>, call: FakeCall) => Promise<T>

/** A call the fake received: the method and its arguments (paths as namespace/name). */
export interface FakeCall {
  method: Methods
  args: unknown[]
}

/** An error as the real client throws it for an API answer: the code, and the Kubernetes Status body. */
export function apiError(code: number, message: string, headers: Record<string, string> = {}): ApiError {
  return new ApiError(code, JSON.stringify({ kind: 'Status', status: 'Failure', code, message }), headers, 'fake request')
}

/** What the real client throws once the cluster did not answer for a whole retry budget. */
export const unreachable = (what = 'delete Job prod/x'): ClusterUnreachable =>
  new ClusterUnreachable(`cluster unreachable: ${what} kept failing for 60s over 9 attempt(s) (last: connect ECONNREFUSED 127.0.0.1:6443)`)

/** The call fails with `error`; the store is not touched. */
export const fail =
  (error: unknown): Step =>
  () =>
    Promise.reject(error)

/** The store acts, but the answer is lost: the call fails with `error` (a reset after the server deleted). */
export const answerLost =
  (error: unknown): Step =>
  async (proceed) => {
    await proceed()
    throw error
  }

/** The answer comes `ms` later on `clock` (then `then`, or the store's answer). */
export const slow =
  (clock: Clock, ms: number, then?: Step): Step =>
  async (proceed, call) => {
    await clock.sleep(ms)
    return then ? then(proceed, call) : proceed()
  }

/** `act` runs first (another client's change between read and write), then the store answers. */
export const first =
  (act: () => void): Step =>
  (proceed) => {
    act()
    return proceed()
  }

/** A watch the server accepts and never answers: after `ms` (the client's 30 s deadline) it fails with NoAnswer. */
export const neverAnswers = (clock: Clock, ms = 30_000): Step =>
  slow(clock, ms, fail(new NoAnswer(`no answer to the watch of Jobs in namespace prod within ${ms / 1000}s`)))

/** A watch whose stream ends `ms` after it started: cleanly (the server's timeout) or with `error` (a cut). */
export const drops =
  (clock: Clock, ms: number, error: unknown = null): Step =>
  async (proceed) => {
    const watch = (await proceed()) as FakeWatch
    void clock.sleep(ms).then(() => watch.end(error))
    return watch
  }

/** A watch that gets an ERROR event (a Status with `code`) `ms` after it started; on 410 the server then ends it. */
export const errorEvent =
  (clock: Clock, ms: number, code: number, message: string): Step =>
  async (proceed) => {
    const watch = (await proceed()) as FakeWatch
    void clock.sleep(ms).then(() => {
      watch.send('ERROR', { kind: 'Status', status: 'Failure', code, message })
      if (code === 410) watch.end(null)
    })
    return watch
  }

interface Change {
  rv: number
  namespace: string
  type: 'ADDED' | 'MODIFIED' | 'DELETED'
  object: V1Job
}

/** One open watch. */
export class FakeWatch {
  ended = false
  readonly namespace: string
  private readonly handler: WatchHandler
  private readonly done: (error: unknown) => void

  constructor(namespace: string, handler: WatchHandler, done: (error: unknown) => void) {
    this.namespace = namespace
    this.handler = handler
    this.done = done
  }

  /** Delivers an event, later, as a stream does. */
  send(type: string, object: object): void {
    const copy = structuredClone(object) as Record<string, unknown>
    queueMicrotask(() => {
      if (!this.ended) this.handler(type, copy)
    })
  }

  /** Ends the stream: null is a clean end, else the error it ended with. */
  end(error: unknown): void {
    queueMicrotask(() => {
      if (this.ended) return
      this.ended = true
      this.done(error)
    })
  }

  abort(): void {
    this.end(new DOMException('This operation was aborted', 'AbortError'))
  }
}

const key = (namespace: string, name: string): string => `${namespace}/${name}`

export class FakeJobsClient implements JobsClient {
  readonly defaultNamespace = 'prod'
  /** Every call, in order. */
  readonly calls: FakeCall[] = []
  /** Events recorded, as `namespace/name reason: message`. */
  readonly events: string[] = []
  /** Logs saved by saveLog (namespace/pod/container). */
  readonly savedLogs: string[] = []

  private readonly clock: Clock
  private readonly jobs = new Map<string, V1Job>()
  private readonly pods: V1Pod[] = []
  /** Events of other components (the kubelet, the scheduler, the Job controller), for listWarningEvents. */
  private readonly clusterEvents: CoreV1Event[] = []
  private readonly logs = new Map<string, string>()
  /** The previous run's log of containers restarted in place (restartContainer); a container without one serves its log. */
  private readonly previousLogs = new Map<string, string>()
  /** Open follows of container logs (namespace/pod/container), and the containers whose logs ended. */
  private readonly follows = new Map<string, Set<PassThrough>>()
  private readonly endedLogs = new Set<string>()
  private readonly leases = new Map<string, V1Lease>()
  private readonly history: Change[] = []
  private readonly watches = new Set<FakeWatch>()
  private readonly scripts = new Map<Methods, Step[]>()
  private readonly always = new Map<Methods, Step>()
  private rv = 100
  /** Watches from a resourceVersion below this one get 410 Gone. */
  private compactedRv = 0
  private uids = 0
  private down: unknown

  constructor(clock: Clock) {
    this.clock = clock
  }

  get requests(): number {
    return this.calls.length
  }

  /** The calls of `method`, as their arguments. */
  callsOf(method: Methods): unknown[][] {
    return this.calls.filter((c) => c.method === method).map((c) => c.args)
  }

  // --- scripting ---

  /** The next calls of `method` get these answers, one each, in order; later ones the store's. */
  script(method: Methods, ...steps: Step[]): this {
    this.scripts.set(method, [...(this.scripts.get(method) ?? []), ...steps])
    return this
  }

  /** Every call of `method` (once its script is used up) gets `step`. */
  every(method: Methods, step: Step): this {
    this.always.set(method, step)
    return this
  }

  /** From now on every call fails with `error` (as the real client, once unreachable, fails every request at once), and every open watch ends with it. */
  goDown(error: unknown = unreachable()): void {
    this.down = error
    for (const w of this.watches) w.end(error)
  }

  private async answer<M extends Methods>(method: M, args: unknown[], proceed: () => Promise<Answer<M>>): Promise<Answer<M>> {
    const call: FakeCall = { method, args }
    this.calls.push(call)
    // As a network answer would, it comes after the caller's own continuation.
    await Promise.resolve()
    if (this.down !== undefined) throw this.down
    const step = this.scripts.get(method)?.shift() ?? this.always.get(method)
    return step ? ((await step(proceed, call)) as Answer<M>) : proceed()
  }

  // --- the store, as other clients and controllers change it ---

  private bump(): string {
    return String(++this.rv)
  }

  private record(type: Change['type'], job: V1Job): void {
    const namespace = job.metadata?.namespace ?? ''
    const object = structuredClone(job)
    this.history.push({ rv: Number(job.metadata?.resourceVersion), namespace, type, object })
    for (const w of this.watches) if (w.namespace === namespace) w.send(type, object)
  }

  /** Creates a Job (a uid is given if it has none); returns it as stored. */
  create(job: V1Job): V1Job {
    const stored = structuredClone(job)
    stored.metadata = { namespace: 'prod', ...stored.metadata, resourceVersion: this.bump() }
    stored.metadata.uid ??= `uid-${stored.metadata.name}-${++this.uids}`
    this.jobs.set(key(stored.metadata.namespace ?? '', stored.metadata.name ?? ''), stored)
    this.record('ADDED', stored)
    return structuredClone(stored)
  }

  /** The stored Job, or undefined. */
  job(namespace: string, name: string): V1Job | undefined {
    const job = this.jobs.get(key(namespace, name))
    return job && structuredClone(job)
  }

  /** Another client (or a controller) changes the Job: its resourceVersion moves on, watches see it. */
  update(namespace: string, name: string, change: (job: V1Job) => void): V1Job {
    const job = this.jobs.get(key(namespace, name))
    if (!job) throw new Error(`fake: no Job ${key(namespace, name)} to update`)
    change(job)
    job.metadata = { ...job.metadata, resourceVersion: this.bump() }
    if (job.metadata.deletionTimestamp && (job.metadata.finalizers ?? []).length === 0) return this.vanish(job)
    this.record('MODIFIED', job)
    return structuredClone(job)
  }

  /** The Job controller marks it finished (Complete or Failed), as of now. */
  finish(namespace: string, name: string, type: 'Complete' | 'Failed'): V1Job {
    const at = new Date(this.clock.now())
    return this.update(namespace, name, (job) => {
      job.status = { conditions: [{ type, status: 'True', lastTransitionTime: at }], completionTime: type === 'Complete' ? at : undefined }
    })
  }

  /** Another client deletes the Job: a Job with finalizers is left terminating until they go. */
  remove(namespace: string, name: string): void {
    const job = this.jobs.get(key(namespace, name))
    if (job) this.markDeleted(job)
  }

  /** Its finalizers are removed (their controller is done): a terminating Job then goes. */
  removeFinalizers(namespace: string, name: string): void {
    this.update(namespace, name, (job) => {
      job.metadata = { ...job.metadata, finalizers: undefined }
    })
  }

  /** Every resourceVersion up to now is compacted away: a watch from one of them gets 410 Gone. */
  compact(): void {
    this.compactedRv = this.rv
  }

  /** A pod of the Job (labelled with its controller-uid, and the Job its controller ownerReference, as the Job controller makes them). */
  addPod(job: V1Job, pod: V1Pod, logs: Record<string, string> = {}): void {
    const namespace = job.metadata?.namespace ?? 'prod'
    const uid = job.metadata?.uid ?? ''
    const labels = { ...pod.metadata?.labels, 'batch.kubernetes.io/controller-uid': uid }
    const ownerReferences = pod.metadata?.ownerReferences ?? [{ apiVersion: 'batch/v1', kind: 'Job', name: job.metadata?.name ?? '', uid, controller: true }]
    this.pods.push({ ...pod, metadata: { ...pod.metadata, namespace, labels, ownerReferences } })
    for (const [container, text] of Object.entries(logs)) this.logs.set(`${namespace}/${pod.metadata?.name}/${container}`, text)
  }

  /** The kubelet writes the pod's status (it ends, its container restarts). */
  updatePod(namespace: string, name: string, change: (pod: V1Pod) => void): void {
    const pod = this.pods.find((p) => p.metadata?.namespace === namespace && p.metadata?.name === name)
    if (!pod) throw new Error(`fake: no pod ${key(namespace, name)} to update`)
    change(pod)
  }

  /**
   * The container's run `endedId` ended and it restarted in place (restartPolicy OnFailure) as run
   * `newId`, which writes `text`: what the ended run wrote becomes the previous log (the kubelet's
   * `previous=true`), and the run before it is gone, as the kubelet keeps only those two.
   */
  restartContainer(namespace: string, pod: string, container: string, endedId: string, newId: string, text: string): void {
    const k = `${namespace}/${pod}/${container}`
    this.updatePod(namespace, pod, (p) => {
      const status = [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])].find((c) => c.name === container)
      if (!status) throw new Error(`fake: no status of ${k} to restart`)
      status.restartCount = (status.restartCount ?? 0) + 1
      status.lastState = { terminated: { exitCode: 1, reason: 'Error', containerID: `containerd://${endedId}` } }
      status.containerID = `containerd://${newId}`
      status.state = { running: { startedAt: new Date(this.clock.now()) } }
    })
    this.previousLogs.set(k, this.logs.get(k) ?? '')
    this.logs.set(k, text)
  }

  /** The pod is gone (`kubectl delete pod`, PodGC, its node lost), its logs with it. */
  removePod(namespace: string, name: string): void {
    const i = this.pods.findIndex((p) => p.metadata?.namespace === namespace && p.metadata?.name === name)
    if (i < 0) throw new Error(`fake: no pod ${key(namespace, name)} to remove`)
    this.pods.splice(i, 1)
    for (const k of [...this.logs.keys()]) if (k.startsWith(`${namespace}/${name}/`)) this.logs.delete(k)
  }

  /** Another component records an Event (the kubelet about a pod, the Job controller about a Job). */
  addEvent(event: CoreV1Event): void {
    this.clusterEvents.push(structuredClone(event))
  }

  /** The container writes more to its log: every open follow of it gets the text. */
  appendLog(namespace: string, pod: string, container: string, text: string): void {
    const k = `${namespace}/${pod}/${container}`
    this.logs.set(k, (this.logs.get(k) ?? '') + text)
    for (const f of this.follows.get(k) ?? []) f.write(text)
  }

  /** The container ends: its follows end (as the kubelet closes them), later ones send the log and end. */
  endLog(namespace: string, pod: string, container: string): void {
    const k = `${namespace}/${pod}/${container}`
    this.endedLogs.add(k)
    for (const f of this.follows.get(k) ?? []) f.end()
    this.follows.delete(k)
  }

  /** How many follows of container logs are open. */
  get openFollows(): number {
    return [...this.follows.values()].reduce((n, s) => n + s.size, 0)
  }

  private markDeleted(job: V1Job): void {
    if (job.metadata?.deletionTimestamp) return
    if ((job.metadata?.finalizers ?? []).length === 0) {
      job.metadata = { ...job.metadata, resourceVersion: this.bump() }
      this.vanish(job)
      return
    }
    job.metadata = { ...job.metadata, deletionTimestamp: new Date(this.clock.now()), resourceVersion: this.bump() }
    this.record('MODIFIED', job)
  }

  private vanish(job: V1Job): V1Job {
    const { namespace = '', name = '', uid } = job.metadata ?? {}
    this.jobs.delete(key(namespace, name))
    for (let i = this.pods.length - 1; i >= 0; i--) {
      if (this.pods[i].metadata?.labels?.['batch.kubernetes.io/controller-uid'] !== uid) continue
      // A pod that goes ends the follows of its logs, as the kubelet does.
      const prefix = `${namespace}/${this.pods[i].metadata?.name}/`
      for (const k of this.follows.keys()) if (k.startsWith(prefix)) this.endLog(...(k.split('/') as [string, string, string]))
      this.pods.splice(i, 1)
    }
    this.record('DELETED', job)
    return structuredClone(job)
  }

  // --- JobsClient ---

  listJobs(namespace: string | undefined, labelSelector?: string, onPage?: (jobs: JobRecord[]) => void): Promise<JobListing> {
    return this.answer('listJobs', [namespace, labelSelector], async () => {
      const jobs = [...this.jobs.values()]
        .filter((j) => namespace === undefined || j.metadata?.namespace === namespace)
        .filter((j) => labelSelector === undefined || matchesSelector(labelSelector, j.metadata?.labels))
        .map((j) => toJobRecord(structuredClone(j)))
      if (onPage) onPage(jobs)
      return { jobs: onPage ? [] : jobs, resourceVersion: String(this.rv) }
    })
  }

  getJob(namespace: string, name: string): Promise<V1Job | undefined> {
    return this.answer('getJob', [key(namespace, name)], async () => this.job(namespace, name))
  }

  deleteJob(namespace: string, name: string, precondition: Precondition, propagation: Propagation): Promise<DeleteResult> {
    return this.answer('deleteJob', [key(namespace, name), precondition, propagation], async () => {
      const job = this.jobs.get(key(namespace, name))
      if (!job) return 'gone'
      const { uid, resourceVersion } = job.metadata ?? {}
      if (precondition.uid !== uid || (precondition.resourceVersion !== undefined && precondition.resourceVersion !== resourceVersion)) return 'conflict'
      this.markDeleted(job)
      return 'deleted'
    })
  }

  patchJob(namespace: string, name: string, precondition: Precondition, patch: object, type: PatchType = 'merge'): Promise<JobRecord | 'gone' | 'conflict'> {
    return this.answer(
      'patchJob',
      type === 'merge' ? [key(namespace, name), precondition, patch] : [key(namespace, name), precondition, patch, type],
      async () => {
        const job = this.jobs.get(key(namespace, name))
        if (!job) return 'gone'
        // The API server's 409: the Job is another one by now, or changed since the version the patch names.
        if (job.metadata?.uid !== precondition.uid) return 'conflict'
        if (precondition.resourceVersion !== undefined && precondition.resourceVersion !== job.metadata?.resourceVersion) return 'conflict'
        // A strategic merge adds the patch's finalizers to the Job's own (the one list merged here).
        const finalizers = (patch as { metadata?: { finalizers?: string[] } }).metadata?.finalizers
        const merged =
          type === 'strategic' && finalizers
            ? {
                ...patch,
                metadata: { ...(patch as { metadata?: object }).metadata, finalizers: [...new Set([...(job.metadata?.finalizers ?? []), ...finalizers])] }
              }
            : patch
        return toJobRecord(this.update(namespace, name, (j) => mergePatch(j as unknown as Record<string, unknown>, merged as Record<string, unknown>)))
      }
    )
  }

  deletePod(namespace: string, name: string, uid: string): Promise<'deleted' | 'gone'> {
    return this.answer('deletePod', [`${namespace}/${name}`, uid], async () => {
      const pod = this.pods.find((p) => p.metadata?.namespace === namespace && p.metadata?.name === name)
      if (!pod || (pod.metadata?.uid !== undefined && pod.metadata.uid !== uid)) return 'gone'
      // Being deleted: the kubelet stops its containers (the test ends them: endLog, updatePod, removePod).
      pod.metadata = { ...pod.metadata, deletionTimestamp: pod.metadata?.deletionTimestamp ?? new Date(this.clock.now()) }
      return 'deleted'
    })
  }

  dryRunJob(): Promise<DryRunAnswer> {
    return this.answer('dryRunJob', [], async () => ({ accepted: true }) as const)
  }

  watchJobs(namespace: string, resourceVersion: string, handler: WatchHandler, done: (error: unknown) => void): Promise<{ abort(): void }> {
    return this.answer('watchJobs', [namespace, resourceVersion], async () => {
      const watch = new FakeWatch(namespace, handler, (error) => {
        this.watches.delete(watch)
        done(error)
      })
      const from = resourceVersion === '' ? this.rv : Number(resourceVersion)
      if (from < this.compactedRv) {
        watch.send('ERROR', {
          kind: 'Status',
          status: 'Failure',
          code: 410,
          reason: 'Expired',
          message: `too old resource version: ${from} (${this.compactedRv})`
        })
        watch.end(null)
        return watch
      }
      this.watches.add(watch)
      for (const c of this.history) if (c.namespace === namespace && c.rv > from) watch.send(c.type, c.object)
      return watch
    })
  }

  /** Every open watch gets a BOOKMARK at the current resourceVersion. */
  bookmark(): void {
    for (const w of this.watches) w.send('BOOKMARK', { kind: 'Job', apiVersion: 'batch/v1', metadata: { resourceVersion: String(this.rv) } })
  }

  /** How many watches are open. */
  get openWatches(): number {
    return this.watches.size
  }

  listPodsOfJob(namespace: string, jobUid: string, notOlderThan?: string): Promise<V1Pod[]> {
    return this.answer('listPodsOfJob', notOlderThan === undefined ? [namespace, jobUid] : [namespace, jobUid, notOlderThan], async () =>
      this.podsOf(namespace, [jobUid])
    )
  }

  listPodsOfJobs(namespace: string, jobUids: string[]): Promise<V1Pod[]> {
    return this.answer('listPodsOfJobs', [namespace, jobUids], async () => this.podsOf(namespace, jobUids))
  }

  private podsOf(namespace: string, uids: string[]): V1Pod[] {
    return this.pods
      .filter((p) => p.metadata?.namespace === namespace && uids.includes(p.metadata?.labels?.['batch.kubernetes.io/controller-uid'] ?? ''))
      .map((p) => structuredClone(p))
  }

  saveLog(namespace: string, pod: string, container: string, previous: boolean, keep: LogKeep, open: () => Promise<LogTarget>): Promise<SavedLog> {
    return this.answer('saveLog', [`${namespace}/${pod}/${container}`, previous], async () => {
      const k = `${namespace}/${pod}/${container}`
      const text = Buffer.from((previous ? this.previousLogs.get(k) : undefined) ?? this.logs.get(k) ?? '')
      // The stored log served as the API server would; what is kept of it is the real client's doing.
      const saved = await streamLog(
        async () => Readable.from([text]),
        { namespace, pod, container, previous, stallMs: 60_000 },
        keep,
        open,
        () => undefined
      )
      this.savedLogs.push(`${namespace}/${pod}/${container}`)
      return saved
    })
  }

  followLog(namespace: string, pod: string, container: string, limitBytes: number, signal: AbortSignal): Promise<Readable> {
    const k = `${namespace}/${pod}/${container}`
    return this.answer('followLog', [k, limitBytes], async () => {
      const stream = new PassThrough()
      const text = this.logs.get(k) ?? ''
      if (text !== '') stream.write(text)
      if (this.endedLogs.has(k)) {
        stream.end()
        return stream
      }
      const open = this.follows.get(k) ?? new Set<PassThrough>()
      this.follows.set(k, open.add(stream))
      const close = (): void => {
        open.delete(stream)
        stream.destroy(new DOMException('This operation was aborted', 'AbortError'))
      }
      if (signal.aborted) close()
      else signal.addEventListener('abort', close, { once: true })
      stream.on('close', () => open.delete(stream))
      return stream
    })
  }

  listWarningEvents(namespace: string, uid: string): Promise<CoreV1Event[]> {
    return this.answer('listWarningEvents', [namespace, uid], async () =>
      this.clusterEvents
        .filter((e) => e.metadata?.namespace === namespace && e.involvedObject?.uid === uid && e.type === 'Warning')
        .map((e) => structuredClone(e))
    )
  }

  listEventsOf(namespace: string, uid: string): Promise<CoreV1Event[]> {
    return this.answer('listEventsOf', [namespace, uid], async () =>
      this.clusterEvents.filter((e) => e.metadata?.namespace === namespace && e.involvedObject?.uid === uid).map((e) => structuredClone(e))
    )
  }

  recordEvent(job: JobRecord, event: JobEvent): Promise<void> {
    const where = key(job.metadata?.namespace ?? '', job.metadata?.name ?? '')
    return this.answer('recordEvent', [where, event], async () => {
      this.events.push(`${where} ${event.reason}: ${event.message}`)
    })
  }

  namespaceExists(name: string): Promise<boolean> {
    return this.answer('namespaceExists', [name], async () => true)
  }

  hasHelmRecord(namespace: string, release: string): Promise<boolean> {
    return this.answer('hasHelmRecord', [namespace, release], async () => false)
  }

  /** The stored Lease, or undefined. */
  lease(namespace: string, name: string): V1Lease | undefined {
    const lease = this.leases.get(key(namespace, name))
    return lease && structuredClone(lease)
  }

  /** Another run writes the Lease (takes it over, renews it): its resourceVersion moves on. */
  putLease(namespace: string, lease: V1Lease): V1Lease {
    const name = lease.metadata?.name ?? ''
    const stored = structuredClone(lease)
    stored.metadata = {
      ...stored.metadata,
      namespace,
      uid: this.leases.get(key(namespace, name))?.metadata?.uid ?? `lease-uid-${++this.uids}`,
      resourceVersion: this.bump()
    }
    this.leases.set(key(namespace, name), stored)
    return structuredClone(stored)
  }

  getLease(namespace: string, name: string): Promise<V1Lease | undefined> {
    return this.answer('getLease', [key(namespace, name)], async () => this.lease(namespace, name))
  }

  createLease(namespace: string, lease: V1Lease): Promise<V1Lease | 'exists'> {
    return this.answer('createLease', [key(namespace, lease.metadata?.name ?? '')], async () =>
      this.leases.has(key(namespace, lease.metadata?.name ?? '')) ? 'exists' : this.putLease(namespace, lease)
    )
  }

  replaceLease(namespace: string, lease: V1Lease): Promise<V1Lease | 'conflict' | 'gone'> {
    const name = lease.metadata?.name ?? ''
    return this.answer('replaceLease', [key(namespace, name), lease.metadata?.resourceVersion], async () => {
      const stored = this.leases.get(key(namespace, name))
      if (!stored) return 'gone'
      if (stored.metadata?.resourceVersion !== lease.metadata?.resourceVersion) return 'conflict'
      return this.putLease(namespace, lease)
    })
  }

  deleteLease(namespace: string, name: string, precondition: Precondition): Promise<DeleteResult> {
    return this.answer('deleteLease', [key(namespace, name), precondition], async () => {
      const stored = this.leases.get(key(namespace, name))
      if (!stored) return 'gone'
      const { uid, resourceVersion } = stored.metadata ?? {}
      if (precondition.uid !== uid || (precondition.resourceVersion !== undefined && precondition.resourceVersion !== resourceVersion)) return 'conflict'
      this.leases.delete(key(namespace, name))
      return 'deleted'
    })
  }
}

/** RFC 7386 JSON merge patch: null removes a field, objects merge, anything else replaces. */
function mergePatch(target: Record<string, unknown>, patch: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete target[k]
    else if (typeof v === 'object' && !Array.isArray(v) && typeof target[k] === 'object' && target[k] !== null)
      mergePatch(target[k] as Record<string, unknown>, v as Record<string, unknown>)
    else target[k] = structuredClone(v)
  }
}
