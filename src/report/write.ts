// Writes a Report with @actions/core: the job summary and the outputs.
import * as core from '@actions/core'
import type { RunResult } from '../execute/outcome.ts'
import { buildReport, failureMarkdown } from './summary.ts'

/** Appends to the job summary; outside a runner (no GITHUB_STEP_SUMMARY) prints it instead. */
async function writeSummary(markdown: string): Promise<void> {
  if (process.env.GITHUB_STEP_SUMMARY) await core.summary.addRaw(markdown).write()
  else core.info(markdown)
}

export async function writeReport(result: RunResult, logsDir: string): Promise<void> {
  const report = buildReport(result)
  for (const [name, jobs] of Object.entries(report.outputs)) {
    core.setOutput(name, JSON.stringify(jobs))
    core.setOutput(`${name}-count`, jobs.length)
  }
  core.setOutput('logs-dir', logsDir)
  await writeSummary(report.markdown)
}

/** The summary of a run that stopped on an error before it had outcomes to report. */
export async function writeFailure(phase: string, message: string): Promise<void> {
  await writeSummary(failureMarkdown(phase, message))
}
