// The summary's first line: the run's outcome in words, read at a glance. Pure.
import type { JobOutcome, OutcomeKind, RunResult } from '../execute/outcome.ts'
import { cut, someNames } from '../text/shorten.ts'

/** The headline: ✅ and the counts, or ❌ and what went wrong first; `counts` also stands under a ❌. */
export interface Headline {
  ok: boolean
  text: string
  counts: string
}

// A headline that quotes an error is cut here: the error itself is listed in full below the table.
const MAX_QUOTED = 160

/** What one outcome counts as in the headline. */
type Tally = 'pruned' | 'TTL set' | 'kept' | 'gone' | 'failed' | 'blocked'

function tallyOf(result: OutcomeKind): Tally {
  switch (result) {
    case 'pruned':
    case 'would-prune':
      return 'pruned'
    case 'gone':
      // Someone else deleted it: not counted as pruned (the outputs list it apart, as `gone`).
      return 'gone'
    case 'ttl-set':
    case 'would-set-ttl':
      return 'TTL set'
    case 'error':
      return 'failed'
    case 'blocked':
      return 'blocked'
    case 'kept':
    case 'replaced':
      return 'kept'
  }
}

/**
 * "3 pruned (1 after waiting) · 0 kept" (pre), "2 TTL set · 1 kept" (post), "3 pruned · 5 kept"
 * (sweep). Each Job is counted once, in one outcome, so the counts add up to the Jobs in scope; a
 * wait is said within the outcome it led to.
 */
export function countsOf(result: RunResult): string {
  const tally = new Map<Tally, { count: number; waited: number }>()
  for (const o of result.outcomes) {
    const t = tally.get(tallyOf(o.result)) ?? { count: 0, waited: 0 }
    t.count++
    if (o.waited) t.waited++
    tally.set(tallyOf(o.result), t)
  }
  const n = (t: Tally): number => tally.get(t)?.count ?? 0
  const words = (t: Tally, label: string): string => {
    const waited = tally.get(t)?.waited ?? 0
    return `${n(t)} ${label}${waited > 0 ? ` (${waited} after waiting)` : ''}`
  }
  const would = result.dryRun ? (result.phase === 'post' ? 'TTL would be set' : 'would be pruned') : undefined
  const parts = [result.phase === 'post' ? words('TTL set', would ?? 'TTL set') : words('pruned', would ?? 'pruned'), words('kept', 'kept')]
  if (n('gone') > 0) parts.push(words('gone', 'already gone'))
  for (const t of ['failed', 'blocked'] as const) if (n(t) > 0) parts.push(words(t, t))
  return parts.join(' · ')
}

/** Why nothing was deleted: the Jobs that blocked the run, and what held them. */
function blockedText(blocked: JobOutcome[]): string {
  const names = someNames(blocked.map((o) => o.name))
  const byFail = blocked.some((o) => o.action === 'block')
  // A wait that timed out says how long it waited (`still running after waiting 10m`).
  const why = byFail ? 'still running (on-running: fail)' : blocked[0].reason
  return `blocked: ${names} ${why}; nothing was deleted`
}

export function headlineOf(result: RunResult): Headline {
  const counts = countsOf(result)
  const warned = result.warnings.length > 0 ? ` · ⚠️ ${result.warnings.length} warning${result.warnings.length === 1 ? '' : 's'}` : ''
  if (result.outcomes.length === 0 && result.errors.length === 0) return { ok: true, text: '✅ No Jobs in scope: nothing to do.', counts: '' }
  // Cancelled comes first: whatever else went wrong, the run did not finish.
  if (result.cancelled !== undefined) return { ok: false, text: `❌ ${cut(result.cancelled, MAX_QUOTED)}`, counts }
  const blocked = result.outcomes.filter((o) => o.result === 'blocked')
  if (blocked.length > 0) return { ok: false, text: `❌ ${blockedText(blocked)}`, counts }
  if (result.errors.length > 0) {
    const more = result.errors.length > 1 ? ` (and ${result.errors.length - 1} more below)` : ''
    return { ok: false, text: `❌ ${result.errors.length} failed: ${cut(result.errors[0], MAX_QUOTED)}${more}`, counts }
  }
  return { ok: true, text: `✅ ${counts}${warned}`, counts }
}
