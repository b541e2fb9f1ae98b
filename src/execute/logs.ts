// Saving a Job's pod logs: every container (init containers and the previous restart included) of
// every pod, streamed as bytes to <logs-dir>/<namespace>/<job>/<pod>/<container>.log, each capped
// at max-log-bytes. Pure I/O: it returns what it saved and what it could not; the executor decides.
import { appendFile, mkdir, open } from 'node:fs/promises'
import { join } from 'node:path'
import type { V1Pod } from '@kubernetes/client-node'
import type { JobsClient } from '../kube/client.ts'
import { apiErrorMessage, statusCode } from '../kube/errors.ts'
import { ClusterUnreachable } from '../kube/retry.ts'

/** One saved container log, relative to logs-dir. */
export interface SavedLogFile {
  file: string
  bytes: number
  /** Cut at max-log-bytes (the file ends with a line saying so). */
  truncated: boolean
}

/** What was saved of one Job's logs, and what could not be. */
export interface HarvestedLogs {
  files: SavedLogFile[]
  /** One line per log that could not be read or written: the Job is then kept (on-log-failure: keep). */
  failures: string[]
  /** The last lines of the logs, for the summary of a failed Job (read only when asked). */
  tails?: { file: string; lines: string[] }[]
}

/** The Job whose logs are saved. */
export interface LogSource {
  namespace: string
  name: string
  uid: string
}

function containersOf(pod: V1Pod): { name: string; restarts: number }[] {
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]
  const restarts = (name: string): number => statuses.find((s) => s.name === name)?.restartCount ?? 0
  return [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].map((c) => ({ name: c.name, restarts: restarts(c.name) }))
}

/** Why a log could not be read: the API server's code, and for a 403 the right that is missing. */
function readError(e: unknown): string {
  const status = statusCode(e)
  if (status === undefined) return apiErrorMessage(e)
  return `${status} ${apiErrorMessage(e)}${status === 403 ? " (the credentials lack 'get' on pods/log)" : ''}`
}

/**
 * Saves the logs of every pod of the Job; never throws for a log it cannot save (it is a failure),
 * only when the cluster is unreachable: that is no fault of this Job's logs, and ends the run.
 */
export async function harvestLogs(client: JobsClient, job: LogSource, logsDir: string, limitBytes: number): Promise<HarvestedLogs> {
  const result: HarvestedLogs = { files: [], failures: [] }
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
    for (const container of containersOf(pod)) {
      for (const previous of container.restarts > 0 ? [true, false] : [false]) {
        const file = join(job.namespace, job.name, podName, `${container.name}${previous ? '.previous' : ''}.log`)
        try {
          const saved = await client.saveLog(job.namespace, podName, container.name, previous, limitBytes, join(logsDir, file))
          if (saved.truncated) await appendFile(join(logsDir, file), `\n[job-sweeper: cut at ${limitBytes} bytes (max-log-bytes)]\n`)
          result.files.push({ file, ...saved })
        } catch (e) {
          if (e instanceof ClusterUnreachable) throw e
          const code = (e as NodeJS.ErrnoException).code
          const why = typeof code === 'string' && code.startsWith('E') && !code.startsWith('ECONN') ? `cannot write it: ${code}` : readError(e)
          result.failures.push(`cannot save the log of ${podName}/${container.name}${previous ? ' (previous)' : ''}: ${why}`)
        }
      }
    }
  }
  return result
}

const TAIL_BYTES = 8192

/** The last `count` lines of a saved log (read from its end: the file may be large). */
export async function readTail(logsDir: string, file: string, count: number): Promise<string[]> {
  const handle = await open(join(logsDir, file), 'r')
  try {
    const { size } = await handle.stat()
    const length = Math.min(size, TAIL_BYTES)
    const buffer = Buffer.alloc(length)
    await handle.read(buffer, 0, length, size - length)
    const lines = buffer.toString('utf8').trimEnd().split('\n')
    // The first line of a cut window may be partial.
    return (size > length ? lines.slice(1) : lines).slice(-count)
  } finally {
    await handle.close()
  }
}
