// Execute the post phase's RetentionPlan: annotate each Job with its policy and set
// spec.ttlSecondsAfterFinished, so the cluster's own TTL controller cleans up even if no workflow
// ever runs again. With wait-for-jobs, watch running Jobs to the end and set the exact TTL.
import type { V1Job } from '@kubernetes/client-node'
import { WaitTimeout, type JobsClient } from '../kube/client.ts'
import { apiErrorMessage } from '../kube/errors.ts'
import type { PlannedJob } from '../plan/plan.ts'
import { isFinished, jobStatus } from '../plan/predicates.ts'
import { ANNOTATION, MANAGED_LABEL, describeRetention, formatRetention, retentionOf, type Retention, type RetentionPlan } from '../plan/retention.ts'
import { formatDuration } from '../settings/duration.ts'
import type { Settings } from '../settings/settings.ts'
import { saveLogsOf } from './logs.ts'
import { outcome, sorted, withProgress, type ExecuteContext, type JobOutcome, type RunResult } from './outcome.ts'

/** The merge patch that records the policy on the Job and sets its TTL. */
export function retentionPatch(settings: Settings, ttlSeconds: Retention, run: ExecuteContext['run']): object {
  const annotations: Record<string, string> = {
    [ANNOTATION.ttl]: formatRetention(settings.ttlSeconds),
    [ANNOTATION.failureGrace]: formatRetention(settings.failureGraceSeconds)
  }
  if (run?.url) annotations[ANNOTATION.runUrl] = run.url
  if (run?.commit) annotations[ANNOTATION.commit] = run.commit
  // null removes the field: `never` means the TTL controller must not delete the Job.
  return { metadata: { labels: { [MANAGED_LABEL]: 'true' }, annotations }, spec: { ttlSecondsAfterFinished: ttlSeconds } }
}

export async function executeRetention(plan: RetentionPlan, client: JobsClient, settings: Settings, ctx: ExecuteContext): Promise<RunResult> {
  const result: RunResult = { phase: ctx.phase, namespace: plan.namespace, dryRun: settings.dryRun, outcomes: [], errors: [], warnings: [] }
  const act = plan.jobs.filter((p) => p.action === 'set-ttl' || p.action === 'wait')
  for (const p of plan.jobs.filter((p) => p.action === 'keep')) result.outcomes.push(outcome(p, 'kept'))
  if (settings.dryRun) {
    for (const p of act) result.outcomes.push(outcome(p, 'would-set-ttl'))
    return sorted(result)
  }

  // First every Job gets a TTL (running ones the upper bound), so nothing is left without one
  // even if the wait below times out or the step is cancelled.
  const outcomes = new Map<PlannedJob, JobOutcome>()
  for (const p of act) {
    const out = await setTtl(p, p.ttlSeconds ?? null, client, settings, ctx, result)
    outcomes.set(p, out)
    result.outcomes.push(out)
  }

  const toWait = act.filter((p) => p.action === 'wait' && outcomes.get(p)?.result === 'ttl-set')
  if (toWait.length > 0) {
    const pending = new Set(toWait.map((p) => p.name))
    ctx.info(`waiting up to ${formatDuration(settings.waitForJobsSeconds)} for ${toWait.length} running Job(s): ${toWait.map((p) => p.name).join(', ')}`)
    await withProgress(
      Promise.all(
        toWait.map(async (p) => {
          const out = outcomes.get(p) as JobOutcome
          out.waited = true
          try {
            const finished = await client.watchJob(
              p.namespace,
              p.name,
              p.uid,
              (job) => job === undefined || isFinished(job),
              settings.waitForJobsSeconds * 1000
            )
            await finishWait(p, finished, out, client, settings, ctx, result)
          } catch (e) {
            if (e instanceof WaitTimeout) {
              result.warnings.push(
                `Job ${p.namespace}/${p.name} was still running after wait-for-jobs ${formatDuration(settings.waitForJobsSeconds)}; it keeps the upper-bound TTL`
              )
              out.reason = `${out.reason}; still running after ${formatDuration(settings.waitForJobsSeconds)}`
            } else {
              result.errors.push(`Job ${p.namespace}/${p.name} could not be watched: ${apiErrorMessage(e)}; it keeps the upper-bound TTL`)
            }
          } finally {
            pending.delete(p.name)
          }
        })
      ),
      () => [...pending].join(', '),
      ctx
    )
  }

  // A Job that had already failed when the phase began was waited for too, in a sense: with
  // wait-for-jobs the phase's promise is "the step fails when a migration failed".
  if (settings.waitForJobsSeconds > 0) {
    for (const p of act.filter((p) => p.action === 'set-ttl' && p.status === 'failed')) {
      const out = outcomes.get(p) as JobOutcome
      if (out.result === 'ttl-set') await failedJob(p, out, client, settings, ctx, result)
    }
  }
  return sorted(result)
}

async function setTtl(p: PlannedJob, ttl: Retention, client: JobsClient, settings: Settings, ctx: ExecuteContext, result: RunResult): Promise<JobOutcome> {
  try {
    const patched = await client.patchJob(p.namespace, p.name, p.uid, retentionPatch(settings, ttl, ctx.run))
    if (!patched) return outcome(p, 'gone', 'gone, or replaced by a new Job, before its TTL could be set')
    ctx.info(`Job ${p.namespace}/${p.name} (${p.status}): ttlSecondsAfterFinished ${ttl ?? 'removed (never)'}`)
    return outcome(p, 'ttl-set')
  } catch (e) {
    result.errors.push(`Job ${p.namespace}/${p.name}: could not set its TTL: ${apiErrorMessage(e)}`)
    return outcome(p, 'error', `${p.reason} — failed: ${apiErrorMessage(e)}`)
  }
}

/** The waited Job finished (or vanished): set the TTL of its outcome. */
async function finishWait(
  p: PlannedJob,
  finished: V1Job | undefined,
  out: JobOutcome,
  client: JobsClient,
  settings: Settings,
  ctx: ExecuteContext,
  result: RunResult
): Promise<void> {
  if (!finished) {
    out.result = 'gone'
    out.reason = 'deleted while it was waited for'
    return
  }
  const status = jobStatus(finished)
  if (status !== 'succeeded' && status !== 'failed') return
  const retention = retentionOf(status, settings)
  const exact = await setTtl({ ...p, status }, retention, client, settings, ctx, result)
  out.status = status
  out.result = exact.result
  out.finishedSecondsAgo = 0
  out.retention = describeRetention(retention, 0)
  out.reason =
    retention === null
      ? `${status} after waiting; ${status === 'succeeded' ? 'ttl' : 'failure-grace'} is never: kept until removed`
      : `${status} after waiting; deleted ${status === 'succeeded' ? 'ttl' : 'failure-grace'} ${formatDuration(retention)} after it finished`
  if (status === 'failed' && out.result === 'ttl-set') await failedJob(p, out, client, settings, ctx, result)
}

/** A new Job failed: save its logs for the summary, and fail the step if so configured. */
async function failedJob(p: PlannedJob, out: JobOutcome, client: JobsClient, settings: Settings, ctx: ExecuteContext, result: RunResult): Promise<void> {
  if (settings.harvestLogs !== 'none') {
    await saveLogsOf(out, p.uid, client, settings.logsDir, ctx, result)
  }
  const kept = `kept for failure-grace ${formatRetention(settings.failureGraceSeconds)}`
  if (settings.failOnJobFailure) result.errors.push(`Job ${p.namespace}/${p.name} failed; ${kept} so it can be inspected`)
  else result.warnings.push(`Job ${p.namespace}/${p.name} failed (fail-on-job-failure is false); ${kept}`)
}
