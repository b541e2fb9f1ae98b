// Execute a plan, for every phase: plan → work queue → outcomes. One bounded work queue carries
// every per-Job action (delete, save logs, Event, TTL patch), and one shared watch per namespace
// answers every wait (running → finished, deleted → gone). Problems are collected per Job and
// reported together at the end, as the TTL-after-finished controller does.
import PQueue from 'p-queue'
import { realClock, type Clock } from '../kube/clock.ts'
import type { JobsClient } from '../kube/client.ts'
import { apiErrorMessage } from '../kube/errors.ts'
import { JobInformer, WaitTimeout } from '../kube/informer.ts'
import { ClusterUnreachable, RunCancelled } from '../kube/retry.ts'
import type { JobRecord } from '../kube/job-record.ts'
import type { Plan, PlannedJob } from '../plan/plan.ts'
import type { Problem } from '../plan/policy.ts'
import { LOGS_FINALIZER } from '../plan/keeper.ts'
import { observeFailures } from '../observe/observe.ts'
import { ageSeconds, jobStatus } from '../plan/predicates.ts'
import { formatDuration } from '../text/duration.ts'
import { INPUT } from '../settings/inputs.ts'
import type { Settings } from '../settings/settings.ts'
import { openLogSink } from '../store/open.ts'
import { recorded } from '../store/recorded.ts'
import { someNames } from '../text/shorten.ts'
import { inert } from '../text/workflow-commands.ts'
import { CANCELLED, deleteAction, isUnreachable, stoppedBy, ttlAction, UNREACHABLE, type ActionContext } from './actions.ts'
import { outcome, type ExecuteContext, type JobOutcome, type RunResult } from './outcome.ts'
import { LiveLogs } from './live.ts'
import { startProgress } from './progress.ts'
import { StartPoller } from './start-poll.ts'

// Kubernetes' own finalizers, which its controllers remove; any other one belongs to someone else.
const KUBERNETES_FINALIZERS = new Set(['foregroundDeletion', 'orphan', 'batch.kubernetes.io/job-tracking'])

/** The run's shared watches, one per namespace, each following every Job the plan may wait on. */
class Watches {
  private readonly informers = new Map<string, JobInformer>()
  private readonly client: JobsClient
  private readonly plan: Plan
  private readonly signal: AbortSignal | undefined
  private readonly clock: Clock
  constructor(client: JobsClient, plan: Plan, clock: Clock, signal?: AbortSignal) {
    this.client = client
    this.plan = plan
    this.clock = clock
    this.signal = signal
  }

  /** Waits until `done` holds for the Job (undefined: gone), through its namespace's watch. */
  waitFor(p: PlannedJob, done: (job: JobRecord | undefined) => boolean, timeoutMs: number): Promise<JobRecord | undefined> {
    let informer = this.informers.get(p.namespace)
    if (!informer) {
      informer = new JobInformer(this.client, p.namespace, this.plan.resourceVersions[p.namespace] ?? '', undefined, this.signal, this.clock)
      // Everything the run may wait on is followed from the plan's list on, so no event is missed.
      for (const q of this.plan.jobs) if (q.namespace === p.namespace && q.action !== 'keep') informer.track(q.job)
      this.informers.set(p.namespace, informer)
    }
    return informer.waitFor(p.job, done, timeoutMs)
  }

  /** The Job's last state the watch saw (the plan's before the watch started; undefined: gone). */
  current(p: PlannedJob): JobRecord | undefined {
    const informer = this.informers.get(p.namespace)
    return informer ? informer.current(p.name) : p.job
  }

  /**
   * Waits until `done` holds for the Job, as waitFor; or until its pods show it stuck (it never
   * started: the watch of Jobs cannot tell), then gives its state with `neverStarted` set.
   */
  waitUnlessStuck(p: PlannedJob, starts: StartPoller, done: (job: JobRecord | undefined) => boolean, timeoutMs: number): Promise<JobRecord | undefined> {
    const wait = this.waitFor(p, done, timeoutMs)
    return starts.waitOrStuck(p.uid, () => this.current(p), wait)
  }

  stop(): void {
    for (const i of this.informers.values()) i.stop()
  }
}

const key = (p: { namespace: string; name: string }): string => `${p.namespace}/${p.name}`
const stillRunning = (job: JobRecord | undefined): boolean => job !== undefined && jobStatus(job) === 'running'
/** How a wait on a Job ended, for the log (why it never started quotes its pods and Events: made inert). */
const ended = (job: JobRecord | undefined): string =>
  !job ? 'is gone' : job.neverStarted ? `${inert(job.neverStarted)}: no longer waited for` : `finished: ${jobStatus(job)}`

export async function execute(plan: Plan, client: JobsClient, settings: Settings, ctx: ExecuteContext): Promise<RunResult> {
  const result: RunResult = { phase: plan.phase, namespace: plan.namespace, dryRun: settings.dryRun, outcomes: [], errors: [], warnings: [] }
  const blocked = plan.jobs.filter((p) => p.action === 'block')
  if (blocked.length > 0) {
    result.outcomes = abandon(plan, new Map(blocked.map((p) => [key(p), p.reason])))
    for (const p of blocked) report(result, p.problem)
    return result
  }
  if (settings.dryRun) {
    const would = plan.phase === 'post' ? 'would-set-ttl' : 'would-prune'
    result.outcomes = plan.jobs.map((p) => outcome(p, p.action === 'keep' ? 'kept' : would))
    return result
  }
  const clock = ctx.clock ?? realClock
  const events = new PQueue({ concurrency: settings.concurrency })
  const sink = recorded(await openLogSink(settings.logsTarget))
  const actions: ActionContext = {
    ...ctx,
    clock,
    client,
    settings,
    plan,
    errors: result.errors,
    warnings: result.warnings,
    sink,
    tailed: { count: 0 },
    events,
    down: {}
  }
  const queue = new PQueue({ concurrency: settings.concurrency })
  const watches = new Watches(client, plan, clock, ctx.signal)
  const live = new LiveLogs(client, {
    stream: settings.streamLogs,
    limitBytes: settings.maxLogBytes,
    mask: settings.maskLogTails,
    info: ctx.info,
    warnings: result.warnings,
    clock,
    signal: ctx.signal
  })
  // The pods listed to find Jobs that never start also say which containers' logs to follow.
  const starts = new StartPoller(
    client,
    settings.stuckAfterSeconds,
    undefined,
    clock,
    (uid, pods) => live.pods(uid, pods),
    (namespace, uid, pods) => live.eventsOf(namespace, uid, pods)
  )
  const outcomes = new Map<string, JobOutcome>(plan.jobs.filter((p) => p.action === 'keep').map((p) => [key(p), outcome(p, 'kept')]))
  const execution = { actions, queue, watches, starts, live, outcomes, settings, plan, result }
  try {
    if (plan.phase === 'post') await post(execution)
    else if (!(await prune(execution))) return cancelled(result, ctx)
  } finally {
    starts.stop()
    watches.stop()
    await live.stop()
    await events.onIdle()
    await sink.close()
    result.stored = [...sink.stored]
  }
  result.outcomes = [...outcomes.values()].sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name))
  const down = actions.down.error
  if (down) {
    const undone = result.outcomes.filter((o) => o.reason.endsWith(UNREACHABLE)).length
    result.errors.push(`${down.message}; the run stopped there, ${undone} Job(s) not done: run it again once the cluster is reachable`)
  }
  return cancelled(result, ctx)
}

/** Reports what the plan says to about a Job: an error fails the step, a warning does not. */
function report(result: RunResult, problem: Problem | undefined): void {
  if (problem) (problem.severity === 'error' ? result.errors : result.warnings).push(problem.message)
  if (problem?.severity === 'error' && problem.ofTheJob) (result.jobErrors ??= []).push(problem.message)
}

/** The result, saying (when the run was cancelled) so, and which Jobs were not done. */
function cancelled(result: RunResult, ctx: ExecuteContext): RunResult {
  if (!ctx.signal?.aborted) return result
  const undone = result.outcomes.filter((o) => o.reason.endsWith(CANCELLED))
  const message = (ctx.signal.reason as Error | undefined)?.message ?? CANCELLED
  result.cancelled = `${message}: ${undone.length} Job(s) not done${undone.length > 0 ? ` (${someNames(undone.map((o) => o.name))})` : ''}`
  result.errors.push(result.cancelled)
  return result
}

/** One plan's execution: its queue, watches and outcomes so far, shared by the steps of a phase. */
interface Execution {
  actions: ActionContext
  queue: PQueue
  watches: Watches
  /** Lists the pods of the Jobs waited on, so that one that never starts ends its wait. */
  starts: StartPoller
  /** Follows the waited Jobs' logs into the run's log, and says why one failed. */
  live: LiveLogs
  outcomes: Map<string, JobOutcome>
  settings: Settings
  plan: Plan
  result: RunResult
}

/** Runs `action` for each Job on the work queue, recording each outcome; prints progress as `verb`. */
async function onQueue(execution: Execution, jobs: PlannedJob[], verb: string, action: (p: PlannedJob) => Promise<JobOutcome>): Promise<void> {
  if (jobs.length === 0) return
  let done = 0
  const stop = startProgress(execution.actions.info, () => `${done}/${jobs.length} ${verb}`, execution.actions.clock)
  try {
    await Promise.all(
      jobs.map((p) =>
        execution.queue.add(async () => {
          // Once the cluster is gone (or the run cancelled), the Jobs still queued are not tried.
          const stopped = stoppedBy(execution.actions)
          const out = stopped ? outcome(p, 'kept', `${p.reason} — not attempted: ${stopped}`) : await action(p)
          done++
          const before = execution.outcomes.get(key(p))
          execution.outcomes.set(key(p), { ...out, waited: out.waited || before?.waited === true, waitedSeconds: out.waitedSeconds ?? before?.waitedSeconds })
        })
      )
    )
  } finally {
    stop()
  }
}

/** Pre and sweep: wait for running Jobs (all or nothing), delete, and (pre) wait until they are gone. */
async function prune(execution: Execution): Promise<boolean> {
  const { plan, settings, watches, starts, live, actions, result } = execution
  const toDelete = plan.jobs.filter((p) => p.action === 'delete')
  const toWait = plan.jobs.filter((p) => p.action === 'wait')
  if (toWait.length > 0) {
    const began = actions.clock.now()
    const timeout = settings.waitTimeoutSeconds
    const pending = new Set(toWait.map(key))
    // How long each wait took, for the summary.
    const waitedFor = new Map<string, number>()
    actions.info(`waiting up to ${formatDuration(timeout)} for ${toWait.length} running Job(s): ${someNames(pending)}`)
    const stop = startProgress(
      actions.info,
      () => `${toWait.length - pending.size}/${toWait.length} finished · still running: ${someNames(pending)}`,
      actions.clock
    )
    const settled = await Promise.allSettled(
      toWait.map(async (p) => {
        live.follow(p)
        const job = await watches
          .waitUnlessStuck(p, starts, (j) => !stillRunning(j), timeout * 1000)
          .finally(() => waitedFor.set(key(p), (actions.clock.now() - began) / 1000))
        pending.delete(key(p))
        actions.info(`Job ${key(p)} ${ended(job)}`)
        if (job && jobStatus(job) === 'failed') live.explain(p, job)
        return job
      })
    ).finally(stop)
    const failed = toWait.map((p, i) => ({ p, s: settled[i] })).filter(({ s }) => s.status === 'rejected')
    if (failed.length > 0) {
      // The row and the error both give the Job's age when the wait gave up.
      const gaveUp = new Date(actions.clock.now())
      // On a timeout nothing at all is deleted: the upgrade would fail on the running Job anyway.
      const blocked = (s: PromiseSettledResult<unknown>): string => {
        const reason = (s as PromiseRejectedResult).reason
        if (isUnreachable(reason, actions)) return `not seen finished: ${UNREACHABLE}`
        // Time ran out while the watch was failing: the Job was not seen, running or not.
        if (reason instanceof WaitTimeout && reason.watchFailing) return `not seen finished within ${formatDuration(timeout)}: ${reason.watchFailing}`
        return `still running after waiting ${formatDuration(timeout)}`
      }
      result.outcomes = actions.signal?.aborted ? abandonCancelled(plan) : abandon(plan, new Map(failed.map(({ p, s }) => [key(p), blocked(s)])))
      const ages = new Map(failed.map(({ p }) => [key(p), ageSeconds(p.job, gaveUp)]))
      for (const o of result.outcomes) {
        o.ageSeconds = ages.get(key(o)) ?? o.ageSeconds
        o.waitedSeconds = waitedFor.get(key(o))
      }
      for (const { p, s } of failed) {
        const reason = (s as PromiseRejectedResult).reason
        if (reason instanceof ClusterUnreachable || reason instanceof RunCancelled) continue
        const why = !(reason instanceof WaitTimeout)
          ? `could not be watched: ${apiErrorMessage(reason)}`
          : reason.watchFailing
            ? `was not seen finished within wait-timeout ${formatDuration(timeout)}: ${reason.watchFailing}`
            : `did not finish within wait-timeout ${formatDuration(timeout)} (running for ${formatDuration(ageSeconds(p.job, gaveUp))})`
        // A Job that runs too long is the Job's; one not seen (the watch failing) is the cluster's.
        report(result, {
          severity: 'error',
          message: `Job ${key(p)} ${why}; nothing was deleted`,
          ofTheJob: reason instanceof WaitTimeout && !reason.watchFailing ? true : undefined
        })
      }
      if (actions.down.error) result.errors.push(`${actions.down.error.message}; nothing was deleted`)
      return false
    }
    for (const [i, p] of toWait.entries()) {
      const job = (settled[i] as PromiseFulfilledResult<JobRecord | undefined>).value
      const again = job && plan.redecide(job, new Date(actions.clock.now()), (actions.clock.now() - began) / 1000)
      const waitedSeconds = waitedFor.get(key(p))
      if (!again)
        execution.outcomes.set(key(p), { ...outcome(p, 'gone', 'finished, and deleted by someone else while it was waited for'), waited: true, waitedSeconds })
      // Kept: it became a hook, or left the scope (relabelled by an operator keeping it for inspection).
      else if (again.action !== 'delete') execution.outcomes.set(key(p), { ...outcome(again, 'kept'), waited: true, waitedSeconds })
      else {
        execution.outcomes.set(key(p), { ...outcome(again, 'kept'), waited: true, waitedSeconds })
        toDelete.push(again)
      }
    }
  }
  await onQueue(execution, toDelete, 'deleted or settled', (p) => deleteAction(p, actions))
  if (plan.awaitGone) await awaitGone(execution, toDelete)
  return true
}

/** Pre: the phase ends once every deleted Job is really gone, so the upgrade cannot meet it. */
async function awaitGone(execution: Execution, deleted: PlannedJob[]): Promise<void> {
  const { settings, watches, actions, result, outcomes } = execution
  const leaving = deleted.filter((p) => ['pruned', 'gone'].includes(outcomes.get(key(p))?.result ?? ''))
  // Deleted, but not to be seen gone from a cluster that does not answer: the run fails anyway.
  if (leaving.length === 0 || actions.down.error) return
  const pending = new Set(leaving.map(key))
  const stop = startProgress(actions.info, () => `${leaving.length - pending.size}/${leaving.length} gone · waiting for: ${someNames(pending)}`, actions.clock)
  try {
    await Promise.all(
      leaving.map(async (p) => {
        try {
          await watches.waitFor(p, (j) => j === undefined, settings.waitTimeoutSeconds * 1000)
        } catch (e) {
          const out = outcomes.get(key(p)) as JobOutcome
          if (isUnreachable(e, actions)) {
            Object.assign(out, { result: 'error', reason: `deleted; not seen gone: ${UNREACHABLE}` })
            return
          }
          if (e instanceof RunCancelled) {
            out.reason = `${out.reason} (deleted; the run was cancelled before it was seen gone)`
            return
          }
          const stuck = await execution.actions.client.getJob(p.namespace, p.name).catch(() => 'unreadable' as const)
          if (!(e instanceof WaitTimeout)) {
            // The watch itself failed (a 403: no time passed): read once. Gone is what was awaited.
            if (stuck === undefined) return
            const seen = stuck === 'unreadable' ? 'it could not be read either' : 'it was still there when read right after'
            out.result = 'error'
            out.reason = `deleted, but not seen gone: the watch failed (${apiErrorMessage(e)}); ${seen}, so whether it is gone is unknown`
            result.errors.push(`Job ${key(p)} was deleted, but whether it is gone is unknown: ${apiErrorMessage(e)}; ${seen}`)
            return
          }
          const foreign = (stuck === 'unreadable' ? [] : (stuck?.metadata?.finalizers ?? [])).filter((f) => !KUBERNETES_FINALIZERS.has(f))
          out.result = 'error'
          const others = foreign.filter((f) => f !== LOGS_FINALIZER)
          out.reason =
            others.length > 0
              ? `deleted, but stuck on finalizer ${others.join(', ')} (job-sweeper does not remove finalizers it does not own)`
              : foreign.length > 0
                ? `deleted, but held with ${LOGS_FINALIZER} for a job-sweeper keeper that has not archived its logs yet (${settings.keeperNamespace === undefined ? `give ${INPUT.keeperNamespace}, and pre lets go of a hold when no keeper runs; ` : ''}see docs/keeper.md)`
                : 'deleted, but still present: timed out'
          result.errors.push(`Job ${key(p)} was deleted but is not gone after ${formatDuration(settings.waitTimeoutSeconds)}: ${out.reason}`)
        } finally {
          pending.delete(key(p))
        }
      })
    )
  } finally {
    stop()
  }
}

/** Post: every Job gets a TTL at once (running ones the upper bound); waited ones then the exact one. */
async function post(execution: Execution): Promise<void> {
  const { plan, settings, watches, starts, live, actions, result, outcomes } = execution
  const act = plan.jobs.filter((p) => p.action === 'set-ttl' || p.action === 'wait')
  // First every Job gets a TTL, so none is left without one if the wait times out or is cancelled.
  await onQueue(execution, act, 'given a TTL', (p) => ttlAction(p, p.ttlSeconds ?? null, actions))
  for (const p of act) if (outcomes.get(key(p))?.result === 'ttl-set') report(result, p.problem)

  const toWait = act.filter((p) => p.action === 'wait' && outcomes.get(key(p))?.result === 'ttl-set')
  if (toWait.length === 0) return
  const limit = settings.waitForJobsSeconds
  const pending = new Set(toWait.map(key))
  actions.info(`waiting up to ${formatDuration(limit)} for ${toWait.length} running Job(s): ${someNames(pending)}`)
  const stop = startProgress(
    actions.info,
    () => `${toWait.length - pending.size}/${toWait.length} finished · still running: ${someNames(pending)}`,
    actions.clock
  )
  try {
    await Promise.all(
      toWait.map(async (p) => {
        const out = outcomes.get(key(p)) as JobOutcome
        out.waited = true
        const began = actions.clock.now()
        let waitEnded: number | undefined
        try {
          live.follow(p)
          let job = await watches.waitUnlessStuck(p, starts, (j) => !stillRunning(j), limit * 1000)
          waitEnded = actions.clock.now()
          actions.info(`Job ${key(p)} ${ended(job)}`)
          if (job && jobStatus(job) === 'failed') {
            live.explain(p, job)
            // Its row and its error line say why (a copy: the watch's record stays as the watch saw it).
            const failedJob = { ...job }
            await observeFailures(actions.client, [failedJob]).catch(() => undefined)
            job = failedJob
          }
          const again = job && plan.redecide(job, new Date(actions.clock.now()), (actions.clock.now() - began) / 1000)
          if (!again) Object.assign(out, { result: 'gone', reason: 'deleted while it was waited for' })
          else if (again.action === 'set-ttl') {
            const exact = await execution.queue.add(() => ttlAction(again, again.ttlSeconds ?? null, actions))
            if (exact.result === 'ttl-set') {
              Object.assign(out, exact, { waited: true, reason: again.reason })
              report(result, again.problem)
            } else {
              // Not set (its logs could not be saved, the patch failed, it is gone): the row keeps
              // the failure's words, and the TTL column the retention it was given before the wait.
              const told = exact.result !== 'error' || exact.reason.endsWith(UNREACHABLE)
              const before = told ? '' : `; it keeps what it was given before the wait (TTL: ${out.retention ?? '—'})`
              Object.assign(out, exact, { waited: true, retention: out.retention, reason: `${again.status} after waiting; ${exact.reason}${before}` })
            }
          } else {
            // Kept as it is: it never started (it keeps the upper-bound TTL), or it changed while it was waited for.
            Object.assign(out, { status: again.status, reason: again.reason })
            report(result, again.problem)
          }
        } catch (e) {
          // keep-last's newest get no TTL while they run; the others the upper bound.
          const keeps = p.keptByCount ? 'it keeps no TTL (keep-last keeps it among the newest of its group)' : 'it keeps the upper-bound TTL'
          if (e instanceof WaitTimeout && e.watchFailing) {
            // Not "still running": it was not seen at all, so the step fails rather than warns.
            result.errors.push(`Job ${key(p)} was not seen finished within wait-for-jobs ${formatDuration(limit)}: ${e.watchFailing}; ${keeps}`)
            out.reason = `${out.reason}; not seen finished: ${e.watchFailing}`
          } else if (e instanceof WaitTimeout) {
            result.warnings.push(`Job ${key(p)} was still running after wait-for-jobs ${formatDuration(limit)}; ${keeps}`)
            out.reason = `${out.reason}; still running after ${formatDuration(limit)}`
          } else if (isUnreachable(e, actions)) out.reason = `${out.reason}; not seen finished: ${UNREACHABLE}`
          else if (e instanceof RunCancelled) out.reason = `${out.reason}; not seen finished: ${CANCELLED}`
          else result.errors.push(`Job ${key(p)} could not be watched: ${apiErrorMessage(e)}; ${keeps}`)
        } finally {
          // The wait alone, not the TTL patch after it.
          out.waitedSeconds = ((waitEnded ?? actions.clock.now()) - began) / 1000
          pending.delete(key(p))
        }
      })
    )
  } finally {
    stop()
  }
}

/** Outcomes of a run cancelled while it waited for running Jobs: nothing was deleted. */
function abandonCancelled(plan: Plan): JobOutcome[] {
  return plan.jobs.map((p) => {
    if (p.action === 'keep') return outcome(p, 'kept')
    return { ...outcome(p, 'kept', `${p.reason} — not ${p.action === 'wait' ? 'seen finished' : 'deleted'}: ${CANCELLED}`), waited: p.action === 'wait' }
  })
}

/** Outcomes of a run that deletes nothing because of the `blocking` Jobs (key → why). */
function abandon(plan: Plan, blocking: Map<string, string>): JobOutcome[] {
  const names = someNames([...blocking.keys()].map((k) => k.split('/')[1]))
  return plan.jobs.map((p) => {
    const why = blocking.get(key(p))
    if (why !== undefined) return outcome(p, 'blocked', why)
    return outcome(p, 'kept', p.action === 'keep' ? p.reason : `${p.reason} — not deleted, because of ${names}`)
  })
}
