// JobsClient: the narrow interface job-sweeper needs from Kubernetes. Everything above src/kube/
// takes it, not the library; client.ts is its one real implementation.
import type { Readable } from 'node:stream'
import type { CoreV1Event, V1Job, V1Pod } from '@kubernetes/client-node'
import type { JobRecord } from './job-record.ts'
import type { ClusterObjects, DeleteResult, Precondition } from './objects.ts'

export type { ClusterObjects, DeleteResult, Precondition } from './objects.ts'

/** Background: the Job goes at once, the garbage collector removes its pods. Foreground: its pods go first. */
export type Propagation = 'Background' | 'Foreground'

/** An event job-sweeper records about a Job it acted on. */
export interface JobEvent {
  reason: string
  message: string
  type: 'Normal' | 'Warning'
}

/** How a rendered Job is tried on the live one: as Helm 4 upgrades (server-side apply), or a replace. */
export type DryRunMethod = { apply: { fieldManager: string; force: boolean } } | 'replace'
/** A dry run's answer: accepted, or refused with the HTTP status and the API server's message. */
export type DryRunAnswer = { accepted: true } | { accepted: false; status: number; message: string }

/** A list of Jobs and the resourceVersion a watch continues from. */
export interface JobListing {
  jobs: JobRecord[]
  resourceVersion: string
}

/** One event of a watch: ADDED, MODIFIED, DELETED, BOOKMARK or ERROR (then `object` is a Status). */
export type WatchHandler = (type: string, object: Record<string, unknown>) => void

/** What one saved container log came to. */
export interface SavedLog {
  /** Bytes stored: the log, or past the limit its head, the cut marker line and its tail. */
  bytes: number
  /** The log was longer than the limit: its middle was cut (log-cut.ts). */
  truncated: boolean
  /** Bytes of the log that were cut out (0 when it is whole). */
  cutBytes: number
  /** Bytes of the whole log, as the API server sent it. */
  logBytes: number
  /** The last lines of the log (its real end), as many as asked for. */
  lastLines: string[]
}

/** What is kept of a log: at most `maxBytes` of it (its head and tail past that), and its last lines. */
export interface LogKeep {
  maxBytes: number
  /** How many of its last lines to give back (0: none). */
  lastLines: number
}

/**
 * Where one read of a log goes (a file, an object in a bucket), opened before the log is asked
 * for. Each attempt of a read has its own: a retried read never appends to a failed one.
 */
export interface LogTarget {
  /** Stores the stream whole; resolves once it is stored, rejects (leaving nothing that looks complete) when it is not, or when the stream fails. */
  write(body: Readable): Promise<void>
  /** Gives the target up unwritten: the log could not be read. */
  discard(): Promise<void>
}

/**
 * How a patch is merged: `merge` (RFC 7386: a list is replaced whole), or `strategic` (Kubernetes'
 * strategic merge: `metadata.finalizers` is merged into the Job's own, none of them dropped).
 */
export type PatchType = 'merge' | 'strategic'

/** Jobs, and (ClusterObjects) the namespace, Helm's release records and job-sweeper's Leases. */
export interface JobsClient extends ClusterObjects {
  /** The namespace used when Settings names none: the context's, else `default`. */
  readonly defaultNamespace: string
  /**
   * Jobs in `namespace` (every namespace when undefined) matching the label selector, paginated.
   * With `onPage`, each page goes there as it arrives and the listing's `jobs` stays empty.
   */
  listJobs(namespace: string | undefined, labelSelector?: string, onPage?: (jobs: JobRecord[]) => void): Promise<JobListing>
  /** The whole Job, or undefined when it does not exist. */
  getJob(namespace: string, name: string): Promise<V1Job | undefined>
  /** Deletes the Job if it still matches `precondition`. */
  deleteJob(namespace: string, name: string, precondition: Precondition, propagation: Propagation): Promise<DeleteResult>
  /**
   * Deletes the pod if it is still the one with this uid, with its own grace period (SIGTERM, then
   * SIGKILL once it passed): `gone` when it is not there, or is another pod by now.
   */
  deletePod(namespace: string, name: string, uid: string): Promise<'deleted' | 'gone'>
  /** JSON merge patch of the Job if it still matches `precondition`; `gone` or `conflict` otherwise. */
  patchJob(namespace: string, name: string, precondition: Precondition, patch: object, type?: PatchType): Promise<JobRecord | 'gone' | 'conflict'>
  /** Server-side dry run of `job` over the live Job, by `method`; network failures throw, API refusals are answers. */
  dryRunJob(namespace: string, job: V1Job, method: DryRunMethod): Promise<DryRunAnswer>
  /** Starts a watch of the namespace's Jobs (`''`: of every namespace) from `resourceVersion`, with bookmarks; `done` gets how it ended. */
  watchJobs(namespace: string, resourceVersion: string, handler: WatchHandler, done: (error: unknown) => void): Promise<{ abort(): void }>
  /**
   * The pods the Job controller created for the Job with this UID. With `notOlderThan` (the
   * resourceVersion of the Job as the caller saw it), a list from the API server's cache no older
   * than that Job, without a read from etcd.
   */
  listPodsOfJob(namespace: string, jobUid: string, notOlderThan?: string): Promise<V1Pod[]>
  /** The pods of every Job with these UIDs in the namespace: one list per 50 Jobs (label selector `controller-uid in (…)`), not one per Job. */
  listPodsOfJobs(namespace: string, jobUids: string[]): Promise<V1Pod[]>
  /**
   * Streams a container's log into the target `open` gives, as much of it as `keep` says;
   * `previous` reads the restart before the current one. A read that fails in a way that may pass
   * is retried, into a new target; a target that fails is not (its own error is thrown).
   */
  saveLog(namespace: string, pod: string, container: string, previous: boolean, keep: LogKeep, open: () => Promise<LogTarget>): Promise<SavedLog>
  /**
   * Follows a container's log (follow=true) from its start, at most `limitBytes` of it: the API
   * server's answer as a stream, which ends when the container does; `signal` ends it at once.
   * One attempt, no retry: a follow is for watching, the saved log is the record.
   */
  followLog(namespace: string, pod: string, container: string, limitBytes: number, signal: AbortSignal): Promise<Readable>
  /**
   * The Warning Events about the object with this UID (a Job or a pod: field selector
   * involvedObject.uid), which say why it failed or cannot start. Needs `list` on events.
   */
  listWarningEvents(namespace: string, uid: string): Promise<CoreV1Event[]>
  /** Every Event about the object with this UID (a pod: the scheduler's, the autoscaler's TriggeredScaleUp). Needs `list` on events. */
  listEventsOf(namespace: string, uid: string): Promise<CoreV1Event[]>
  /** Records a Kubernetes Event on the Job, once per Job and reason, so `kubectl get events` explains what happened. */
  recordEvent(job: JobRecord, event: JobEvent): Promise<void>
  /** API requests sent so far (each attempt counts), for the benchmark. */
  readonly requests: number
}
