// The per-Job actions the work queue runs: delete (pre, sweep) and set a TTL (post). Each saves
// the logs the policy asks for first, and acts only on the Job it planned for: a delete carries
// the planned uid and resourceVersion as preconditions, and on a conflict the Job is read again
// and the same decision is made on the fresh copy, as the TTL-after-finished controller does.
import type PQueue from 'p-queue'
import type { Clock } from '../kube/clock.ts'
import type { JobsClient } from '../kube/client.ts'
import { apiErrorMessage } from '../kube/errors.ts'
import { toJobRecord, type AppliedMetadata } from '../kube/job-record.ts'
import { ClusterUnreachable, RunCancelled } from '../kube/retry.ts'
import { keeperTakes, LOGS_FINALIZER } from '../plan/keeper.ts'
import type { Plan, PlannedJob } from '../plan/plan.ts'
import { ANNOTATION, MANAGED_LABEL, formatRetention, postRetentions, type Retention } from '../plan/retention.ts'
import { postTtl, TTL_AFTER_ARCHIVE } from '../plan/release-ttl.ts'
import { redact } from '../text/secrets.ts'
import { matchesSelector } from '../settings/selector.ts'
import type { Settings } from '../settings/settings.ts'
import type { LogSink } from '../store/sink.ts'
import { saveJobFile } from './job-file.ts'
import { setHold } from './keep.ts'
import { harvestLogs, type HarvestedLogs } from './logs.ts'
import { outcome, type ExecuteContext, type JobOutcome, type WorkflowRun } from './outcome.ts'

const TAIL_LINES = 20
// Tails go into the summary: those of the first failed Jobs are plenty. It shows failed Jobs' tails
// only, so no other Job's (a running one deleted by on-running: delete) is read or counted.
const MAX_TAILED_JOBS = 20
// A Job that changes again between every read and delete is left alone after this many rounds.
const MAX_ROUNDS = 3

/** Where the actions report what they did, and what they share across Jobs. */
export interface ActionContext extends ExecuteContext {
  clock: Clock
  client: JobsClient
  settings: Settings
  plan: Plan
  /** Problems that fail the step / that do not. */
  errors: string[]
  warnings: string[]
  /** Where logs are saved: logs-dir's directory or bucket. */
  sink: LogSink
  /** Jobs whose tails were read so far. */
  tailed: { count: number }
  /**
   * The Events lane: a delete's Event is queued here, so the next delete need not wait for it
   * (half the requests of a prune are Events). The executor waits for it to drain before it reports.
   */
  events: PQueue
  /** Set once the cluster was unreachable for a whole retry budget: the run stops there. */
  down: { error?: ClusterUnreachable }
}

/** What a Job's outcome says when the cluster went away before its action was done. */
export const UNREACHABLE = 'the cluster became unreachable'

/** What a Job's outcome ends with when the run was cancelled before its action was done. */
export const CANCELLED = 'the run was cancelled'

/** Why no new action may start: the cluster went away, or the run was cancelled; undefined if it may. */
export function stoppedBy(ctx: Pick<ActionContext, 'down' | 'signal'>): string | undefined {
  return ctx.down.error ? UNREACHABLE : ctx.signal?.aborted ? CANCELLED : undefined
}

/**
 * Whether `e` is the cluster being unreachable; if so it is recorded once for the run, and the
 * caller reports no error of its own: one line for the run, not one per Job.
 */
export function isUnreachable(e: unknown, ctx: Pick<ActionContext, 'down'>): e is ClusterUnreachable {
  if (!(e instanceof ClusterUnreachable)) return false
  ctx.down.error ??= e
  return true
}

const where = (p: { namespace: string; name: string }): string => `Job ${p.namespace}/${p.name}`

/**
 * Saves the Job's logs. Returns them, and whether the action may go on: not when a log could not be
 * saved and on-log-failure is keep (then the step fails, saying why).
 */
async function saveLogs(p: PlannedJob, ctx: ActionContext): Promise<{ logs: HarvestedLogs; proceed: boolean }> {
  const { settings } = ctx
  // A failed Job's last lines go into the summary: those of the first 20 failed Jobs, taken from
  // the logs' real ends as they are saved.
  const tailed = p.status === 'failed' && ctx.tailed.count < MAX_TAILED_JOBS
  if (tailed) ctx.tailed.count++
  const harvest = await harvestLogs(ctx.client, p, ctx.sink, { maxBytes: settings.maxLogBytes, lastLines: tailed ? TAIL_LINES : 0 })
  const { logs } = harvest
  // Last, so that a job.json that is there lists logs that are there.
  const notSaved = await saveJobFile(ctx.client, ctx.sink, p, harvest, {
    phase: ctx.plan.phase,
    at: new Date(ctx.clock.now()),
    workflowRun: ctx.workflowRun?.url
  })
  if (notSaved) logs.failures.push(notSaved)
  if (tailed && logs.files.length === 0) {
    ctx.tailed.count--
    logs.tails = undefined
  }
  // The summary is shown to everyone who can read the workflow run, unlike the runner's log.
  if (logs.tails)
    logs.tails = logs.tails
      .map(({ file, lines }) => ({ file, lines: settings.maskLogTails ? lines.map(redact) : lines }))
      .filter(({ lines }) => lines.some((l) => l.trim() !== ''))
  // Cancelled meanwhile: what was saved stays saved, and the action goes no further.
  if (ctx.signal?.aborted) return { logs, proceed: false }
  const cut = logs.files.filter((f) => f.truncated)
  if (cut.length > 0)
    ctx.warnings.push(
      `logs of ${where(p)}: ${cut.length} log(s) longer than max-log-bytes (${settings.maxLogBytes} bytes): their start and end are saved, the middle is cut`
    )
  if (logs.failures.length === 0) {
    const silent =
      (logs.neverRan?.length ? `; ${logs.neverRan.length} container(s) never ran, so have no log` : '') +
      (logs.gone?.length ? `; ${logs.gone.length} log(s) no longer on the node (${logs.gone.join(', ')})` : '')
    ctx.info(`saved ${logs.files.length} log file(s) of ${p.status} ${where(p)}${silent}`)
    return { logs, proceed: true }
  }
  const why = `${logs.failures[0]}${logs.failures.length > 1 ? ` (and ${logs.failures.length - 1} more)` : ''}`
  if (settings.onLogFailure === 'delete') {
    ctx.warnings.push(`logs of ${where(p)} could not all be saved (on-log-failure: delete, so it goes on): ${why}`)
    return { logs, proceed: true }
  }
  // Post deletes nothing: what it holds back is the TTL, after which the TTL controller would delete the Job unsaved.
  ctx.errors.push(
    ctx.plan.phase === 'post'
      ? `${where(p)}: its TTL was not set, because its logs could not all be saved (${why}); the Job stays as it is until a later post phase or sweep can save them`
      : `${where(p)} was kept: its logs could not all be saved (${why}); set on-log-failure: delete to delete it anyway`
  )
  return { logs, proceed: false }
}

/** Deletes one planned Job (on a 409, what the fresh copy's decision says); never throws. */
export async function deleteAction(planned: PlannedJob, ctx: ActionContext): Promise<JobOutcome> {
  const { client, plan } = ctx
  let p = planned
  let logs: HarvestedLogs | undefined
  let sent = false
  try {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      if (p.status === 'terminating' && p.letGo === undefined) {
        // Someone else's delete: waited for, never sent again nor counted as ours.
        return outcome(p, 'gone', round === 0 ? p.reason : 'being deleted by someone else since it was planned; waiting until it is gone')
      }
      if (p.harvest && !logs) {
        const saved = await saveLogs(p, ctx)
        logs = saved.logs
        if (!saved.proceed && !ctx.signal?.aborted)
          return { ...outcome(p, 'error', `kept${p.letGo ? ', held' : ''}: its logs could not all be saved (${saved.logs.failures[0]})`), logs }
      }
      // Cancelled: no delete starts (logs saved for it are fine; a delete without them never is).
      if (ctx.signal?.aborted) return { ...outcome(p, 'kept', `${p.reason} — ${logs ? 'logs saved, ' : ''}not deleted: ${CANCELLED}`), logs }
      if (p.letGo !== undefined) {
        // Its logs are saved: the hold no keeper runs to let go of goes before the delete, so that
        // the deletion completes (someone else's already asked one: it completes now).
        const released = await setHold(client, p.job, false)
        if (released.gone) return { ...outcome(p, 'gone', `${p.reason} — already gone`), logs }
        ctx.info(`let go of the keeper's hold on ${where(p)} (${p.letGo}), its logs saved`)
        if (p.status === 'terminating') return { ...outcome(p, 'gone', p.reason), logs }
        // The delete's precondition is the version the release left.
        const version = released.job?.metadata?.resourceVersion
        if (released.job && version) p = { ...p, job: released.job, resourceVersion: version, letGo: undefined }
      }
      sent = true
      const result = await client.deleteJob(p.namespace, p.name, { uid: p.uid, resourceVersion: p.resourceVersion }, p.propagation)
      if (result === 'deleted') {
        ctx.info(`deleted ${where(p)} (${p.status}, ${p.propagation.toLowerCase()})`)
        const message = `Deleted by job-sweeper (${plan.phase} phase): ${p.reason}${ctx.workflowRun?.url ? ` (workflow run ${ctx.workflowRun.url})` : ''}`
        const [job, at] = [p.job, where(p)]
        void ctx.events.add(() =>
          client
            .recordEvent(job, { reason: 'JobSwept', message, type: 'Normal' })
            .catch((e: unknown) => isUnreachable(e, ctx) || ctx.warnings.push(`could not record an Event for ${at}: ${apiErrorMessage(e)}`))
        )
        return { ...outcome(p, 'pruned'), logs }
      }
      if (result === 'gone') return { ...outcome(p, 'gone', `${p.reason} — already gone`), logs }
      // 409: the Job changed since it was read, or another Job took its name. Decide again.
      const fresh = await client.getJob(p.namespace, p.name)
      if (!fresh) return { ...outcome(p, 'gone', `${p.reason} — already gone`), logs }
      if (fresh.metadata?.uid !== p.uid) return { ...outcome(p, 'replaced', 'a new Job took its name since it was planned; left alone'), logs }
      const again = plan.redecide(toJobRecord(fresh), new Date(ctx.clock.now()))
      if (again?.action !== 'delete') {
        return { ...outcome(again ?? p, 'kept', `changed since it was planned: ${again?.reason ?? 'no longer in scope'}`), logs }
      }
      // Logs saved for a finished Job stay valid; a Job that was running when they were read is read again.
      if (again.status !== p.status) logs = undefined
      p = again
    }
    ctx.errors.push(`${where(p)} kept changing while job-sweeper tried to delete it; left alone`)
    return { ...outcome(p, 'error', 'kept changing while job-sweeper tried to delete it; left alone'), logs }
  } catch (e) {
    if (isUnreachable(e, ctx))
      return { ...outcome(p, 'error', `${p.reason} — ${sent ? 'not known whether it was deleted' : 'not deleted'}: ${UNREACHABLE}`), logs }
    if (e instanceof RunCancelled)
      return { ...outcome(p, sent ? 'error' : 'kept', `${p.reason} — ${sent ? 'not known whether it was deleted' : 'not deleted'}: ${CANCELLED}`), logs }
    ctx.errors.push(`${where(p)}: ${apiErrorMessage(e)}`)
    return { ...outcome(p, 'error', `${p.reason} — failed: ${apiErrorMessage(e)}`), logs }
  }
}

/**
 * The merge patch that records the policy on the Job and sets its TTL — but leaves out every
 * field the chart server-side applies (`chartTtl`, `applied`): the chart's value stands there, as
 * job-sweeper's would make Helm 4's next apply of the unchanged Job fail with a conflict.
 */
export function retentionPatch(
  settings: Settings,
  ttlSeconds: Retention,
  workflowRun: WorkflowRun | undefined,
  chartTtl: boolean,
  applied?: AppliedMetadata,
  afterArchive?: string
): object {
  const written: Record<string, string | undefined> = {
    [ANNOTATION.ttl]: formatRetention(settings.ttlSeconds),
    [ANNOTATION.failureGrace]: formatRetention(settings.failureGraceSeconds),
    [ANNOTATION.runUrl]: workflowRun?.url || undefined,
    [ANNOTATION.commit]: workflowRun?.commit || undefined,
    [TTL_AFTER_ARCHIVE]: afterArchive
  }
  const annotations = Object.fromEntries(Object.entries(written).filter(([k, v]) => v !== undefined && !applied?.annotations.includes(k)))
  const labels = applied?.labels.includes(MANAGED_LABEL) ? {} : { [MANAGED_LABEL]: 'true' }
  const metadata = { labels, annotations }
  // null removes the field: `never` means the TTL controller must not delete the Job.
  return chartTtl ? { metadata } : { metadata, spec: { ttlSecondsAfterFinished: ttlSeconds } }
}

/** Whether post holds this Job for a keeper (keeper-namespace given, and its Lease read): undefined when not asked. */
function holdForKeeper(p: PlannedJob, ctx: ActionContext): ReturnType<typeof keeperTakes> | undefined {
  if (ctx.keeper === undefined || ctx.keeper.unread) return undefined
  const labels = { ...p.job.metadata?.labels, [MANAGED_LABEL]: 'true' }
  return keeperTakes(ctx.keeper.lease, p.namespace, labels, matchesSelector)
}

/** Gives one planned Job its TTL (`ttl`), its logs saved first when asked; never throws. */
export async function ttlAction(p: PlannedJob, ttl: Retention, ctx: ActionContext): Promise<JobOutcome> {
  const { client, settings } = ctx
  let logs: HarvestedLogs | undefined
  try {
    if (p.harvest) {
      // Before the TTL: a short failure-grace could let the TTL controller delete the pods first.
      const saved = await saveLogs(p, ctx)
      logs = saved.logs
      if (!saved.proceed && !ctx.signal?.aborted)
        return { ...outcome(p, 'error', `TTL not set: its logs could not all be saved (${saved.logs.failures[0]})`), logs }
    }
    if (ctx.signal?.aborted) return { ...outcome(p, 'kept', `${p.reason} — TTL not set: ${CANCELLED}`), logs }
    const hold = holdForKeeper(p, ctx)
    // Held for a keeper, the TTL starts after the archive: no TTL now, only the policy by outcome,
    // which whoever lets go of the hold writes as the field (plan/release-ttl.ts). The chart's own
    // server-side-applied TTL is not ours to defer: the TTL controller may take its pods first.
    const decided = postTtl(ttl, postRetentions(p.job, settings), hold?.takes === true && !p.chartTtl)
    const patch = retentionPatch(settings, decided.ttlSeconds, ctx.workflowRun, p.chartTtl === true, p.job.appliedMetadata, decided.afterArchive)
    // With the TTL's policy in one patch, so the keeper never finds the one without the other. A
    // strategic merge adds the finalizer to the Job's own (a merge patch would replace the list).
    const patched = hold?.takes
      ? await client.patchJob(
          p.namespace,
          p.name,
          { uid: p.uid },
          { ...patch, metadata: { ...(patch as { metadata: object }).metadata, finalizers: [LOGS_FINALIZER] } },
          'strategic'
        )
      : await client.patchJob(p.namespace, p.name, { uid: p.uid }, patch)
    if (patched === 'gone' || patched === 'conflict') return { ...outcome(p, 'gone', 'gone, or replaced by a new Job, before its TTL could be set'), logs }
    const held =
      hold === undefined
        ? ''
        : hold.takes
          ? `; held for the keeper (${LOGS_FINALIZER})${p.chartTtl ? `: the chart's TTL runs meanwhile, and may delete its pods before their archive` : ''}`
          : `; not held for the keeper: ${hold.why}, so the TTL runs from its finish`
    ctx.info(`${where(p)} (${p.status}): ${p.chartTtl ? `the chart's ttlSecondsAfterFinished kept` : decided.words}${held}`)
    return { ...outcome(p, 'ttl-set'), logs }
  } catch (e) {
    if (isUnreachable(e, ctx)) return { ...outcome(p, 'error', `${p.reason} — TTL not known to be set: ${UNREACHABLE}`), logs }
    if (e instanceof RunCancelled) return { ...outcome(p, 'error', `${p.reason} — TTL not known to be set: ${CANCELLED}`), logs }
    ctx.errors.push(`${where(p)}: could not set its TTL: ${apiErrorMessage(e)}`)
    return { ...outcome(p, 'error', `${p.reason} — failed: ${apiErrorMessage(e)}`), logs }
  }
}
