// The preflight phase's end in the CLI: run it, print its verdicts, and say whether the upgrade
// would apply (exit 0) or fail (exit 1). The action's end is action.ts.
import { apiErrorMessage } from '../kube/errors.ts'
import type { PhaseOptions } from '../report/console.ts'
import type { Settings } from '../settings/settings.ts'
import { runPreflight, writePreflightReport } from './phase.ts'
import { headline, preflightFailed, renderPreflightText, type PreflightResult } from './report.ts'
import { failsUpgrade, reasonOf } from './verdict.ts'

export type Options = Pick<PhaseOptions, 'console' | 'mask' | 'signal'>

/** The report file, or null (with a warning) when it cannot be written: the verdicts stand without it. */
export async function reportFile(result: PreflightResult, logsDir: string): Promise<string | null> {
  return writePreflightReport(result, logsDir).catch((e: unknown) => {
    result.warnings.push(`could not write the preflight report in logs-dir '${logsDir}' (${apiErrorMessage(e)})`)
    return null
  })
}

/** The CLI's preflight: the verdicts on standard output (text, or JSON with --json); returns the exit code. */
export async function preflightCli(settings: Settings, json: boolean, out: (text: string) => void, options: Options): Promise<number> {
  const result = await runPreflight(settings, options)
  const file = await reportFile(result, settings.logsDir)
  const failed = preflightFailed(result)
  if (json) {
    const objects = result.verdicts.map((v) => ({ ...v, reason: reasonOf(v.verdict), failsUpgrade: failsUpgrade(v) }))
    out(
      `${JSON.stringify({ phase: 'preflight', namespace: result.namespace, wouldApply: !failed, headline: headline(result), mode: result.mode, renderer: result.renderer, objects, blocked: result.blocked, hooks: result.hooks, warnings: result.warnings, 'report-file': file, 'api-requests': result.apiRequests }, null, 2)}\n`
    )
  } else out(`${renderPreflightText(result)}\nReport: ${file ?? 'not written'}\n`)
  return failed ? 1 : 0
}
