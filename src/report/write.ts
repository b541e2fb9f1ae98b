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

export async function writeReport(result: RunResult, logsDir: string): Promise<void> {
  const report = buildReport(result)
  for (const [name, value] of Object.entries(report.outputs)) core.setOutput(name, value)
  core.setOutput('logs-dir', logsDir)
  core.setOutput('report-file', await writeReportFile(result, logsDir))
  await writeSummary(report.markdown)
}

/** The summary of a run that stopped on an error before it had outcomes to report. */
export async function writeFailure(phase: string, message: string): Promise<void> {
  await writeSummary(failureMarkdown(phase, message))
}
