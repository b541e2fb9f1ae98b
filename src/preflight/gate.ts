// Pre's preflight gate: before pre deletes anything or waits on a running Job, every object of the
// rendered release is checked the way the upgrade will write it (check.ts). An upgrade that would
// fail anyway, on an object neither pre nor a chosen remedy clears, stops pre before its first
// delete (`preflight: fail`, the default) or is warned of (`warn`): otherwise pre would delete the
// migration Job of an upgrade that then fails, leaving the release FAILED and the Job gone.
import type { PreflightSection } from '../execute/outcome.ts'
import type { ManifestClient } from '../kube/manifest-client.ts'
import type { Console } from '../report/console.ts'
import { INPUT, type PreflightGate, type Settings } from '../settings/settings.ts'
import { reportFile } from './entry.ts'
import { checkRendered } from './phase.ts'
import { headline, objectName, preflightRows, releaseName, type PreflightResult } from './report.ts'
import { failsUpgrade, reasonOf, recreatedByPre, type ObjectVerdict } from './verdict.ts'

/** How checkRelease's warning of an object not checked begins. */
const NOT_CHECKED = 'preflight could not check '

/** Failing objects named in an error or warning; the summary and the report file have them all. */
const NAMED = 10

/** What pre does with the preflight's result. */
export interface GateDecision {
  /** Pre fails with these before its first delete (`preflight: fail`). */
  errors: string[]
  warnings: string[]
  section: PreflightSection
  /** The StatefulSets recreate-statefulsets deletes once pre's Jobs are done: only when nothing else fails. */
  recreate: ObjectVerdict[]
}

/** `Service shop/web: immutable: spec.type: ClusterIP → NodePort`, a line each, the first NAMED. */
function failingLines(failing: ObjectVerdict[]): string {
  const lines = failing.slice(0, NAMED).map((v) => `${objectName(v)}: ${reasonOf(v.verdict)}`)
  if (failing.length > NAMED) lines.push(`… and ${failing.length - NAMED} more (the job summary and job-sweeper-preflight.json list them)`)
  return lines.join('\n')
}

/**
 * Why an object was not checked, without the API server's message (which may quote a webhook's
 * address): `our credentials may not get configmaps`, `admission webhook w could not be called (500)`.
 * The step's log has the whole message.
 */
export function notCheckedBriefly(why: string): string {
  const rbac = /cannot (\S+) resource "([^"]+)"(?: in API group "([^"]*)")?/.exec(why)
  if (rbac) return `our credentials may not ${rbac[1]} ${rbac[2]}${rbac[3] ? `.${rbac[3]}` : ''}`
  const webhook = /^admission webhook \S+ (?:could not be called \(\d+\)|does not support dry run)/.exec(why)
  if (webhook) return webhook[0]
  const status = /^(\d{3})\b/.exec(why)
  return status ? `the API server answered ${status[1]}` : why.split(':')[0]
}

/** Pure: the gate's decision on a preflight result. */
export function gateDecision(result: PreflightResult, gate: Exclude<PreflightGate, 'off'>): GateDecision {
  const failing = result.verdicts.filter(failsUpgrade)
  const blockedLines = result.blocked.map((b) => `${releaseName(result)}: ${b}`)
  const chosen = result.verdicts.filter((v) => v.clearedByPre && recreatedByPre(v))
  const brief = result.verdicts.map((v) => (v.verdict.kind === 'not-checked' ? { ...v, verdict: { ...v.verdict, why: notCheckedBriefly(v.verdict.why) } } : v))
  const rows = preflightRows({ ...result, verdicts: brief })
  const section: PreflightSection = { headline: headline(result), failed: failing.length > 0 || result.blocked.length > 0, rows, remedies: [] }
  // checkRelease's warnings quote the API server; the log has those (preflightGate), the summary these.
  const warnings = [
    ...result.warnings.filter((w) => !w.startsWith(NOT_CHECKED)),
    ...brief.flatMap((v) => (v.verdict.kind === 'not-checked' ? [`${NOT_CHECKED}${objectName(v)}: ${v.verdict.why}`] : []))
  ]
  if (failing.length === 0 && blockedLines.length === 0) return { errors: [], warnings, section, recreate: chosen }
  const named = [...blockedLines, failingLines(failing)].filter((l) => l !== '').join('\n')
  const said = `${headline(result)}`
  if (gate === 'fail')
    return {
      errors: [`preflight: ${said}, so pre deleted nothing (${INPUT.preflight}: fail)\n${named}`],
      warnings,
      section,
      recreate: []
    }
  warnings.unshift(`preflight: ${said}; pre goes on (${INPUT.preflight}: warn)\n${named}`)
  // A remedy runs only for an upgrade that will then apply: here it would not.
  for (const v of chosen) {
    const why = `${INPUT.recreateStatefulSets}: ${objectName(v)} is not deleted, since the upgrade would fail on other objects`
    warnings.push(why)
    section.remedies.push(why)
  }
  return { errors: [], warnings, section, recreate: [] }
}

/** Pre's gate: the check, its report file, its rows in the log, and the decision. */
export async function preflightGate(client: ManifestClient, settings: Settings, out: Console): Promise<GateDecision> {
  const result = await checkRendered(client, settings, out)
  const file = await reportFile(result, settings.logsDir)
  for (const w of result.warnings) if (w.startsWith(NOT_CHECKED)) out.info(w)
  const decision = gateDecision(result, settings.preflightGate === 'warn' ? 'warn' : 'fail')
  for (const row of decision.section.rows.slice(0, NAMED)) out.info(`${row.mark.padEnd(14)} ${row.object}: ${row.reason}`)
  out.info(`${decision.section.headline}${file ? `; every object's verdict: ${file}` : ''}`)
  return decision
}
