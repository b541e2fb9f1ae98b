// The preflight phase's end in the action: the job summary, a warning per object not checked, and
// the step failed when the upgrade would fail.
import * as core from '@actions/core'
import type { Settings } from '../settings/settings.ts'
import { reportFile, type Options } from './entry.ts'
import { runPreflight } from './phase.ts'
import { headline, objectName, preflightFailed, releaseName, renderPreflightMarkdown } from './report.ts'
import { failsUpgrade, reasonOf } from './verdict.ts'

/** The action's preflight: the job summary, a warning per object not checked, and the step failed when the upgrade would fail. */
export async function preflightAction(settings: Settings, options: Options): Promise<void> {
  const result = await runPreflight(settings, options)
  await reportFile(result, settings.logsDir)
  for (const w of result.warnings) core.warning(w)
  // Outside a runner (no GITHUB_STEP_SUMMARY) the summary goes to the log, as report/write.ts does.
  if (process.env.GITHUB_STEP_SUMMARY) await core.summary.addRaw(renderPreflightMarkdown(result)).write()
  else core.info(renderPreflightMarkdown(result))
  if (preflightFailed(result)) {
    const failing = [
      ...result.blocked.map((b) => `${releaseName(result)}: ${b}`),
      ...result.verdicts.filter(failsUpgrade).map((v) => `${objectName(v)}: ${reasonOf(v.verdict)}`)
    ]
    core.setFailed(`${headline(result)}\n${failing.join('\n')}`)
  }
}
