// Whether a Job's archive is `complete`, as a pure function of what the Job's status counts and what
// the store holds: complete means every container run of every pod the Job counts as ended
// (status.succeeded + status.failed: each container, init containers included, and each of its
// restarts) has its log in the store, whole. Anything less is `incomplete`, and each gap says what
// is missing and why, as Kubernetes' conditions say False with a reason rather than stay silent.
import type { V1Pod } from '@kubernetes/client-node'
import { currentRunId, previousRunId, runOfFile, statusesOf } from './restarts.ts'

/** Why a log is not in the store. */
export type ArchiveGapReason =
  /** A pod the Job counts as ended was gone (deleted, garbage-collected) before its logs were read. */
  | 'pod-gone'
  /** A container run the node no longer keeps (the kubelet keeps a container's last two runs), not saved as it ended. */
  | 'run-gone'
  /** A log that could not be read or stored. */
  | 'read-failed'
  /** A log longer than max-log-bytes: its middle was cut. */
  | 'cut'

/** One thing missing from the archive. */
export interface ArchiveGap {
  reason: ArchiveGapReason
  /** What, in words: the pod, container or log. */
  what: string
  /** How many pods or runs it stands for (1 unless said). */
  count?: number
}

/** The archive's state: `complete` only with no gap. */
export interface ArchiveState {
  state: 'complete' | 'incomplete'
  gaps: ArchiveGap[]
}

/** What the archive is made of: the Job's counts, its pods as listed, and the logs stored. */
export interface ArchiveEvidence {
  /** The Job's status counts of ended pods. */
  succeeded?: number
  failed?: number
  /**
   * The pods listed when it was archived: ended (phase Succeeded or Failed), and each container's
   * restarts with the IDs of its current and previous runs (those the archive reads).
   */
  pods: { name: string; ended: boolean; restarts: { container: string; count: number; current?: string; previous?: string }[] }[]
  /**
   * Every log in the store for it (this archive's and those saved earlier), keys ending
   * `<pod>/<container>[.previous].log`, or `<pod>/<container>.run-<id>.log` for a run saved as it ended.
   */
  files: { file: string; truncated: boolean; unfinished?: boolean }[]
  /** Logs the node no longer had (`<pod>/<container> (previous run)`). */
  gone?: string[]
  /** Logs that could not be read or stored, in words. */
  failures?: string[]
}

/** The pod a stored log is of: the folder above `<container>.log`. */
const podOf = (file: string): string => file.split('/').slice(-2)[0] ?? ''
const logName = (file: string): string => file.split('/').slice(-2).join('/')

/** The archive's state from `evidence`, each gap named. */
export function archiveState(evidence: ArchiveEvidence): ArchiveState {
  const gaps: ArchiveGap[] = []
  const listed = new Set(evidence.pods.map((p) => p.name))
  // Pods accounted for: those listed as ended, and those whose logs were saved before they went.
  const accounted = new Set(evidence.pods.filter((p) => p.ended).map((p) => p.name))
  for (const f of evidence.files) if (!listed.has(podOf(f.file))) accounted.add(podOf(f.file))
  const counted = (evidence.succeeded ?? 0) + (evidence.failed ?? 0)
  const missing = counted - accounted.size
  if (missing > 0)
    gaps.push({
      reason: 'pod-gone',
      what: `${missing} of its ${counted} ended pod(s): gone before their logs were read (deleted, or garbage-collected)`,
      count: missing
    })
  for (const pod of evidence.pods)
    for (const { container, count, current, previous } of pod.restarts) {
      // A restarted container's current run and its previous one are read with the archive; each
      // earlier run only if it was saved as it ended (a run file of another ID): the kubelet keeps no earlier run.
      const short = (id: string | undefined): string | undefined => id?.slice(0, 12)
      const earlier = new Set(
        evidence.files
          .map((f) => runOfFile(f.file))
          .filter((r) => r !== undefined && r.pod === pod.name && r.container === container && r.id !== short(current) && r.id !== short(previous))
          .map((r) => r?.id)
      ).size
      const lost = count - 1 - earlier
      if (lost > 0)
        gaps.push({
          reason: 'run-gone',
          what: `${pod.name}/${container}: ${lost} of its ${count - 1} run(s) before its previous one, which the node no longer keeps, not saved as they ended`,
          count: lost
        })
    }
  for (const g of evidence.gone ?? []) gaps.push({ reason: 'run-gone', what: `${g}: the node no longer had its log` })
  for (const f of evidence.failures ?? []) gaps.push({ reason: 'read-failed', what: f })
  for (const f of evidence.files) if (f.truncated) gaps.push({ reason: 'cut', what: `${logName(f.file)}: cut at max-log-bytes` })
  for (const f of evidence.files)
    if (f.unfinished)
      gaps.push({ reason: 'read-failed', what: `${logName(f.file)}: followed until its pod was gone or its grace period passed, its end not seen` })
  return { state: gaps.length === 0 ? 'complete' : 'incomplete', gaps }
}

const REASON_WORDS: Record<ArchiveGapReason, (n: number) => string> = {
  'pod-gone': (n) => `${n} pod(s) gone before their logs were read`,
  'run-gone': (n) => `${n} container run(s) the node no longer kept`,
  'read-failed': (n) => `${n} log(s) not read or not stored`,
  cut: (n) => `${n} log(s) cut at max-log-bytes`
}

/** The state in a few words, for the Job's `job-sweeper.io/logs-state` annotation: `complete`, or `incomplete: <what, by reason>`. */
export function stateWords(state: ArchiveState): string {
  if (state.state === 'complete') return 'complete'
  const counts = new Map<ArchiveGapReason, number>()
  for (const gap of state.gaps) counts.set(gap.reason, (counts.get(gap.reason) ?? 0) + (gap.count ?? 1))
  return `incomplete: ${[...counts].map(([reason, n]) => REASON_WORDS[reason](n)).join('; ')}`
}

/** The metric label of a gap's reason (Prometheus' snake case). */
export const gapLabel = (reason: ArchiveGapReason): string => reason.replace('-', '_')

/** The pod ended (phase Succeeded or Failed): its logs will not change any more. */
export const podEnded = (pod: V1Pod): boolean => pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed'

/** The pods as the evidence takes them: ended or not, and each container's restarts (init containers included). */
export function podsEvidence(pods: V1Pod[]): ArchiveEvidence['pods'] {
  return pods.map((pod) => ({
    name: pod.metadata?.name ?? '',
    ended: podEnded(pod),
    restarts: statusesOf(pod).map((s) => ({
      container: s.name,
      count: s.restartCount ?? 0,
      current: currentRunId(pod, s.name),
      previous: previousRunId(pod, s.name)
    }))
  }))
}
