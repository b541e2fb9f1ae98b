// Inputs that do nothing in the phases a run will run: said as warnings rather than accepted in
// silence, so that `wait-for-jobs` given to a CLI's pre, or `preflight: warn` without a manifest,
// is not taken for a setting that works. Pure. A value equal to its default says nothing: a
// runner passes every input action.yml declares, with its default where `with:` gives none.
import { formatDuration, parseDuration } from '../text/duration.ts'
import { INPUT } from './inputs.ts'
import { DEFAULT_STUCK_AFTER, type Phase, type Settings } from './settings.ts'

const retentionWords = (seconds: number | null): string => (seconds === null ? 'never' : formatDuration(seconds))

/**
 * Warnings for the inputs set (away from their defaults) that none of `phases` uses: the phases
 * this run will run (the action's pre step: pre, and post in its post step; the CLI: its command).
 * `flag` words an input's name as the user gave it (`--wait-for-jobs` in the CLI).
 */
export function unusedInputs(settings: Settings, phases: readonly Phase[], flag: (name: string) => string = (name) => name): string[] {
  const runs = (...some: Phase[]): boolean => some.some((p) => phases.includes(p))
  const inPhase = `in phase: ${phases.join(' or ')}`
  const warnings: string[] = []
  const unused = (name: string, value: string, where: string, why: string): void => {
    warnings.push(`${flag(name)} '${value}' does nothing ${where}: ${why}`)
  }
  if (settings.waitForJobsSeconds > 0 && !runs('post'))
    unused(
      INPUT.waitForJobs,
      formatDuration(settings.waitForJobsSeconds),
      inPhase,
      `only post waits for the Jobs it gives TTLs (pre waits for the running Jobs it would delete, as ${flag(INPUT.onRunning)} and ${flag(INPUT.waitTimeout)} say)`
    )
  if (!settings.failOnJobFailure && (!runs('post') || settings.waitForJobsSeconds === 0))
    unused(
      INPUT.failOnJobFailure,
      'false',
      runs('post') ? `without ${flag(INPUT.waitForJobs)}` : inPhase,
      `only post with ${flag(INPUT.waitForJobs)} fails the step on a failed Job`
    )
  if (!runs('post', 'sweep')) {
    if (settings.ttlSeconds !== 3600) unused(INPUT.ttl, retentionWords(settings.ttlSeconds), inPhase, 'only post sets TTLs, and sweep enforces them')
    if (settings.failureGraceSeconds !== 86400)
      unused(INPUT.failureGrace, retentionWords(settings.failureGraceSeconds), inPhase, 'only post sets TTLs, and sweep enforces them')
    if (settings.keepLast > 0) unused(INPUT.keepLast, String(settings.keepLast), inPhase, 'only post and sweep keep the newest Jobs of a group')
  }
  if (settings.onRunning !== 'wait' && !runs('pre'))
    unused(INPUT.onRunning, settings.onRunning, inPhase, 'only pre deletes Jobs that may still run; post and sweep never delete a running Job')
  if (settings.preflightGate !== 'fail') {
    if (!runs('pre'))
      unused(
        INPUT.preflight,
        settings.preflightGate,
        inPhase,
        `only pre checks the release before it deletes (phase: preflight always checks, and only reports)`
      )
    else if (settings.scope.manifest === undefined)
      unused(
        INPUT.preflight,
        settings.preflightGate,
        `without ${flag(INPUT.manifest)}`,
        `pre checks the rendered release only when ${flag(INPUT.manifest)} gives it`
      )
  }
  if (settings.stuckAfterSeconds !== parseDuration(DEFAULT_STUCK_AFTER) && !runs('pre', 'post'))
    unused(INPUT.stuckAfter, formatDuration(settings.stuckAfterSeconds), inPhase, 'only pre and post read the pods of running Jobs; a sweep never deletes one')
  if (settings.keeperNamespace !== undefined && !runs('pre', 'post', 'sweep'))
    unused(INPUT.keeperNamespace, settings.keeperNamespace, inPhase, 'preflight changes no Job')
  if (settings.leaseName !== undefined) {
    if (!runs('pre', 'post', 'sweep')) unused(INPUT.leaseName, settings.leaseName, inPhase, 'preflight changes nothing, so it takes no Lease')
    else if (settings.allNamespaces)
      unused(INPUT.leaseName, settings.leaseName, `with ${flag(INPUT.allNamespaces)}`, 'a sweep of every namespace takes no Lease (docs/concurrency.md)')
  }
  return warnings
}
