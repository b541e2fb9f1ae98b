// The plan: for each Job in scope, what to do and why, in words a user reads in the summary; the
// types and the planner every phase shares, and the pre phase's decisions (post's and the sweep's
// are in retention.ts). Pure: it imports neither @actions/core nor the Kubernetes client, and the
// clock is a parameter, so every rule is testable in a table.
import type { JobRecord } from '../kube/job-record.ts'
import type { ManifestDifference, Observed, Where } from '../observe/observed.ts'
import { INPUT } from '../settings/inputs.ts'
import type { HarvestLogs, Phase } from '../settings/settings.ts'
import { formatDuration } from '../text/duration.ts'
import { matchesSelector } from '../settings/selector.ts'
import { keeperArchive, LOGS_FINALIZER, orphanedHold } from './keeper.ts'
import type { PlanPolicy, Problem } from './policy.ts'
import { ageSeconds, belongsToRelease, finishedAt, hookAnnotation, isFinished, jobStatus, managedElsewhere, type JobStatus } from './predicates.ts'

/**
 * keep: leave it; wait: wait for it to finish, then decide again (pre: delete it; post: set its
 * exact TTL); delete: delete now; block: fail the step, change nothing; set-ttl: give it its retention.
 */
export type JobAction = 'keep' | 'wait' | 'delete' | 'block' | 'set-ttl'

/** One Job and the decision about it. */
export interface PlannedJob {
  namespace: string
  name: string
  uid: string
  /** The version the decision was made on: a delete is refused if the Job changed since. */
  resourceVersion: string
  status: JobStatus
  ageSeconds: number
  action: JobAction
  /** Why, for the summary. */
  reason: string
  /** Logs to save (completely) before the action: the harvest-logs policy asks for them. */
  harvest: boolean
  /** delete: Foreground while pods may still run (none may run beside the new Job), else Background. */
  propagation: 'Background' | 'Foreground'
  /** Post: the ttlSecondsAfterFinished to set (null: remove it, the Job is kept forever). */
  ttlSeconds?: number | null
  /** Post: the chart server-side applies ttlSecondsAfterFinished; it is left as the chart sets it. */
  chartTtl?: boolean
  /** The Job's retention for the summary's TTL column: "1h (40m left)", "expired 2h ago". */
  retention?: string
  /** Seconds since the Job finished, if it has. */
  finishedSecondsAgo?: number
  /** When the Job finished (ISO 8601), if it has: the summary's Finished column. */
  finishedAt?: string
  /**
   * pre, sweep: held with the keeper's finalizer for a keeper that does not run (why, in words): its
   * logs are saved by this run, then the hold is let go, so the deletion completes.
   */
  letGo?: string
  /** Post: kept without a TTL as one of the keep-last newest of its group; the reason says so. */
  keptByCount?: boolean
  /**
   * What the step reports about the Job once the action is done (pre: a block; post: a failed or
   * never started Job, with wait-for-jobs), an error or a warning as the policy says.
   */
  problem?: Problem
  job: JobRecord
}

/** A phase's plan: what to do with each Job in scope, and how the executor goes about it. */
export interface Plan {
  phase: Phase
  /** Where, for the summary: a namespace, a list of them, or all namespaces. */
  namespace: Where
  jobs: PlannedJob[]
  resourceVersions: Record<string, string>
  /** Pre: the phase ends only once every deleted Job is gone, so the upgrade cannot meet it. */
  awaitGone: boolean
  /**
   * The same decision on a fresh copy of a Job, to re-check before acting (out of scope by now:
   * keep, saying why). After a wait of `waitedSeconds`, the reason is the final one the summary shows.
   */
  redecide: (job: JobRecord, now: Date, waitedSeconds?: number) => PlannedJob
}

/** The namespace of a Job that names none: the one worked in ('' for a sweep of all namespaces, whose Jobs all name theirs). */
const namespaceIn = (observed: Observed): string => (typeof observed.namespace === 'string' ? observed.namespace : '')

/** Why the Job is not one the settings' scope names (every given scope field must match), or undefined if it is. */
export function outOfScope(job: JobRecord, observed: Observed, settings: PlanPolicy): string | undefined {
  const name = job.metadata?.name ?? ''
  const { release, jobs, selector } = settings.scope
  if (release !== undefined && !belongsToRelease(job, release, job.metadata?.namespace ?? namespaceIn(observed)))
    return `not annotated as of release ${release}`
  if (jobs !== undefined && !jobs.includes(name)) return 'not one of the Jobs named in jobs'
  if (observed.manifest !== undefined && !observed.manifest.has(name)) return 'not rendered by the manifest'
  // The list applied the selector already; a fresh copy (after a wait, after a 409) may have been relabelled since.
  if (selector !== undefined && !matchesSelector(selector, job.metadata?.labels)) return `its labels no longer match selector '${selector}'`
  return undefined
}

/** The Job is one the settings' scope names (all given scope fields must match). */
export function inScope(job: JobRecord, observed: Observed, settings: PlanPolicy): boolean {
  return outOfScope(job, observed, settings) === undefined
}

/** The Jobs a phase decides on: in scope, and not hook Jobs unless include-hooks (keep-last ranks these). */
export function decidable(observed: Observed, settings: PlanPolicy): JobRecord[] {
  return observed.jobs.filter((job) => inScope(job, observed, settings) && (settings.includeHooks || !hookAnnotation(job)))
}

/** Why a Job that differs from its rendered manifest is in the upgrade's way, for the summary. */
function manifestConflict(d: ManifestDifference): string {
  switch (d.kind) {
    case 'differs':
      return `differs from the rendered manifest: ${d.detail}`
    case 'conflict':
      return `helm upgrade would fail on a field-manager conflict: ${d.detail}`
    case 'unknown':
      return `could not compare it with the rendered manifest (${d.detail}): treated as changed, as release scope would`
  }
}

function decidePre(p: PlannedJob, observed: Observed, settings: PlanPolicy): Decision {
  if (p.status === 'terminating') return { action: 'delete', reason: 'already being deleted; waiting until it is gone' }
  let conflict = 'a Job’s pod template is immutable, so helm upgrade fails while it exists'
  if (observed.manifest !== undefined) {
    const difference = observed.manifest.get(p.name)
    if (difference === undefined) return { action: 'keep', reason: 'unchanged — the upgrade will not touch it' }
    conflict = manifestConflict(difference)
  }
  if (p.status === 'external') {
    return {
      action: 'keep',
      reason: `not finished, and managed by ${managedElsewhere(p.job)}: job-sweeper neither waits for nor deletes it (${conflict})`
    }
  }
  if (p.status === 'suspended') return { action: 'delete', reason: `suspended with no pod running: deleted without waiting (${conflict})` }
  // Whatever on-running says: nothing ran, so there is nothing to interrupt and nothing to wait for.
  if (p.status === 'stuck') return { action: 'delete', reason: `${p.job.neverStarted}; nothing ran, so nothing is interrupted: deleted (${conflict})` }
  if (p.status === 'running') {
    const running = `running for ${formatDuration(p.ageSeconds)}`
    switch (settings.onRunning) {
      case 'wait':
        return { action: 'wait', reason: `${running}; waiting for it to finish, then deleting it (${conflict})` }
      case 'delete':
        return { action: 'delete', reason: `${running}; deleting it anyway, its logs so far saved (on-running: delete; ${conflict})` }
      case 'fail':
        return {
          action: 'block',
          reason: `${running} and on-running is fail: nothing was deleted (${conflict})`,
          problem: {
            severity: 'error',
            ofTheJob: true,
            message: `Job ${p.namespace}/${p.name} is still running (${formatDuration(p.ageSeconds)}) and on-running is fail; nothing was deleted`
          }
        }
    }
  }
  return { action: 'delete', reason: `${p.status}; ${conflict}` }
}

/** What a phase decides about one Job: the action, why, and for post the TTL. */
export type Decision = Pick<PlannedJob, 'action' | 'reason'> & Partial<Pick<PlannedJob, 'ttlSeconds' | 'retention' | 'chartTtl' | 'keptByCount' | 'problem'>>

/** The facts about a Job that every decision starts from (the action is still to be decided). */
function facts(job: JobRecord, observed: Observed, now: Date): PlannedJob {
  const finished = finishedAt(job)
  const status = jobStatus(job)
  return {
    namespace: job.metadata?.namespace ?? namespaceIn(observed),
    name: job.metadata?.name ?? '',
    uid: job.metadata?.uid ?? '',
    resourceVersion: job.metadata?.resourceVersion ?? '',
    status,
    ageSeconds: ageSeconds(job, now),
    finishedSecondsAgo: finished && isFinished(job) ? Math.max(0, (now.getTime() - finished.getTime()) / 1000) : undefined,
    finishedAt: finished && isFinished(job) ? finished.toISOString() : undefined,
    action: 'keep',
    reason: '',
    harvest: false,
    // Pods may still run (or terminate) unless the Job finished: then none may run beside the new one.
    propagation: status === 'succeeded' || status === 'failed' ? 'Background' : 'Foreground',
    job
  }
}

/** Whether a Job's logs are saved before it is deleted (or given a TTL), given its status. */
export function shouldHarvest(harvest: HarvestLogs, status: JobStatus): boolean {
  if (status === 'terminating') return false
  // A Job deleted while it runs is interrupted: its logs so far count as a failure's. So are a
  // suspended Job's: suspended after crash loops, or preempted, it can hold failed pods.
  return harvest === 'all' || (harvest === 'failed' && status !== 'succeeded')
}

/** Plans one Job (undefined: out of scope): hook Jobs are kept unless include-hooks; else what `decide` says. */
function planOne(job: JobRecord, observed: Observed, settings: PlanPolicy, now: Date, decide: (job: PlannedJob) => Decision): PlannedJob | undefined {
  if (!inScope(job, observed, settings)) return undefined
  const known = facts(job, observed, now)
  const hook = hookAnnotation(job)
  if (hook && !settings.includeHooks) {
    return { ...known, reason: `hook Job (${hook.key}: ${hook.value}): its own hook-delete-policy manages it; set include-hooks to include it` }
  }
  const decided = { ...known, ...decide(known) }
  const orphan = decided.action === 'delete' || decided.status === 'terminating' ? orphanedHold(job, observed.keeper) : undefined
  if (orphan !== undefined && settings.logsGoneWithRun !== undefined) {
    // Saved where they vanish with the run, the logs would be lost with the hold: it stays.
    const reason = `${decided.reason}; held with ${LOGS_FINALIZER} for a keeper, but ${orphan}; kept, still held: ${settings.logsGoneWithRun}, and its logs saved there would be lost with the hold (give ${INPUT.logsDir} s3://… on the run's own endpoint, such as the keeper's bucket, or a directory that stays, and the hold is let go)`
    return { ...decided, action: 'keep', reason, harvest: false }
  }
  if (orphan !== undefined) {
    // Whatever harvest-logs says: the hold asked for its logs, and nobody else will save them.
    const reason = `${decided.reason}; held with ${LOGS_FINALIZER} for a keeper, but ${orphan}: its logs are saved here and the hold let go`
    return { ...decided, action: 'delete', reason, harvest: true, letGo: orphan }
  }
  // A stuck Job given its TTL is a failure to keep the record of: it will not finish by itself.
  const acts = decided.action === 'delete' || (decided.action === 'set-ttl' && (isFinished(job) || decided.status === 'stuck'))
  const harvest = acts && shouldHarvest(settings.harvestLogs, decided.status)
  const archived = keeperArchive(job)
  // The keeper's archive is the Job's record: a harvest here would write a job.json listing only
  // what is left to read, over it or beside it. Nothing is saved, and the row says where it is.
  // Only a note naming the Job's uid is the keeper's (keeperArchive): one the Job was created with
  // (a template's, a planted one) would make its logs never saved. A Job an older keeper archived
  // under the uid-less <namespace>/<job>/ is harvested again: the keys carry the uid, so this
  // writes into <namespace>/<job>/<uid>/ and overwrites nothing of that archive.
  if (harvest && archived !== undefined)
    return {
      ...decided,
      harvest: false,
      reason: `${decided.reason}; its logs archived by the keeper at ${archived.where} (${archived.state}): nothing saved over them`
    }
  return { ...decided, harvest }
}

/** A Job the plan keeps, as little of it as the report needs: the rest of its record is let go. */
function slim(p: PlannedJob): PlannedJob {
  const { name, namespace, uid, resourceVersion } = p.job.metadata ?? {}
  return { ...p, job: { metadata: { name, namespace, uid, resourceVersion } } }
}

/**
 * Plans Jobs as they arrive, a list page at a time, so that a page's records can be let go before
 * the next one comes: with `slimKept`, a Job the plan keeps holds only the few fields the report
 * needs (a sweep over tens of thousands of Jobs keeps most of them). `plan()` once all are in.
 */
export class Planner {
  private readonly jobs: PlannedJob[] = []
  private readonly phase: Phase
  private readonly observed: Observed
  private readonly settings: PlanPolicy
  private readonly now: Date
  private readonly decide: (job: PlannedJob) => Decision
  private readonly slimKept: boolean
  private readonly afterWait: AfterWait

  constructor(
    phase: Phase,
    observed: Observed,
    settings: PlanPolicy,
    now: Date,
    decide: (job: PlannedJob) => Decision,
    slimKept = false,
    afterWait: AfterWait = (p) => p
  ) {
    this.phase = phase
    this.observed = observed
    this.settings = settings
    this.now = now
    this.decide = decide
    this.slimKept = slimKept
    this.afterWait = afterWait
  }

  add(records: JobRecord[]): void {
    for (const job of records) {
      const planned = planOne(job, this.observed, this.settings, this.now, this.decide)
      if (planned) this.jobs.push(this.slimKept && planned.action === 'keep' ? slim(planned) : planned)
    }
  }

  /** The plan of every Job added, sorted by namespace and name; `listed` says where (and from which list) they came. */
  plan(listed: Pick<Observed, 'namespace' | 'resourceVersions'> = this.observed): Plan {
    const { observed, settings, decide, jobs, afterWait } = this
    jobs.sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name))
    return {
      phase: this.phase,
      namespace: listed.namespace,
      jobs,
      resourceVersions: listed.resourceVersions ?? {},
      awaitGone: this.phase === 'pre',
      redecide: (job, at, waitedSeconds) => {
        const again = planOne(job, observed, settings, at, decide) ?? {
          ...facts(job, observed, at),
          reason: `no longer in scope: ${outOfScope(job, observed, settings)}`
        }
        return waitedSeconds === undefined ? again : afterWait(again, waitedSeconds)
      }
    }
  }
}

/** A phase's decision on a Job after it was waited for `waitedSeconds`: the final reason (and problem). */
export type AfterWait = (p: PlannedJob, waitedSeconds: number) => PlannedJob

/** Plans every Job in scope, sorted by namespace and name, with `decide` for the phase. */
export function makePlan(
  phase: Phase,
  observed: Observed,
  settings: PlanPolicy,
  now: Date,
  decide: (job: PlannedJob) => Decision,
  afterWait?: AfterWait
): Plan {
  const planner = new Planner(phase, observed, settings, now, decide, false, afterWait)
  planner.add(observed.jobs)
  return planner.plan()
}

/** Decides, for every Job in scope, what the pre phase does with it. */
export function planPrune(observed: Observed, settings: PlanPolicy, now: Date): Plan {
  return makePlan('pre', observed, settings, now, (p) => decidePre(p, observed, settings), afterPreWait)
}

/** Pre, once a waited Job finished: deleted as planned, or kept because it changed while it was waited for. */
function afterPreWait(p: PlannedJob): PlannedJob {
  return p.action === 'delete' ? p : { ...p, reason: `changed while it was waited for: ${p.reason}` }
}
