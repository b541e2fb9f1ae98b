// Writes a Report with @actions/core: the job summary and the outputs.
import * as core from '@actions/core'
import type { RunResult } from '../execute/outcome.ts'
import { buildReport } from './summary.ts'

export async function writeReport(result: RunResult, logsDir: string): Promise<void> {
  const report = buildReport(result)
  for (const [name, jobs] of Object.entries(report.outputs)) {
    core.setOutput(name, JSON.stringify(jobs))
    core.setOutput(`${name}-count`, jobs.length)
  }
  core.setOutput('logs-dir', logsDir)
  await core.summary.addRaw(report.markdown).write()
}
