// Saving a Job's pod logs: every container that ran (init containers and the previous restart
// included) of every pod, streamed as bytes into the sink logs-dir names (a directory or a bucket)
// at <namespace>/<job>/<uid>/<pod>/<container>.log (jobKey), each kept whole up to max-log-bytes, past it its head
// and its end (src/kube/log-cut.ts). A container that never ran has no log (a kubelet answers 400
// to the read): a note says so instead. Pure I/O: it returns what it saved and what it could not;
// the executor decides.
import { STATUS_CODES } from 'node:http'
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node'
import type { JobsClient, LogKeep } from '../kube/client.ts'
import { apiErrorMessage, statusCode } from '../kube/errors.ts'
import { LogGone } from '../kube/log-stream.ts'
import { ClusterUnreachable } from '../kube/retry.ts'
import { SinkError, writeText, type LogSink } from '../store/sink.ts'
import { previousSaved, runFile, type EndedRun } from '../plan/restarts.ts'

/** How logs and notes are stored: plain text, in UTF-8 as containers mostly write. */
export const TEXT = 'text/plain; charset=utf-8'

/** One saved container log. */
export interface SavedLogFile {
  /** Its key under logs-dir: <namespace>/<job>/<uid>/<pod>/<container>.log. */
  file: string
  /** Bytes stored (with a cut log's marker line). */
  bytes: number
  /** Longer than max-log-bytes: its middle was cut, and a line in the file says where and how much. */
  truncated: boolean
  /** Followed (the keeper's, of a pod being stopped) and ended before its container did: its last lines may be missing. */
  unfinished?: boolean
  /** Bytes of the log as the API server sent it, and how many of them were cut out. */
  logBytes?: number
  cutBytes?: number
}

/** `primary`, then the files of `extra` it has no file of the same key for (a later save of a key replaces an earlier one). */
export function unionByFile(primary: SavedLogFile[], extra: SavedLogFile[]): SavedLogFile[] {
  const keys = new Set(primary.map((f) => f.file))
  return [...primary, ...extra.filter((f) => !keys.has(f.file))]
}

/** What was saved of one Job's logs, and what could not be. */
export interface HarvestedLogs {
  files: SavedLogFile[]
  /** One line per log that could not be read or written: the Job is then kept (on-log-failure: keep). */
  failures: string[]
  /**
   * Containers that never ran, now or before a restart (`<pod>/<container> (waiting: PodInitializing)`):
   * they have no log, and a note file says so in their place.
   */
  neverRan?: string[]
  /**
   * Logs the node no longer has (`<pod>/<container> (previous run)`): the kubelet removed that
   * container, as it does with a finished pod's older runs; a note file stands in their place.
   */
  gone?: string[]
  /** The last lines of the logs (their real end), for the summary of a failed Job (kept only when asked). */
  tails?: { file: string; lines: string[] }[]
}

/** The Job whose logs are saved. */
export interface LogSource {
  namespace: string
  name: string
  uid: string
  /** The Job's resourceVersion as the caller saw it: its pods are listed no older than that (from the API server's cache). */
  resourceVersion?: string
  /** Which of the listed pods to read (every one when undefined): the keeper reads a pod saved whole once it ended only once. */
  read?: (pod: V1Pod) => boolean
  /** Runs saved as they ended (plan/restarts.ts runKey): a previous run among them is not read again. */
  runsSaved?: ReadonlySet<string>
}

/** The logs of one pod to read (each container that ran, and its previous run), and the containers that never ran. */
export interface PodLogs {
  reads: { container: string; previous: boolean }[]
  neverRan: { container: string; why: string }[]
}

/**
 * A container ran if it runs or ended (state running or terminated), or ran before a restart
 * (lastState.terminated, restartCount): only those have a log. One still waiting that never ran
 * (PodInitializing behind a failed init container, ImagePullBackOff, CreateContainerConfigError),
 * or one of a pod never scheduled (no status at all), has none, and the kubelet answers 400.
 */
export function podLogs(pod: V1Pod): PodLogs {
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]
  const result: PodLogs = { reads: [], neverRan: [] }
  for (const { name } of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
    const status: V1ContainerStatus | undefined = statuses.find((s) => s.name === name)
    const restarts = status?.restartCount ?? 0
    const ran = status?.state?.running || status?.state?.terminated || status?.lastState?.terminated || restarts > 0
    if (!ran) {
      const waiting = status?.state?.waiting?.reason
      result.neverRan.push({ container: name, why: waiting ? `waiting: ${waiting}` : `pod ${pod.status?.phase ?? 'Pending'}, no container status` })
      continue
    }
    for (const previous of restarts > 0 ? [true, false] : [false]) result.reads.push({ container: name, previous })
  }
  return result
}

/** Why a log could not be read: the API server's code and message, and for a 403 the right that is missing. */
function readError(e: unknown): string {
  const status = statusCode(e)
  if (status === undefined) return apiErrorMessage(e)
  const name = STATUS_CODES[status] ?? `HTTP ${status}`
  const message = apiErrorMessage(e)
  return `${status} ${name}${message === name ? '' : `: ${message}`}${status === 403 ? " (the credentials lack 'get' on pods/log)" : ''}`
}

/** What one harvest read and saved: its logs (kept in the Job's outcome), and the pods they are of. */
export interface Harvest {
  logs: HarvestedLogs
  /** The Job's pods as listed for the harvest (for job.json; not kept in the outcome). */
  pods: V1Pod[]
}

/**
 * The key of a Job's folder under logs-dir, the one layout of every phase and of the keeper:
 * `<namespace>/<name>/<uid>`. A logs-dir outlives every Job of a name (the next release's
 * app-migrate, every before-hook-creation hook), each of which would overwrite the last one's
 * job.json and notes under its name alone; clusters sharing a bucket each take a prefix. Versions
 * before the uid wrote in `<namespace>/<name>/`: nothing writes there now, so nothing of theirs is
 * written over. A Job with no uid (a manifest, not a Job from the cluster) has no folder of its own.
 */
export const jobKey = (job: { namespace: string; name: string; uid?: string }): string =>
  job.uid ? `${job.namespace}/${job.name}/${job.uid}` : `${job.namespace}/${job.name}`

/**
 * Saves the logs of every pod of the Job into `sink`, each as `keep` says (with its last lines
 * when asked); never throws for a log it cannot save (it is a failure), only when the cluster is
 * unreachable: that is no fault of this Job's logs, and ends the run.
 */
export async function harvestLogs(client: JobsClient, job: LogSource, sink: LogSink, keep: LogKeep, ready?: Promise<void>): Promise<Harvest> {
  const neverRan: string[] = []
  const logs: HarvestedLogs = { files: [], failures: [], neverRan, tails: keep.lastLines > 0 ? [] : undefined }
  let pods: V1Pod[]
  try {
    pods = await client.listPodsOfJob(job.namespace, job.uid, job.resourceVersion)
  } catch (e) {
    if (e instanceof ClusterUnreachable) throw e
    logs.failures.push(`cannot list its pods: ${apiErrorMessage(e)}`)
    return { logs, pods: [] }
  }
  // What must be written before any log (the keeper's attempt record), written while the pods were listed.
  await ready
  // Every read and note of every pod, LOG_READS_PER_JOB at a time (a Job of many pods does not
  // hold one worker for the sum of its reads), their results taken in the pods' order.
  const tasks: (() => Promise<LogResult>)[] = []
  for (const pod of pods) {
    if (job.read && !job.read(pod)) continue
    const podName = pod.metadata?.name ?? ''
    const podKey = `${jobKey(job)}/${podName}`
    const wanted = podLogs(pod)
    for (const { container, previous } of wanted.reads) {
      if (previous && previousSaved(pod, container, job.runsSaved)) continue
      tasks.push(() => readOne(client, sink, keep, job.namespace, { podKey, podName, container, previous }))
    }
    for (const { container, why } of wanted.neverRan) tasks.push(() => noteNeverRan(sink, { podKey, podName, container, why }))
  }
  for (const result of await inOrder(tasks, LOG_READS_PER_JOB)) {
    if ('file' in result) {
      logs.files.push(result.file)
      logs.tails?.push({ file: result.file.file, lines: result.lastLines })
    } else if ('gone' in result) (logs.gone ??= []).push(result.gone)
    else if ('neverRan' in result) neverRan.push(result.neverRan)
    else logs.failures.push(result.failure)
  }
  return { logs, pods }
}

/**
 * The kubelet's refusal (400) of a previous run it no longer has, as kubelets before 1.37 answer
 * (kubelet_pods.go: `previous terminated container "main" in pod "p" not found`); later ones
 * answer 200 with an error as the body (LogGone). Its message, or undefined for any other error.
 */
function goneRefusal(e: unknown, previous: boolean): string | undefined {
  if (!previous || statusCode(e) !== 400) return undefined
  const message = apiErrorMessage(e)
  return /^previous terminated container "[^"]+" in pod "[^"]+" not found$/.test(message) ? message : undefined
}

/** How many of one Job's logs are read (and notes written) at once. */
export const LOG_READS_PER_JOB = 4

/** What one read or note came to: a saved file, a log the node no longer has, a container that never ran, or a failure. */
export type LogResult = { file: SavedLogFile; lastLines: string[] } | { gone: string } | { neverRan: string } | { failure: string }

/** The results of `tasks`, at most `limit` running at once, in the tasks' order; the first that throws (the cluster unreachable) starts no more and is thrown. */
async function inOrder<T>(tasks: (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results: T[] = new Array<T>(tasks.length)
  let next = 0
  let failed = false
  const lane = async (): Promise<void> => {
    while (!failed && next < tasks.length) {
      const i = next++
      try {
        results[i] = await tasks[i]()
      } catch (e) {
        failed = true
        throw e
      }
    }
  }
  const lanes = Array.from({ length: Math.min(limit, tasks.length) }, lane)
  const settled = await Promise.allSettled(lanes)
  const rejected = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected')
  if (rejected) throw rejected.reason
  return results
}

/** Reads one container's log (or its previous run) into the sink; never throws but for an unreachable cluster. */
async function readOne(
  client: JobsClient,
  sink: LogSink,
  keep: LogKeep,
  namespace: string,
  run: { podKey: string; podName: string; container: string; previous: boolean; file?: string }
): Promise<LogResult> {
  const { podKey, podName, container, previous } = run
  const file = run.file ?? `${podKey}/${container}${previous ? '.previous' : ''}.log`
  try {
    const saved = await client.saveLog(namespace, podName, container, previous, keep, () => sink.open(file, TEXT))
    return {
      file: { file, bytes: saved.bytes, truncated: saved.truncated, logBytes: saved.logBytes, cutBytes: saved.cutBytes },
      lastLines: saved.lastLines
    }
  } catch (e) {
    if (e instanceof ClusterUnreachable) throw e
    const gone = e instanceof LogGone ? e.message : goneRefusal(e, previous)
    if (gone !== undefined) return noteGone(sink, { ...run, said: gone })
    return { failure: `cannot save the log of ${podName}/${container}${previous ? ' (previous)' : ''}: ${whyNotSaved(e)}` }
  }
}

/**
 * Saves a run of a container that restarts in place as it ended (while it is the container's
 * previous run) into its own file, `<pod>/<container>.run-<id>.log` (plan/restarts.ts): the
 * kubelet keeps no run before the previous one. Never throws but for an unreachable cluster.
 */
export function saveEndedRun(
  client: JobsClient,
  sink: LogSink,
  keep: LogKeep,
  job: { namespace: string; name: string; uid: string },
  run: EndedRun
): Promise<LogResult> {
  const podKey = `${jobKey(job)}/${run.pod}`
  return readOne(client, sink, keep, job.namespace, {
    podKey,
    podName: run.pod,
    container: run.container,
    previous: true,
    file: `${podKey}/${runFile(run.container, run.id)}`
  })
}

/** Notes, in its log's place, that a container never ran (it has none). */
async function noteNeverRan(sink: LogSink, c: { podKey: string; podName: string; container: string; why: string }): Promise<LogResult> {
  const note = `job-sweeper: container ${c.container} of pod ${c.podName} never ran (${c.why}), so it has no log.\n`
  try {
    await writeText(sink, `${c.podKey}/${c.container}.never-ran.txt`, note, TEXT)
    return { neverRan: `${c.podName}/${c.container} (${c.why})` }
  } catch (e) {
    return { failure: `cannot note that ${c.podName}/${c.container} never ran: ${whyNotSaved(e)}` }
  }
}

/** Notes, in the log's place, that the node no longer has it (not a failure: no retry or wait can bring it back). */
async function noteGone(sink: LogSink, gone: { podKey: string; podName: string; container: string; previous: boolean; said: string }): Promise<LogResult> {
  const run = gone.previous ? 'the previous run of container' : 'container'
  const note = `job-sweeper: the node no longer has the log of ${run} ${gone.container} of pod ${gone.podName}: the kubelet removed that container (it keeps only the newest run of each container of a finished pod), so it could not be saved. The kubelet said: ${gone.said}\n`
  try {
    await writeText(sink, `${gone.podKey}/${gone.container}${gone.previous ? '.previous' : ''}.gone.txt`, note, TEXT)
    return { gone: `${gone.podName}/${gone.container}${gone.previous ? ' (previous run)' : ''}` }
  } catch (e) {
    return { failure: `cannot note that the log of ${gone.podName}/${gone.container} is gone: ${whyNotSaved(e)}` }
  }
}

/** Why the sink could not store it (its own words), or why the API server did not serve the log. */
function whyNotSaved(e: unknown): string {
  return e instanceof SinkError ? e.message : readError(e)
}
