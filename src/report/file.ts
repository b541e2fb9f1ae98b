// The report file: every Job of the run with its outcome, as JSON in logs-dir, whatever the
// number of Jobs (the summary and the outputs show only as many as fit).
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { RunResult } from '../execute/outcome.ts'

/** Writes <logs-dir>/job-sweeper-<phase>.json (0600) and returns its path. */
export async function writeReportFile(result: RunResult, logsDir: string): Promise<string> {
  await mkdir(logsDir, { recursive: true, mode: 0o700 })
  const file = join(logsDir, `job-sweeper-${result.phase}.json`)
  const jobs = result.outcomes.map(({ logs, ...o }) => ({
    ...o,
    logs: logs?.files.map((f) => f.file),
    logsNeverRan: logs?.neverRan?.length ? logs.neverRan : undefined
  }))
  const report = { phase: result.phase, namespace: result.namespace, dryRun: result.dryRun, jobs, errors: result.errors, warnings: result.warnings }
  await writeFile(file, `${JSON.stringify(report, null, 1)}\n`, { mode: 0o600 })
  return file
}
