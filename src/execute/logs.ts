// Saving a Job's pod logs before it is deleted: every container (init containers and the previous
// restart included) of every pod, to <logs-dir>/<namespace>/<job>/<pod>/<container>.log.
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { V1Pod } from '@kubernetes/client-node'
import type { JobsClient } from '../kube/client.ts'
import { apiErrorMessage } from '../kube/errors.ts'
import type { ExecuteContext, JobOutcome, RunResult } from './outcome.ts'

/** What was saved of one Job's logs, and what could not be. */
export interface HarvestedLogs {
  /** Files written, relative to logs-dir. */
  files: string[]
  /** The last lines of each written log, for the summary. */
  tails: { file: string; lines: string[] }[]
  /** One line per log that could not be read. */
  problems: string[]
}

const TAIL_LINES = 20

function containersOf(pod: V1Pod): { name: string; restarts: number }[] {
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]
  const restarts = (name: string): number => statuses.find((s) => s.name === name)?.restartCount ?? 0
  return [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].map((c) => ({ name: c.name, restarts: restarts(c.name) }))
}

/** Saves the logs of every pod of the Job with `jobUid`; never throws for a log it cannot read. */
export async function harvestLogs(client: JobsClient, namespace: string, job: string, jobUid: string, logsDir: string): Promise<HarvestedLogs> {
  const result: HarvestedLogs = { files: [], tails: [], problems: [] }
  let pods: V1Pod[]
  try {
    pods = await client.listPodsOfJob(namespace, jobUid)
  } catch (e) {
    result.problems.push(`cannot list the pods of Job ${namespace}/${job}: ${apiErrorMessage(e)}`)
    return result
  }
  if (pods.length === 0) result.problems.push(`Job ${namespace}/${job} has no pods left to read logs from`)
  for (const pod of pods) {
    const podName = pod.metadata?.name ?? ''
    const dir = join(logsDir, namespace, job, podName)
    await mkdir(dir, { recursive: true })
    for (const container of containersOf(pod)) {
      const reads = container.restarts > 0 ? [true, false] : [false]
      for (const previous of reads) {
        const file = join(namespace, job, podName, `${container.name}${previous ? '.previous' : ''}.log`)
        try {
          const text = await client.readLog(namespace, podName, container.name, previous)
          await writeFile(join(logsDir, file), text)
          result.files.push(file)
          const lines = text.trimEnd().split('\n')
          if (text.trim() !== '') result.tails.push({ file, lines: lines.slice(-TAIL_LINES) })
        } catch (e) {
          result.problems.push(`cannot read the log of ${podName}/${container.name}${previous ? ' (previous)' : ''}: ${apiErrorMessage(e)}`)
        }
      }
    }
  }
  return result
}

/** Harvests the Job's logs into its outcome; logs that cannot be read become the run's warnings. */
export async function saveLogsOf(out: JobOutcome, uid: string, client: JobsClient, logsDir: string, ctx: ExecuteContext, result: RunResult): Promise<void> {
  out.logs = await harvestLogs(client, out.namespace, out.name, uid, logsDir)
  for (const problem of out.logs.problems) result.warnings.push(`logs of Job ${out.namespace}/${out.name}: ${problem}`)
  ctx.info(`saved ${out.logs.files.length} log file(s) of ${out.status} Job ${out.namespace}/${out.name}`)
}
