// The report file: every Job of the run with its outcome, as JSON in logs-dir, whatever the
// number of Jobs (the summary and the outputs show only as many as fit).
import { mkdir, open, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { RunResult } from '../execute/outcome.ts'
import { whereWords } from '../observe/observed.ts'
import { INPUT, SettingsError, type Settings } from '../settings/settings.ts'

/**
 * Checks, before the cluster is touched, that logs-dir can be created and written: a run that
 * could not save logs would keep every Job whose logs it must save, and could not write its report.
 */
export async function checkLogsDir(logsDir: string): Promise<void> {
  const probe = join(logsDir, `.job-sweeper-probe-${process.pid}`)
  try {
    await mkdir(logsDir, { recursive: true, mode: 0o700 })
    await writeFile(probe, '', { mode: 0o600 })
    await rm(probe, { force: true })
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? String(e)
    throw new SettingsError(
      `Invalid ${INPUT.logsDir} '${logsDir}': cannot create or write files in it (${code}); expected a directory job-sweeper can write to`
    )
  }
}

/**
 * Checks logs-dir before the cluster is touched: the report file's directory can be written, and
 * for a bucket the AWS SDK finds a region and credentials (their secrets go to `mask`), when the
 * run may save logs there.
 */
export async function checkLogs(settings: Settings, mask: (secret: string) => void): Promise<void> {
  await checkLogsDir(settings.logsDir)
  const { logsTarget } = settings
  if (logsTarget.kind !== 's3' || settings.phase === 'preflight' || settings.dryRun || settings.harvestLogs === 'none') return
  // The AWS SDK is loaded only when logs go to a bucket.
  const { checkS3Target } = await import('../store/s3-sink.ts')
  await checkS3Target(logsTarget, mask)
}

// Jobs written per write: the file is never held whole in memory (tens of thousands of Jobs).
const JOBS_PER_WRITE = 500

/** Writes <logs-dir>/job-sweeper-<phase>.json (0600), one Job per line, and returns its path. */
export async function writeReportFile(result: RunResult, logsDir: string): Promise<string> {
  await mkdir(logsDir, { recursive: true, mode: 0o700 })
  const file = join(logsDir, `job-sweeper-${result.phase}.json`)
  const handle = await open(file, 'w', 0o600)
  try {
    const head = { phase: result.phase, namespace: whereWords(result.namespace), dryRun: result.dryRun }
    await handle.write(`${JSON.stringify(head).slice(0, -1)},\n"jobs": [`)
    const { outcomes } = result
    for (let i = 0; i < outcomes.length; i += JOBS_PER_WRITE) {
      const lines = outcomes
        .slice(i, i + JOBS_PER_WRITE)
        .map(
          ({ logs, ...o }, j) =>
            `${i + j > 0 ? ',' : ''}\n ${JSON.stringify({ ...o, logs: logs?.files.map((f) => f.file), logsNeverRan: logs?.neverRan?.length ? logs.neverRan : undefined, logsGone: logs?.gone?.length ? logs.gone : undefined })}`
        )
      await handle.write(lines.join(''))
    }
    await handle.write(`\n],\n"errors": ${JSON.stringify(result.errors)},\n"warnings": ${JSON.stringify(result.warnings)}\n}\n`)
  } finally {
    await handle.close()
  }
  return file
}
