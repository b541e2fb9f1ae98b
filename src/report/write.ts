// Writes a Report with @actions/core: the job summary and the outputs.
import * as core from '@actions/core'
import type { PruneResult } from '../execute/prune.ts'
import { buildReport } from './summary.ts'

export async function writeReport(result: PruneResult, phase: string, logsDir: string): Promise<void> {
  const report = buildReport(result, phase)
  for (const [name, jobs] of Object.entries(report.outputs)) core.setOutput(name, JSON.stringify(jobs))
  core.setOutput('logs-dir', logsDir)
  await core.summary.addRaw(report.markdown).write()
}
