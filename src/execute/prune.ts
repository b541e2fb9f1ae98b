// Execute a PrunePlan: wait for running Jobs, save logs, delete with a UID precondition and
// foreground propagation, and wait until each Job and its pods are really gone. Every Job gets an
// outcome; problems are collected and reported together at the end (as the TTL controller does).
import { WaitTimeout, type JobsClient } from '../kube/client.ts'
import { apiErrorMessage } from '../kube/errors.ts'
import type { PlannedJob, PrunePlan } from '../plan/plan.ts'
import { shouldHarvest } from '../plan/plan.ts'
import { isFinished, jobStatus } from '../plan/predicates.ts'
import { formatDuration } from '../settings/duration.ts'
import type { Settings } from '../settings/settings.ts'
import { saveLogsOf } from './logs.ts'
import { outcome, sorted, withProgress, type ExecuteContext, type JobOutcome, type RunResult } from './outcome.ts'

// Kubernetes' own finalizers, which its controllers remove; any other one belongs to someone else.
const KUBERNETES_FINALIZERS = new Set(['foregroundDeletion', 'orphan', 'batch.kubernetes.io/job-tracking'])

/** Outcomes of a run that deletes nothing because of the `blocking` Jobs (Job → why). */
function abandon(plan: PrunePlan, blocking: Map<PlannedJob, string>): JobOutcome[] {
  return plan.jobs.map((p) => {
    const why = blocking.get(p)
    if (why !== undefined) return outcome(p, 'blocked', why)
    return outcome(p, 'kept', p.action === 'keep' ? p.reason : `${p.reason} — not deleted, because of ${[...blocking.keys()].map((b) => b.name).join(', ')}`)
  })
}

export async function executePrune(plan: PrunePlan, client: JobsClient, settings: Settings, ctx: ExecuteContext): Promise<RunResult> {
  const result: RunResult = { phase: ctx.phase, namespace: plan.namespace, dryRun: settings.dryRun, outcomes: [], errors: [], warnings: [] }
  const blocked = plan.jobs.filter((p) => p.action === 'block')
  if (blocked.length > 0) {
    result.outcomes = abandon(plan, new Map(blocked.map((p) => [p, p.reason])))
    result.errors.push(
      ...blocked.map((p) => `Job ${p.namespace}/${p.name} is still running (${formatDuration(p.ageSeconds)}) and on-running is fail; nothing was deleted`)
    )
    return result
  }
  if (settings.dryRun) {
    for (const p of plan.jobs) result.outcomes.push(outcome(p, p.action === 'keep' ? 'kept' : 'would-prune'))
    return result
  }

  const kept = plan.jobs.filter((p) => p.action === 'keep').map((p) => outcome(p, 'kept'))
  const toWait = plan.jobs.filter((p) => p.action === 'wait')
  const toDelete = plan.jobs.filter((p) => p.action === 'delete' || p.action === 'wait')

  // Wait for every running Job first: on a timeout nothing at all is deleted.
  if (toWait.length > 0) {
    const pending = new Set(toWait.map((p) => p.name))
    ctx.info(`waiting up to ${formatDuration(settings.waitTimeoutSeconds)} for ${toWait.length} running Job(s): ${toWait.map((p) => p.name).join(', ')}`)
    const waits = toWait.map(async (p) => {
      const finished = await client.watchJob(p.namespace, p.name, p.uid, (job) => job === undefined || isFinished(job), settings.waitTimeoutSeconds * 1000)
      pending.delete(p.name)
      ctx.info(`Job ${p.namespace}/${p.name} ${finished ? `finished: ${jobStatus(finished)}` : 'is gone'}`)
    })
    const settled = await withProgress(Promise.allSettled(waits), () => [...pending].join(', '), ctx)
    const timedOut = toWait.filter((_, i) => settled[i].status === 'rejected')
    if (timedOut.length > 0) {
      result.outcomes = abandon(plan, new Map(timedOut.map((p) => [p, `still running after waiting ${formatDuration(settings.waitTimeoutSeconds)}`])))
      for (const [i, s] of settled.entries()) {
        if (s.status !== 'rejected') continue
        const p = toWait[i]
        const why =
          s.reason instanceof WaitTimeout
            ? `did not finish within wait-timeout ${formatDuration(settings.waitTimeoutSeconds)} (running for ${formatDuration(p.ageSeconds + settings.waitTimeoutSeconds)})`
            : `could not be watched: ${apiErrorMessage(s.reason)}`
        result.errors.push(`Job ${p.namespace}/${p.name} ${why}; nothing was deleted`)
      }
      return result
    }
  }

  result.outcomes.push(...kept)
  const deleting: { p: PlannedJob; out: JobOutcome }[] = []
  for (const p of toDelete) {
    const out = await deleteOne(p, client, settings, ctx, result)
    out.waited = p.action === 'wait'
    result.outcomes.push(out)
    if (out.result === 'pruned') deleting.push({ p, out })
  }

  // Foreground deletion: the Job disappears only after its pods are gone, so once it is gone the
  // upgrade cannot meet it (or its pods) terminating.
  if (deleting.length > 0) {
    ctx.info(`waiting until ${deleting.length} deleted Job(s) and their pods are gone`)
    const pending = new Set(deleting.map((d) => d.p.name))
    await withProgress(
      Promise.all(
        deleting.map(async ({ p, out }) => {
          try {
            await client.watchJob(p.namespace, p.name, p.uid, (job) => job === undefined, settings.waitTimeoutSeconds * 1000)
            const pods = await client.listPodsOfJob(p.namespace, p.uid)
            if (pods.length > 0) result.warnings.push(`Job ${p.namespace}/${p.name} is gone but ${pods.length} of its pods are still terminating`)
          } catch (e) {
            const stuck = await client.getJob(p.namespace, p.name).catch(() => undefined)
            const foreign = (stuck?.metadata?.finalizers ?? []).filter((f) => !KUBERNETES_FINALIZERS.has(f))
            out.result = 'error'
            out.reason =
              foreign.length > 0
                ? `deleted, but stuck on finalizer ${foreign.join(', ')} (job-sweeper does not remove finalizers it does not own)`
                : `deleted, but still present: ${e instanceof WaitTimeout ? 'timed out' : apiErrorMessage(e)}`
            result.errors.push(`Job ${p.namespace}/${p.name} was deleted but is not gone after ${formatDuration(settings.waitTimeoutSeconds)}: ${out.reason}`)
          } finally {
            pending.delete(p.name)
          }
        })
      ),
      () => [...pending].join(', '),
      ctx
    )
  }
  return sorted(result)
}

/** Re-reads, harvests logs and deletes one Job; never throws. */
async function deleteOne(p: PlannedJob, client: JobsClient, settings: Settings, ctx: ExecuteContext, result: RunResult): Promise<JobOutcome> {
  try {
    const job = await client.getJob(p.namespace, p.name)
    if (!job) return outcome(p, 'gone', `${p.reason} — already gone`)
    if (job.metadata?.uid !== p.uid) return outcome(p, 'replaced', 'a new Job took its name since it was planned; left alone')
    const status = jobStatus(job)
    const out = outcome(p, 'pruned', p.reason, status)
    if (shouldHarvest(settings.harvestLogs, status)) {
      await saveLogsOf(out, p.uid, client, settings.logsDir, ctx, result)
    }
    const deleted = await client.deleteJob(p.namespace, p.name, p.uid)
    if (deleted === 'gone') return { ...out, result: 'gone', reason: `${p.reason} — already gone` }
    if (deleted === 'replaced') return { ...out, result: 'replaced', reason: 'a new Job took its name since it was planned; left alone' }
    ctx.info(`deleted Job ${p.namespace}/${p.name} (${status})`)
    const message = `Deleted by job-sweeper (${ctx.phase} phase): ${p.reason}${ctx.run?.url ? ` (workflow run ${ctx.run.url})` : ''}`
    await client
      .recordEvent(job, { reason: 'JobSwept', message, type: 'Normal' })
      .catch((e: unknown) => result.warnings.push(`could not record an Event for Job ${p.namespace}/${p.name}: ${apiErrorMessage(e)}`))
    return out
  } catch (e) {
    result.errors.push(`Job ${p.namespace}/${p.name}: ${apiErrorMessage(e)}`)
    return outcome(p, 'error', `${p.reason} — failed: ${apiErrorMessage(e)}`)
  }
}
