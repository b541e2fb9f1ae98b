// The keeper's actions on one Job, as plan/keeper.ts decides them: hold it with the finalizer;
// archive its logs and job.json into the sink, then note where on the Job and let it go; or, at the
// hold's deadline, let it go unarchived with a Warning Event saying what was not saved and why.
//
// Every write of the finalizers carries the Job's resourceVersion: a merge patch replaces the list
// whole, so one written over a newer Job could drop another controller's finalizer. On a conflict
// the Job is read again and the same change made on what it is now.
import type { V1Pod } from '@kubernetes/client-node'
import type { JobsClient, LogKeep } from '../kube/jobs-client.ts'
import { toJobRecord, type JobRecord } from '../kube/job-record.ts'
import { ClusterUnreachable } from '../kube/retry.ts'
import { ARCHIVE_ANNOTATION, isHeld, LOGS_FINALIZER, withFinalizer, type KeeperStep } from '../plan/keeper.ts'
import { TTL_AFTER_ARCHIVE, ttlAtRelease, type ReleaseTtl } from '../plan/release-ttl.ts'
import { archiveState, podEnded, podsEvidence, stateWords, type ArchiveGap } from '../plan/archive-state.ts'
import { jobStatus } from '../plan/predicates.ts'
import type { LogSink } from '../store/sink.ts'
import { saveJobFile } from './job-file.ts'
import { harvestLogs, jobKey, unionByFile, type SavedLogFile } from './logs.ts'

/** What one action on a Job came to. */
export interface KeepOutcome {
  /** The action was carried out (or the Job was gone, so there is nothing left to do). */
  done: boolean
  /** The Job is gone (deleted, or replaced by another of its name). */
  gone?: boolean
  /** The Job as the last write left it (the informer's next event says the same, or newer). */
  job?: JobRecord
  /** A write was made (the Job was not already as wanted). */
  changed?: boolean
  /** archive: the bytes of logs saved. */
  bytes?: number
  /** archive: what could not be saved (the Job stays held, and the archive is tried again). */
  failures?: string[]
  /** archive: which of this keeper's attempts at the Job this was (job.json's savedBy.attempt). */
  attempt?: number
  /** archive: what its archive lacks (plan/archive-state.ts); empty when complete. */
  gaps?: ArchiveGap[]
  /** The hold was let go, and the TTL post left to its release written with it (plan/release-ttl.ts). */
  ttl?: ReleaseTtl
}

const ATTEMPTS = 5

/** The TTL written as the hold went (the one post left to its release), for a log line: `; ttlSecondsAfterFinished …`, or ''. */
export const ttlWords = (outcome: KeepOutcome): string => (outcome.ttl ? `; ${outcome.ttl.words}` : '')

/** The Job as its logs' keys and job.json name it. */
const subjectOf = (job: JobRecord): { namespace: string; name: string; uid: string } => ({
  namespace: job.metadata?.namespace ?? '',
  name: job.metadata?.name ?? '',
  uid: job.metadata?.uid ?? ''
})

/**
 * Patches the Job (its finalizers as `finalizers(job)` says, and `annotations`) on its current
 * version, reading it again after a conflict. Returns the Job as it is now, whether it was patched, or 'gone'.
 */
async function patchCurrent(
  client: JobsClient,
  job: JobRecord,
  finalizers: (job: JobRecord) => string[] | undefined,
  annotations?: Record<string, string>
): Promise<{ job: JobRecord; changed: boolean; ttl?: ReleaseTtl } | 'gone'> {
  const namespace = job.metadata?.namespace ?? ''
  const name = job.metadata?.name ?? ''
  const uid = job.metadata?.uid ?? ''
  let current = job
  for (let attempt = 1; ; attempt++) {
    const wanted = finalizers(current)
    const same = wanted === undefined || JSON.stringify(wanted) === JSON.stringify(current.metadata?.finalizers ?? [])
    const annotated = annotations === undefined || Object.entries(annotations).every(([k, v]) => current.metadata?.annotations?.[k] === v)
    if (same && annotated) return { job: current, changed: false }
    // The hold let go: the TTL post left to its release (plan/release-ttl.ts) goes in the same
    // patch, so the TTL controller never finds the Job released without it, nor a TTL on a Job held.
    const ttl = isHeld(current) && wanted !== undefined && !wanted.includes(LOGS_FINALIZER) ? ttlAtRelease(current, new Date()) : undefined
    const patched = await client.patchJob(
      namespace,
      name,
      { uid, resourceVersion: current.metadata?.resourceVersion },
      {
        metadata: {
          ...(same ? {} : { finalizers: wanted }),
          ...(annotations || ttl ? { annotations: { ...annotations, ...(ttl ? { [TTL_AFTER_ARCHIVE]: null } : {}) } } : {})
        },
        ...(ttl ? { spec: { ttlSecondsAfterFinished: ttl.ttlSeconds } } : {})
      }
    )
    if (patched === 'gone') return 'gone'
    if (patched !== 'conflict') return { job: patched, changed: true, ttl }
    if (attempt >= ATTEMPTS) throw new Error(`Job ${namespace}/${name} kept changing: ${ATTEMPTS} patches conflicted`)
    const fresh = await client.getJob(namespace, name)
    if (fresh === undefined || fresh.metadata?.uid !== uid) return 'gone'
    current = toJobRecord(fresh)
  }
}

/** Adds or removes the keeper's finalizer. */
export async function setHold(client: JobsClient, job: JobRecord, present: boolean): Promise<KeepOutcome> {
  const patched = await patchCurrent(client, job, (j) => withFinalizer(j, present))
  return patched === 'gone' ? { done: true, gone: true } : { done: true, job: patched.job, changed: patched.changed, ttl: patched.ttl }
}

/** What the keeper saved of a Job before its end (saveSoFar): the logs, the pods saved whole once they ended, the containers that never ran. */
export interface Earlier {
  files: SavedLogFile[]
  ended?: ReadonlySet<string>
  neverRan?: string[]
  /** Runs of containers that restart in place, saved as they ended (plan/restarts.ts runKey); their files are among `files`. */
  runs?: ReadonlySet<string>
}

/** Who archives, and what it did before: the keeper's process, and its own last attempt at the Job. */
export interface Archiver {
  /** The keeper's process (host and pid, as its Lease names it), for job.json. */
  keeper: string
  /** This keeper's last attempt at the Job, when it made one. */
  previousAttempt?: number
}

/**
 * Saves the Job's logs (every container that ran, init containers and previous runs included) and
 * its job.json into `sink`; once all are saved, notes where on the Job and removes the finalizer.
 * With anything not saved, the Job stays as it is (held), and the failures say why. Nothing is
 * read from the store: a writer that may only put objects (the documented policy) archives.
 */
export async function archiveJob(
  client: JobsClient,
  sink: LogSink,
  job: JobRecord,
  keep: LogKeep,
  now: () => Date,
  by: Archiver,
  earlier: Earlier = { files: [] }
): Promise<KeepOutcome> {
  const subject = subjectOf(job)
  // A pod saved whole once it ended is not read again: its logs are those of `earlier`.
  const read = (pod: V1Pod): boolean => !(podEnded(pod) && earlier.ended?.has(pod.metadata?.name ?? ''))
  // Nothing is written before the logs (no record of the attempt): a Job's archive costs one PUT
  // per log and one of job.json, which is written last and names the keeper and its attempt.
  const attempt = (by.previousAttempt ?? 0) + 1
  const harvested = await harvestLogs(client, { ...subject, resourceVersion: job.metadata?.resourceVersion, read, runsSaved: earlier.runs }, sink, keep)
  // Logs saved before the Job's end (saveSoFar: pods that ended, or were being deleted, some gone since): listed too.
  const logs = harvested.logs
  const neverRan = [...(logs.neverRan ?? []), ...(earlier.neverRan ?? []).filter((n) => !logs.neverRan?.includes(n))]
  const harvest = { ...harvested, logs: { ...logs, files: unionByFile(logs.files, earlier.files), neverRan } }
  // complete only when every container run the Job counts has its whole log here; else what is missing, and why.
  const archive = archiveState({
    succeeded: job.status?.succeeded,
    failed: job.status?.failed,
    pods: podsEvidence(harvest.pods),
    files: harvest.logs.files,
    gone: harvest.logs.gone,
    failures: harvest.logs.failures
  })
  const fileFailure = await saveJobFile(client, sink, { ...subject, status: jobStatus(job), job }, harvest, {
    phase: 'keeper',
    at: now(),
    keeper: by.keeper,
    attempt,
    archive
  })
  const failures = [...harvest.logs.failures, ...(fileFailure ? [fileFailure] : [])]
  const bytes = harvest.logs.files.reduce((sum, f) => sum + f.bytes, 0)
  if (failures.length > 0) return { done: false, failures, bytes, attempt }
  const where = `${sink.where.replace(/\/$/, '')}/${jobKey(subject)}/`
  if (archive.state === 'incomplete') await warnIncomplete(client, job, where, archive.gaps)
  const annotations = {
    [ARCHIVE_ANNOTATION.where]: where,
    [ARCHIVE_ANNOTATION.state]: stateWords(archive),
    [ARCHIVE_ANNOTATION.at]: now().toISOString()
  }
  const patched = await patchCurrent(client, job, (j) => (isHeld(j) ? withFinalizer(j, false) : undefined), annotations)
  return patched === 'gone'
    ? { done: true, gone: true, bytes, attempt, gaps: archive.gaps }
    : { done: true, bytes, attempt, gaps: archive.gaps, job: patched.job, changed: patched.changed, ttl: patched.ttl }
}

/** A `LogsIncomplete` Warning Event on the Job: its archive lacks these logs, and why (the annotation says so in short). */
async function warnIncomplete(client: JobsClient, job: JobRecord, where: string, gaps: ArchiveGap[]): Promise<void> {
  const what = gaps.map((g) => `${g.reason}: ${g.what}`)
  const message = `job-sweeper keeper: its archive at ${where} is incomplete: ${what.slice(0, 5).join('; ')}${what.length > 5 ? `; and ${what.length - 5} more (job.json lists them)` : ''}`
  try {
    await client.recordEvent(job, { type: 'Warning', reason: 'LogsIncomplete', message: message.slice(0, 1000) })
  } catch (e) {
    // job.json and the annotation say it too; the archive goes ahead without the Event.
    if (e instanceof ClusterUnreachable) throw e
  }
}

/**
 * Saves the logs of the Job's pods that ended before it, without job.json or a note on the Job: it
 * stays held, and its archive at the finish lists these with what it saves then. Returns the pods
 * as listed, for the follows of those being deleted.
 */
export async function saveSoFar(
  client: JobsClient,
  sink: LogSink,
  job: JobRecord,
  keep: LogKeep,
  savedEnded: ReadonlySet<string> = new Set(),
  runsSaved?: ReadonlySet<string>
): Promise<{ files: SavedLogFile[]; failures: string[]; ended: string[]; neverRan: string[]; pods: V1Pod[] }> {
  const subject = subjectOf(job)
  // The pods that ended and were not saved whole yet. One still running is read when it ends, or
  // at the Job's end; one being deleted is followed to its end (plan/stopping.ts), never read half
  // way here, where a read could land after the follow's and replace the whole log with its start.
  const read = (pod: V1Pod): boolean => podEnded(pod) && !savedEnded.has(pod.metadata?.name ?? '')
  const { logs, pods } = await harvestLogs(client, { ...subject, resourceVersion: job.metadata?.resourceVersion, read, runsSaved }, sink, keep)
  const ended = pods.filter(read).map((p) => p.metadata?.name ?? '')
  return { files: logs.files, failures: logs.failures, ended, neverRan: logs.neverRan ?? [], pods }
}

/**
 * The hold's deadline passed unarchived: a Warning Event on the Job says what was not saved and
 * why (`lastFailures`), then the finalizer goes, so the deletion completes.
 */
export async function giveUp(client: JobsClient, job: JobRecord, step: KeeperStep, where: string, lastFailures: string[]): Promise<KeepOutcome> {
  const why = lastFailures.length > 0 ? lastFailures.slice(0, 3).join('; ') : 'no archive of it was completed'
  try {
    await client.recordEvent(job, {
      type: 'Warning',
      reason: 'LogsNotArchived',
      message: `job-sweeper keeper: its logs were not archived to ${where}: ${why}. Released unarchived: ${step.reason}.`.slice(0, 1000)
    })
  } catch (e) {
    // The Event explains; the release is what unblocks the deletion, and goes ahead without it.
    if (e instanceof ClusterUnreachable) throw e
  }
  return setHold(client, job, false)
}
