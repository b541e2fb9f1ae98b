// The preflight phase's end in the action: the job summary, a warning per object not checked, and
// the step failed when the upgrade would fail.
import * as core from '@actions/core'
import { OUTPUT_BYTES } from '../report/summary.ts'
import type { Settings } from '../settings/settings.ts'
import { reportFile, type Options } from './entry.ts'
import { runPreflight } from './phase.ts'
import { headline, objectName, preflightFailed, releaseName, renderPreflightMarkdown, type PreflightResult } from './report.ts'
import { failsUpgrade, reasonOf } from './verdict.ts'

/** What would fail the upgrade: the release's blocks, then each failing object, `{object, reason}`. */
function failing(result: PreflightResult): { object: string; reason: string }[] {
  return [
    ...result.blocked.map((b) => ({ object: releaseName(result), reason: b })),
    ...result.verdicts.filter(failsUpgrade).map((v) => ({ object: objectName(v), reason: reasonOf(v.verdict) }))
  ]
}

/** A JSON array of the first items that fit in OUTPUT_BYTES (a CI variable's size); the count output has them all. */
function cutJson(items: unknown[]): string {
  const kept: string[] = []
  let size = 2
  for (const item of items) {
    const text = JSON.stringify(item)
    if (size + text.length + 1 > OUTPUT_BYTES) break
    size += text.length + 1
    kept.push(text)
  }
  return `[${kept.join(',')}]`
}

/**
 * The outputs of phase: preflight, as the CLI's --json has them: would-apply (`true`/`false`), the
 * verdict in words, the objects that would fail it (JSON) and their count, the report file.
 */
export function preflightOutputs(result: PreflightResult, file: string | null): Record<string, string> {
  const fails = failing(result)
  return {
    'would-apply': String(!preflightFailed(result)),
    'preflight-headline': headline(result),
    'preflight-failing': cutJson(fails),
    'preflight-failing-count': String(fails.length),
    ...(file === null ? {} : { 'report-file': file })
  }
}

/** The action's preflight: the job summary, a warning per object not checked, and the step failed when the upgrade would fail. */
export async function preflightAction(settings: Settings, options: Options): Promise<void> {
  const result = await runPreflight(settings, options)
  const file = await reportFile(result, settings.logsDir)
  for (const [name, value] of Object.entries(preflightOutputs(result, file))) core.setOutput(name, value)
  for (const w of result.warnings) core.warning(w)
  // Outside a runner (no GITHUB_STEP_SUMMARY) the summary goes to the log, as report/write.ts does.
  if (process.env.GITHUB_STEP_SUMMARY) await core.summary.addRaw(renderPreflightMarkdown(result)).write()
  else core.info(renderPreflightMarkdown(result))
  if (preflightFailed(result))
    core.setFailed(
      `${headline(result)}\n${failing(result)
        .map((f) => `${f.object}: ${f.reason}`)
        .join('\n')}`
    )
}
