// What executing a plan produced: one outcome per Job, plus the problems met on the way.
import type { Clock } from '../kube/clock.ts'
import type { Where } from '../observe/observed.ts'
import type { KeeperPresence } from '../observe/keeper-lease.ts'
import type { PlannedJob } from '../plan/plan.ts'
import type { JobStatus } from '../plan/predicates.ts'
import type { Phase } from '../settings/settings.ts'
import type { HarvestedLogs } from './logs.ts'

/** What happened to one Job. */
export type OutcomeKind = 'kept' | 'pruned' | 'would-prune' | 'gone' | 'replaced' | 'blocked' | 'error' | 'ttl-set' | 'would-set-ttl'

export interface JobOutcome {
  namespace: string
  name: string
  /** The Job's uid: its saved logs' folder is <namespace>/<name>/<uid>/ (jobKey). */
  uid?: string
  /** The Job's status when it was last seen. */
  status: JobStatus
  ageSeconds: number
  action: PlannedJob['action']
  /** pruned/would-prune/kept/...: the result; a waited Job that was then pruned has waited = true. */
  result: OutcomeKind
  waited: boolean
  /** How long the wait on it took, in seconds (set when it was waited for). */
  waitedSeconds?: number
  reason: string
  /** For the TTL / time left column. */
  retention?: string
  finishedSecondsAgo?: number
  /** When the Job finished (ISO 8601), as last seen: after a wait, the executor's re-read. */
  finishedAt?: string
  /** What was saved of its logs, when they were asked for. */
  logs?: HarvestedLogs
}

/** A phase's outcomes and problems: what the report is made from. */
export interface RunResult {
  phase: Phase
  /** Where the phase worked (a sweep: its namespaces, or all). */
  namespace: Where
  dryRun: boolean
  outcomes: JobOutcome[]
  /** Problems that fail the step, each naming its Job. */
  errors: string[]
  /** Those of `errors` that are the Jobs' own (one failed, never started, or still runs): the rest are the cluster's or job-sweeper's. */
  jobErrors?: string[]
  /** Problems that do not (an event that could not be recorded, a log longer than max-log-bytes). */
  warnings: string[]
  /** API requests the run sent, retries included (for users on API Priority and Fairness). */
  apiRequests?: number
  /** When the run ended: the summary says how long ago each Job finished from here. */
  endedAt?: string
  /** When the run started (ISO 8601): with endedAt, how long it took. */
  startedAt?: string
  /** The scope in words (`release shop`, `selector app=web`), for the summary's title. */
  scope?: string
  /** The kubeconfig context the run used, for the summary's title. */
  context?: string
  /** Set when the run was cancelled (SIGINT, SIGTERM): the sentence that says so and which Jobs were not done. */
  cancelled?: string
  /** Keys under logs-dir that the run stored whole (logs, notes, job.json), in order: what upload-logs uploads. */
  stored?: string[]
  /** Pre with a manifest: what its preflight of the rendered release found, and what its remedies did. */
  preflight?: PreflightSection
}

/** Pre's preflight in the summary (src/preflight/gate.ts): the headline, the objects that matter, the remedies' outcomes. */
export interface PreflightSection {
  /** `helm upgrade would fail on 1 object(s) (7 object(s) checked, 5 unchanged)`. */
  headline: string
  /** The upgrade would fail on an object that neither pre nor a chosen remedy clears. */
  failed: boolean
  /** Every object but the unchanged ones, failing first (the preflight report file has them all). */
  rows: { mark: string; object: string; reason: string }[]
  /** What the remedies did, a sentence each (`StatefulSet shop/db deleted with propagationPolicy Orphan …`). */
  remedies: string[]
}

/** The GitHub Actions workflow run job-sweeper runs in: named in Events and annotations. */
export interface WorkflowRun {
  url: string
  commit?: string
}

/** What the executor needs from its caller: where progress goes, and the workflow run for Events. */
export interface ExecuteContext {
  info: (message: string) => void
  /** The workflow run, for Events and annotations (absent outside GitHub Actions). */
  workflowRun?: WorkflowRun
  /** The run's cancellation: once aborted, no new delete, wait or TTL patch starts. */
  signal?: AbortSignal
  /** What waits and re-decisions are timed on (default: the machine's clock). */
  clock?: Clock
  /** Post with keeper-namespace: the keeper's Lease as read before the run's patches (none: no keeper there; unread: it could not be read). */
  keeper?: KeeperPresence
}

export function outcome(p: PlannedJob, result: OutcomeKind, reason = p.reason, status = p.status): JobOutcome {
  return {
    namespace: p.namespace,
    name: p.name,
    uid: p.uid,
    status,
    ageSeconds: p.ageSeconds,
    action: p.action,
    result,
    waited: false,
    reason,
    retention: p.retention,
    finishedSecondsAgo: p.finishedSecondsAgo,
    finishedAt: p.finishedAt
  }
}
