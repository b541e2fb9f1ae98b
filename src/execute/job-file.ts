// job.json, beside a Job's saved logs (<namespace>/<job>/<uid>/job.json in logs-dir, a directory or a
// bucket): what the Job was when its logs were saved (its status, why it failed, the Warning
// Events that explain it) and what was saved of it (each log with its size, whole or cut, and what
// could not be saved). It is written after the logs: a job.json that is there lists logs that are
// there. jobFile() is pure; saveJobFile() reads the Events and writes it.
import type { CoreV1Event, V1Pod } from '@kubernetes/client-node'
import type { JobsClient } from '../kube/client.ts'
import { apiErrorMessage, statusCode } from '../kube/errors.ts'
import { ClusterUnreachable } from '../kube/retry.ts'
import { explainingUids } from '../observe/job-events.ts'
import { failureReason } from '../observe/job-failure.ts'
import type { ArchiveState } from '../plan/archive-state.ts'
import type { PlannedJob } from '../plan/plan.ts'
import type { Phase } from '../settings/settings.ts'
import { SinkError, writeText, type LogSink } from '../store/sink.ts'
import { jobKey, type HarvestedLogs } from './logs.ts'

/** One Warning Event about the Job or one of its pods. */
export interface JobFileEvent {
  /** `Job <name>` or `Pod <name>`. */
  object: string
  reason?: string
  message?: string
  count?: number
  /** ISO 8601. */
  lastSeen?: string
}

/** The content of job.json. */
export interface JobFile {
  /** The format: a reader can check it. */
  format: 'job-sweeper.io/job/v1'
  namespace: string
  name: string
  uid: string
  /**
   * Which phase (or the keeper) saved the logs, and when (ISO 8601); the workflow run, when there is
   * one; the keeper that archived it (its process) and which of its attempts at this Job completed
   * (1 its first: each attempt is recorded under attempts/ first, so one stopped mid-archive shows).
   */
  savedBy: { phase: SavedBy; at: string; workflowRun?: string; keeper?: string; attempt?: number }
  /** The Job's status as job-sweeper decides on it: failed, succeeded, running, stuck… */
  status: string
  /** The Job's conditions that hold (type, reason, since), its start and completion, and its pods' counts. */
  conditions: { type: string; reason?: string; since?: string }[]
  startTime?: string
  completionTime?: string
  pods: { active?: number; succeeded?: number; failed?: number }
  /** Why it failed, or never started, in words (the summary's). */
  failureReason?: string
  /** The Warning Events of the Job and its newest pods (read for Jobs that did not succeed), newest first. */
  events?: JobFileEvent[]
  /** Why the Events could not be read (the credentials may lack list on events). */
  eventsError?: string
  /** Each saved log, relative to this file's folder, with its size and whether it is whole. */
  logs: { file: string; bytes: number; complete: boolean; logBytes?: number; cutBytes?: number }[]
  /** Containers that never ran, so have no log. */
  neverRan: string[]
  /** Logs the node no longer had (a finished pod's older runs, which the kubelet removes). */
  gone?: string[]
  /** What could not be saved: the Job is kept unless on-log-failure is delete. */
  failures: string[]
  /**
   * The keeper's archive: `complete` (every container run the Job's status counts has its whole log
   * here) or `incomplete`, and what is missing and why (plan/archive-state.ts).
   */
  state?: 'complete' | 'incomplete'
  missing?: { reason: string; what: string }[]
}

/** A phase, or the keeper (job-sweeper keeper). */
export type SavedBy = Phase | 'keeper'

/** The Job a job.json is of: a planned one, or one the keeper archives. */
export type JobFileSubject = Pick<PlannedJob, 'namespace' | 'name' | 'uid' | 'status' | 'job'>

const iso = (value: Date | string | undefined): string | undefined => (value === undefined ? undefined : new Date(value).toISOString())

const eventTime = (e: CoreV1Event): string | undefined => iso((e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp) as Date | string | undefined)

/** job.json for the Job `p` whose logs are `logs`, read from `pods`, with the Events read (or why not). */
export function jobFile(
  p: JobFileSubject,
  logs: HarvestedLogs,
  pods: V1Pod[],
  events: { events?: CoreV1Event[]; error?: string },
  saved: { phase: SavedBy; at: Date; workflowRun?: string; keeper?: string; attempt?: number; archive?: ArchiveState }
): JobFile {
  const status = p.job.status ?? {}
  const folder = `${jobKey(p)}/`
  const why = p.status === 'failed' ? failureReason(p.job, pods, events.events) : p.job.neverStarted
  return {
    format: 'job-sweeper.io/job/v1',
    namespace: p.namespace,
    name: p.name,
    uid: p.uid,
    savedBy: { phase: saved.phase, at: saved.at.toISOString(), workflowRun: saved.workflowRun, keeper: saved.keeper, attempt: saved.attempt },
    status: p.status,
    conditions: (status.conditions ?? []).map((c) => ({ type: c.type, reason: c.reason, since: iso(c.lastTransitionTime) })),
    startTime: iso(status.startTime),
    completionTime: iso(status.completionTime),
    pods: { active: status.active, succeeded: status.succeeded, failed: status.failed },
    failureReason: why,
    events: events.events
      ?.map((e) => ({
        object: `${e.involvedObject?.kind ?? 'object'} ${e.involvedObject?.name ?? ''}`.trim(),
        reason: e.reason,
        message: e.message,
        count: e.count,
        lastSeen: eventTime(e)
      }))
      .sort((a, b) => (b.lastSeen ?? '').localeCompare(a.lastSeen ?? '')),
    eventsError: events.error,
    logs: logs.files.map((f) => ({
      file: f.file.startsWith(folder) ? f.file.slice(folder.length) : f.file,
      bytes: f.bytes,
      complete: !f.truncated,
      logBytes: f.logBytes,
      cutBytes: f.truncated ? f.cutBytes : undefined
    })),
    neverRan: logs.neverRan ?? [],
    gone: logs.gone?.length ? logs.gone : undefined,
    failures: logs.failures,
    state: saved.archive?.state,
    missing: saved.archive?.gaps.map(({ reason, what }) => ({ reason, what }))
  }
}

/** The Warning Events of the Job and its newest pods; for a Job that succeeded none are read (they rarely say anything, and cost a list each). */
async function eventsOf(client: JobsClient, p: JobFileSubject, pods: V1Pod[]): Promise<{ events?: CoreV1Event[]; error?: string }> {
  if (p.status === 'succeeded') return {}
  try {
    const lists = await Promise.all(explainingUids(p.uid, pods).map((uid) => client.listWarningEvents(p.namespace, uid)))
    return { events: lists.flat() }
  } catch (e) {
    if (e instanceof ClusterUnreachable) throw e
    const code = statusCode(e)
    return { error: `${code === undefined ? '' : `${code} `}${apiErrorMessage(e)}${code === 403 ? " (the credentials lack 'list' on events)" : ''}` }
  }
}

/**
 * Writes the Job's job.json after its logs; returns why it could not be written (a failure of the
 * harvest, like a log's), or undefined. Throws only when the cluster is unreachable.
 */
export async function saveJobFile(
  client: JobsClient,
  sink: LogSink,
  p: JobFileSubject,
  harvest: { logs: HarvestedLogs; pods: V1Pod[] },
  saved: { phase: SavedBy; at: Date; workflowRun?: string; keeper?: string; attempt?: number; archive?: ArchiveState }
): Promise<string | undefined> {
  const events = await eventsOf(client, p, harvest.pods)
  const file = jobFile(p, harvest.logs, harvest.pods, events, saved)
  try {
    await writeText(sink, `${jobKey(p)}/job.json`, `${JSON.stringify(file, null, 2)}\n`, 'application/json')
    return undefined
  } catch (e) {
    return `cannot save job.json: ${e instanceof SinkError ? e.message : String(e)}`
  }
}
