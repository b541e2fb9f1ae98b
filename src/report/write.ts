// Writes a Report with @actions/core: the job summary and the outputs.
import * as core from '@actions/core'
import type { RunResult } from '../execute/outcome.ts'
import { buildReport, failureMarkdown } from './summary.ts'
import { writeReportFile } from './file.ts'

/** Appends to the job summary; outside a runner (no GITHUB_STEP_SUMMARY) prints it instead. */
async function writeSummary(markdown: string): Promise<void> {
  if (process.env.GITHUB_STEP_SUMMARY) await core.summary.addRaw(markdown).write()
  else core.info(markdown)
}

/**
 * Sets the outputs, writes the report file (in `logsDir`) and the job summary; the logs-dir output
 * is `logsWhere` (the directory, or s3://bucket/prefix). A report file that cannot be written
 * leaves the outputs and the summary written, and then throws.
 */
export async function writeReport(result: RunResult, logsDir: string, logsWhere = logsDir): Promise<void> {
  const report = buildReport(result)
  for (const [name, value] of Object.entries(report.outputs)) core.setOutput(name, value)
  core.setOutput('logs-dir', logsWhere)
  const file = await writeReportFile(result, logsDir).then(
    (path) => ({ path }),
    (error: unknown) => ({ error })
  )
  if ('path' in file) core.setOutput('report-file', file.path)
  await writeSummary(report.markdown)
  if ('error' in file) throw file.error
}

/** The list outputs of a run that stopped before it had outcomes (cancelled while it waited for the Lease): empty. */
export function writeNoOutcomes(phase: RunResult['phase']): void {
  const { outputs } = buildReport({ phase, namespace: '', dryRun: false, outcomes: [], errors: [], warnings: [] })
  for (const [name, value] of Object.entries(outputs)) core.setOutput(name, value)
}

/** The summary of a run that stopped on an error before it had outcomes to report. */
export async function writeFailure(phase: string, message: string): Promise<void> {
  await writeSummary(failureMarkdown(phase, message))
}
