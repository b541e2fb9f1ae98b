// What executing a plan produced: one outcome per Job, plus the problems met on the way.
import type { PlannedJob } from '../plan/plan.ts'
import type { JobStatus } from '../plan/predicates.ts'
import { formatDuration } from '../settings/duration.ts'
import type { Phase } from '../settings/settings.ts'
import type { HarvestedLogs } from './logs.ts'

/** What happened to one Job. */
export type OutcomeKind = 'kept' | 'pruned' | 'would-prune' | 'gone' | 'replaced' | 'blocked' | 'error' | 'ttl-set' | 'would-set-ttl'

export interface JobOutcome {
  namespace: string
  name: string
  /** The Job's status when it was last seen. */
  status: JobStatus
  ageSeconds: number
  action: PlannedJob['action']
  /** pruned/would-prune/kept/...: the result; a waited Job that was then pruned has waited = true. */
  result: OutcomeKind
  waited: boolean
  reason: string
  /** For the TTL / time left column. */
  retention?: string
  finishedSecondsAgo?: number
  logs?: HarvestedLogs
}

/** A phase's outcomes and problems: what the report is made from. */
export interface RunResult {
  phase: Phase
  namespace: string
  dryRun: boolean
  outcomes: JobOutcome[]
  /** Problems that fail the step, each naming its Job. */
  errors: string[]
  /** Problems that do not (unreadable logs, an event that could not be recorded). */
  warnings: string[]
}

/** Where the executor reports progress; the action passes @actions/core's functions. */
export interface ExecuteContext {
  info: (message: string) => void
  warning: (message: string) => void
  /** The phase, for the Events recorded on deleted Jobs. */
  phase: Phase
  /** The workflow run, for Events and annotations (absent outside GitHub Actions). */
  run?: { url: string; commit?: string }
  /** How often a long wait prints that it is still waiting. */
  progressEveryMs?: number
}

export function outcome(p: PlannedJob, result: OutcomeKind, reason = p.reason, status = p.status): JobOutcome {
  return {
    namespace: p.namespace,
    name: p.name,
    status,
    ageSeconds: p.ageSeconds,
    action: p.action,
    result,
    waited: false,
    reason,
    retention: p.retention,
    finishedSecondsAgo: p.finishedSecondsAgo,
    logs: undefined
  }
}

/** Waits on `work` while printing, every ctx.progressEveryMs, that it is still waiting for `what()`. */
export async function withProgress<T>(work: Promise<T>, what: () => string, ctx: ExecuteContext): Promise<T> {
  const started = Date.now()
  const timer = setInterval(() => ctx.info(`still waiting (${formatDuration((Date.now() - started) / 1000)}) for ${what()}`), ctx.progressEveryMs ?? 15_000)
  try {
    return await work
  } finally {
    clearInterval(timer)
  }
}

/** Sorts a result's outcomes by namespace and name, as the plans are. */
export function sorted(result: RunResult): RunResult {
  result.outcomes.sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name))
  return result
}
