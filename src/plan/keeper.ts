// What the keeper does with a Job, as a pure function of the Job and a time, as Kubernetes' TTL
// controller decides with needsCleanup(job) and timeLeft(job, now). The keeper archives a Job's
// logs as soon as it finishes (its pods may be gone by the time it is deleted), and holds a Job of
// its scope with a finalizer until then, so that nothing that deletes it (the TTL controller,
// kubectl delete, helm uninstall, a namespace's deletion) takes its logs first. A hold is bounded:
// `holdDeadlineSeconds` after the deletion was asked, the finalizer goes, archived or not, but
// never before one archive was tried (a keeper back from an outage longer than the deadline finds
// the pods and their logs still there: the hold kept them).
import type { JobRecord } from '../kube/job-record.ts'
import { ALL_NAMESPACES, KEEPER_LEASE } from '../kube/lease.ts'
import type { KeeperLease, KeeperPresence } from '../observe/keeper-lease.ts'
import { INPUT } from '../settings/inputs.ts'
import { isFinished } from './predicates.ts'

/** The keeper's finalizer: the Job's logs are not archived yet. */
export const LOGS_FINALIZER = 'job-sweeper.io/logs'

/** Annotations the keeper writes on a Job once its logs are archived. */
export const ARCHIVE_ANNOTATION = {
  /** Where: `<logs-dir>/<namespace>/<job>/<uid>/` (a directory or s3://bucket/prefix; the Job's uid last: isArchived). */
  where: 'job-sweeper.io/logs',
  /** `complete`, or `incomplete: <what could not be saved>` (cut short at the hold's deadline: see the Warning Event). */
  state: 'job-sweeper.io/logs-state',
  /** When (RFC 3339). */
  at: 'job-sweeper.io/logs-at'
} as const

/**
 * - `hold`: add the finalizer (a Job of the scope not held yet, running or finished unarchived);
 * - `save`: save what its pods wrote so far, still held, not archived yet: some are being deleted
 *   (a namespace's deletion, an eviction, a preemption remove a pod before its Job finishes), or
 *   ended before it (a retried Job's failed attempts, a parallel Job's pods);
 * - `archive`: save its logs and job.json, then note where and let it go (it finished, or is being deleted);
 * - `release`: remove the finalizer (archived already);
 * - `give-up`: remove the finalizer unarchived (the hold's deadline passed), saying so in a Warning Event;
 * - `none`: nothing to do now.
 */
export type KeeperAction = 'hold' | 'save' | 'archive' | 'release' | 'give-up' | 'none'

export interface KeeperStep {
  action: KeeperAction
  /** Why, in words for a log line or an Event. */
  reason: string
}

const time = (value: Date | string | undefined): number | undefined => (value === undefined ? undefined : new Date(value).getTime())

/**
 * The keeper archived this very Job: its note (`job-sweeper.io/logs`) names where, and the keeper
 * writes it only as `<logs-dir>/<namespace>/<job>/<uid>/`, this Job's uid last. A note the Job was
 * created with (copied from a template or an exported manifest, or planted so that its logs are
 * never archived) cannot name a uid given only at its creation: such a Job is held and archived.
 * A note written by a keeper before the keys carried the uid names none either: that Job is
 * archived once more, under its uid, a folder of its own (the earlier archive, in
 * `<namespace>/<job>/`, is not written to), its state as what is left to read says.
 */
export const isArchived = (job: JobRecord): boolean => notedUid(job) === 'this'

/**
 * Whether the Job's note names its uid (`this`), names none or another (`not-this`: not the
 * keeper's archive of this Job), or there is no note (undefined).
 */
function notedUid(job: JobRecord): 'this' | 'not-this' | undefined {
  const where = job.metadata?.annotations?.[ARCHIVE_ANNOTATION.where]
  if (where === undefined) return undefined
  const uid = job.metadata?.uid
  return uid && where.endsWith(`/${uid}/`) ? 'this' : 'not-this'
}
export const isHeld = (job: JobRecord): boolean => job.metadata?.finalizers?.includes(LOGS_FINALIZER) === true

/**
 * Where the keeper archived the Job's logs and in what state, as its annotations say; undefined
 * when it did not, or when its note does not name its uid (isArchived: a note copied or planted,
 * or an older keeper's uid-less one, is not the keeper's archive of this Job).
 */
export function keeperArchive(job: JobRecord): { where: string; state: string } | undefined {
  if (!isArchived(job)) return undefined
  const annotations = job.metadata?.annotations
  const where = annotations?.[ARCHIVE_ANNOTATION.where] ?? ''
  return { where, state: annotations?.[ARCHIVE_ANNOTATION.state] ?? 'state not given' }
}

/** When the hold of a Job being deleted ends (ms since the epoch), or undefined when it is not being deleted. */
export function holdEndsAt(job: JobRecord, holdDeadlineSeconds: number): number | undefined {
  const asked = time(job.metadata?.deletionTimestamp)
  return asked === undefined ? undefined : asked + holdDeadlineSeconds * 1000
}

/**
 * What the keeper does next with `job` (a Job of its scope) at `now`; `tried`: this keeper has
 * tried to archive it at least once (past the hold's deadline, it gives up only then).
 */
export function keeperStep(job: JobRecord, now: Date, holdDeadlineSeconds: number, tried = false): KeeperStep {
  const step = stepOf(job, now, holdDeadlineSeconds, tried)
  if (notedUid(job) !== 'not-this' || step.action === 'none') return step
  return { ...step, reason: `${step.reason} (its ${ARCHIVE_ANNOTATION.where} note does not name its uid: not the keeper's archive of this Job)` }
}

function stepOf(job: JobRecord, now: Date, holdDeadlineSeconds: number, tried: boolean): KeeperStep {
  const held = isHeld(job)
  if (isArchived(job)) return held ? { action: 'release', reason: 'its logs are archived' } : { action: 'none', reason: 'its logs are archived' }
  const ends = holdEndsAt(job, holdDeadlineSeconds)
  if (ends !== undefined) {
    if (!held) return { action: 'none', reason: 'being deleted, and not held: too late to archive' }
    if (now.getTime() >= ends) {
      if (tried) return { action: 'give-up', reason: `its deletion was asked more than ${holdDeadlineSeconds}s ago (hold-deadline)` }
      return {
        action: 'archive',
        reason: `its deletion was asked more than ${holdDeadlineSeconds}s ago (hold-deadline), and no archive was tried yet: one first`
      }
    }
    return { action: 'archive', reason: isFinished(job) ? 'finished, and being deleted' : 'being deleted before it finished: what its pods wrote' }
  }
  // Held first, finished or not: an archive that fails is tried again, and the hold keeps the Job
  // (its TTL may come first) until one completes or the hold's deadline passes.
  if (!held) return { action: 'hold', reason: `${isFinished(job) ? 'finished' : 'running'}: held until its logs are archived` }
  if (isFinished(job)) return { action: 'archive', reason: 'finished' }
  // A pod deleted before its Job finished is gone, logs and all, once it stopped (the kubelet then
  // removes it): a namespace's deletion deletes pods before their Jobs. What it wrote is saved
  // while it terminates; the archive at the finish lists it, whether the pod is still there or not.
  const terminating = job.status?.terminating ?? 0
  if (terminating > 0) return { action: 'save', reason: `${terminating} of its pods being deleted: what they wrote so far` }
  // A pod that ended before its Job (each failed attempt of a retried Job, each pod of a parallel
  // or indexed one) is saved now, not at the Job's end: PodGC, a lost node or `kubectl delete pod`
  // may take it first. The Job controller counts it in the same sync that sees it end.
  const ended = (job.status?.failed ?? 0) + (job.status?.succeeded ?? 0)
  if (ended > 0) return { action: 'save', reason: `${ended} of its pods ended before it: their logs now` }
  return { action: 'none', reason: 'running, held' }
}

/** The finalizers of `job` with the keeper's added, or removed. */
export function withFinalizer(job: JobRecord, present: boolean): string[] {
  const others = (job.metadata?.finalizers ?? []).filter((f) => f !== LOGS_FINALIZER)
  return present ? [...others, LOGS_FINALIZER] : others
}

/**
 * Why no keeper runs by `lease` (nobody holds it, or it did not change while this run watched it
 * for its duration, by this run's clock), 'unknown' when the watch ended before it could tell (the
 * run cancelled), or undefined when one runs (seen renewing it).
 */
function notRunning(lease: KeeperLease): string | 'unknown' | undefined {
  const { liveness } = lease
  if (!lease.holder || liveness?.state === 'free') return `no keeper: its Lease ${KEEPER_LEASE} is not held`
  if (liveness === undefined) return 'unknown'
  if (liveness.state === 'stale') return `no keeper: its Lease ${KEEPER_LEASE} was not renewed in the ${liveness.watchedSeconds}s this run watched it`
  return undefined
}

const UNWATCHED = `the keeper's Lease ${KEEPER_LEASE} was not watched long enough to tell whether a keeper renews it`

/** Whether the keeper of `lease` keeps `namespace` (it names it, or every namespace). */
const keepsNamespace = (lease: KeeperLease, namespace: string): boolean => lease.namespaces.includes(namespace) || lease.namespaces.includes(ALL_NAMESPACES)

/**
 * Whether a keeper runs for a Job in `namespace` with `labels` (as post leaves them): its Lease is
 * held and this run saw it renewed, and its scope (namespaces and selector) takes the
 * Job. `post` adds the finalizer only then: with no keeper to remove it, a hold would keep the Job
 * until someone removed it by hand. `why` says what is missing, for the run's log.
 */
export function keeperTakes(
  lease: KeeperLease | undefined,
  namespace: string,
  labels: Record<string, string>,
  matches: (selector: string, labels: Record<string, string>) => boolean
): { takes: true } | { takes: false; why: string } {
  if (lease === undefined) return { takes: false, why: `no keeper: no Lease ${KEEPER_LEASE}` }
  const down = notRunning(lease)
  if (down !== undefined) return { takes: false, why: down === 'unknown' ? UNWATCHED : down }
  if (lease.selector === undefined) return { takes: false, why: `the keeper's Lease does not say which Jobs it keeps (a keeper older than post)` }
  if (!keepsNamespace(lease, namespace))
    return { takes: false, why: `the keeper does not keep namespace ${namespace} (it keeps ${lease.namespaces.join(', ')})` }
  if (!matches(lease.selector, labels)) return { takes: false, why: `the keeper keeps Jobs matching ${lease.selector}` }
  return { takes: true }
}

/** One line for the run's log: the keeper post found, or why it holds no Job for one. */
export function keeperLine(namespace: string, lease: KeeperLease | undefined): string {
  const where = `${INPUT.keeperNamespace} '${namespace}'`
  if (lease === undefined) return `${where}: no keeper (no Lease ${KEEPER_LEASE}): no Job is held for one`
  const down = notRunning(lease)
  if (down === 'unknown') return `${where}: ${UNWATCHED}: no Job is held for one`
  if (down !== undefined) return `${where}: ${down.replace(/^no keeper: /, 'no keeper running: ')}: no Job is held for one`
  const seen = lease.liveness?.state === 'renewed' ? ` after ${lease.liveness.watchedSeconds}s` : ''
  return `${where}: a keeper runs (${lease.holder}, its Lease seen renewed${seen}), keeping Jobs matching ${lease.selector ?? '?'} in ${lease.namespaces.includes(ALL_NAMESPACES) ? 'all namespaces' : lease.namespaces.join(', ') || '?'}: the Jobs it takes are held with ${LOGS_FINALIZER} until it archives their logs`
}

/**
 * Why no keeper will let go of `job`'s hold (a Job held with the keeper's finalizer), or undefined
 * when one may: this run saw its Lease renewed and it keeps the Job's namespace (a keeper lets go
 * of every Job held in its namespaces, whatever its labels), or the Lease was not read or not
 * watched to the end (no keeper-namespace, refused, cancelled: nothing is known, so nothing is
 * taken from the keeper). pre and sweep save such a
 * Job's logs themselves and let go of the hold: a promise nobody runs to keep would hold the Job
 * (and its namespace's deletion) for good.
 */
export function orphanedHold(job: JobRecord, keeper: KeeperPresence | undefined): string | undefined {
  if (!isHeld(job) || keeper === undefined || keeper.unread) return undefined
  const { lease } = keeper
  if (lease === undefined) return `no keeper: no Lease ${KEEPER_LEASE} in ${keeper.namespace}`
  const down = notRunning(lease)
  if (down === 'unknown') return undefined
  if (down !== undefined) return down
  const namespace = job.metadata?.namespace ?? ''
  return keepsNamespace(lease, namespace) ? undefined : `the keeper running does not keep namespace ${namespace}`
}
