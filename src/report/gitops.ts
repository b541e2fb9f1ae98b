// Warnings for deleted Jobs that a GitOps controller tracks: deleting one unblocks the upgrade, but
// Argo CD or Flux may see the missing Job as drift and re-create it, which runs it again. Pure.
import type { JobOutcome } from '../execute/outcome.ts'
import type { Plan } from '../plan/plan.ts'
import { gitOpsOwner } from '../plan/predicates.ts'

/** Jobs named one by one; the rest are counted in one more line. */
const MAX_NAMED = 5

/** One warning per deleted (or, in a dry run, to-be-deleted) Job that Argo CD or Flux tracks, capped. */
export function gitOpsWarnings(plan: Plan, outcomes: JobOutcome[]): string[] {
  const planned = new Map(plan.jobs.map((p) => [`${p.namespace}/${p.name}`, p]))
  const tracked = outcomes.flatMap((o) => {
    const p = planned.get(`${o.namespace}/${o.name}`)
    const owner = p && (o.result === 'pruned' || o.result === 'would-prune') ? gitOpsOwner(p.job) : undefined
    return owner ? [{ job: `${o.namespace}/${o.name}`, owner }] : []
  })
  const warnings = tracked
    .slice(0, MAX_NAMED)
    .map(({ job, owner }) => `${owner.tool} tracks Job ${job} (${owner.marker}): drift correction may re-create it and re-run it`)
  if (tracked.length > MAX_NAMED) {
    warnings.push(`… and ${tracked.length - MAX_NAMED} more deleted Job(s) tracked by Argo CD or Flux: drift correction may re-create and re-run them`)
  }
  return warnings
}
