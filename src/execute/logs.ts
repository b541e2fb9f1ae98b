// Saving a Job's pod logs: every container that ran (init containers and the previous restart
// included) of every pod, streamed as bytes to <logs-dir>/<namespace>/<job>/<pod>/<container>.log,
// each kept whole up to max-log-bytes, past it its head and its end (src/kube/log-cut.ts). A container that never ran has no log (a kubelet answers 400 to
// the read): a note says so instead. Pure I/O: it returns what it saved and what it could not; the
// executor decides.
import { STATUS_CODES } from 'node:http'
import { mkdir, open, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node'
import type { JobsClient, LogKeep, LogTarget } from '../kube/client.ts'
import { apiErrorMessage, statusCode } from '../kube/errors.ts'
import { ClusterUnreachable } from '../kube/retry.ts'

/** One saved container log, relative to logs-dir. */
export interface SavedLogFile {
  file: string
  bytes: number
  /** Longer than max-log-bytes: its middle was cut, and a line in the file says where and how much. */
  truncated: boolean
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
  /** The last lines of the logs (their real end), for the summary of a failed Job (kept only when asked). */
  tails?: { file: string; lines: string[] }[]
}

/** The Job whose logs are saved. */
export interface LogSource {
  namespace: string
  name: string
  uid: string
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

/** The target of one attempt to save a log to `path`: the file, created 0600 or emptied. */
function fileTarget(path: string): () => Promise<LogTarget> {
  return async () => {
    const handle = await open(path, 'w', 0o600)
    return {
      write: (body) => pipeline(body, handle.createWriteStream()),
      discard: () => handle.close()
    }
  }
}

/**
 * Saves the logs of every pod of the Job, each as `keep` says (with its last lines when asked);
 * never throws for a log it cannot save (it is a failure), only when the cluster is unreachable:
 * that is no fault of this Job's logs, and ends the run.
 */
export async function harvestLogs(client: JobsClient, job: LogSource, logsDir: string, keep: LogKeep): Promise<HarvestedLogs> {
  const neverRan: string[] = []
  const result: HarvestedLogs = { files: [], failures: [], neverRan, tails: keep.lastLines > 0 ? [] : undefined }
  let pods: V1Pod[]
  try {
    pods = await client.listPodsOfJob(job.namespace, job.uid)
  } catch (e) {
    if (e instanceof ClusterUnreachable) throw e
    result.failures.push(`cannot list its pods: ${apiErrorMessage(e)}`)
    return result
  }
  for (const pod of pods) {
    const podName = pod.metadata?.name ?? ''
    try {
      // Logs can hold secrets: only the runner's user may read them.
      await mkdir(join(logsDir, job.namespace, job.name, podName), { recursive: true, mode: 0o700 })
    } catch (e) {
      result.failures.push(`cannot create a directory in logs-dir: ${(e as NodeJS.ErrnoException).code ?? e}`)
      return result
    }
    const logs = podLogs(pod)
    for (const { container, previous } of logs.reads) {
      const file = join(job.namespace, job.name, podName, `${container}${previous ? '.previous' : ''}.log`)
      try {
        const saved = await client.saveLog(job.namespace, podName, container, previous, keep, fileTarget(join(logsDir, file)))
        result.files.push({ file, bytes: saved.bytes, truncated: saved.truncated })
        result.tails?.push({ file, lines: saved.lastLines })
      } catch (e) {
        if (e instanceof ClusterUnreachable) throw e
        result.failures.push(`cannot save the log of ${podName}/${container}${previous ? ' (previous)' : ''}: ${whyNotSaved(e)}`)
      }
    }
    for (const { container, why } of logs.neverRan) {
      const note = join(logsDir, job.namespace, job.name, podName, `${container}.never-ran.txt`)
      try {
        await writeFile(note, `job-sweeper: container ${container} of pod ${podName} never ran (${why}), so it has no log.\n`, { mode: 0o600 })
        neverRan.push(`${podName}/${container} (${why})`)
      } catch (e) {
        result.failures.push(`cannot note that ${podName}/${container} never ran: ${whyNotSaved(e)}`)
      }
    }
  }
  return result
}

/** A local file error (cannot write it: EACCES), or why the API server did not serve the log. */
function whyNotSaved(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code
  return typeof code === 'string' && code.startsWith('E') && !code.startsWith('ECONN') ? `cannot write it: ${code}` : readError(e)
}
