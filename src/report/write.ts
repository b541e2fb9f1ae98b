// Writes a Report with @actions/core: the job summary and the outputs.
import * as core from '@actions/core'
import type { RunResult } from '../execute/outcome.ts'
import { apiErrorMessage } from '../kube/errors.ts'
import { INPUT } from '../settings/settings.ts'
import { redact } from '../text/secrets.ts'
import type { LogsArtifact } from './artifact.ts'
import { escapeMarkdown } from './markdown.ts'
import { buildReport, failureMarkdown, type LogsPlace } from './summary.ts'
import { writeReportFile } from './file.ts'

/** Appends to the job summary; outside a runner (no GITHUB_STEP_SUMMARY) prints it instead. */
async function writeSummary(markdown: string): Promise<void> {
  if (process.env.GITHUB_STEP_SUMMARY) await core.summary.addRaw(markdown).write()
  else core.info(markdown)
}

/** upload-logs: uploads what the run saved and its report file (its path, when written); undefined when nothing was saved. */
export type UploadLogs = (reportFile: string | undefined) => Promise<LogsArtifact | undefined>

/** How the upload ended. */
type Uploaded = { artifact?: LogsArtifact; error?: unknown }

/** The summary's line about the artifact, and the warning when the upload failed. */
function uploadWords(upload: Uploaded | undefined, logsDir: string): string {
  if (upload === undefined) return ''
  if (upload.error !== undefined) {
    // The service's error is quoted: nothing secret it may carry is shown.
    const message = redact(
      `${INPUT.uploadLogs}: the logs could not be uploaded (${apiErrorMessage(upload.error)}); they are on the runner in ${logsDir}, until the job ends`
    )
    core.warning(message)
    return `\n\n⚠️ ${escapeMarkdown(message)}\n`
  }
  const { artifact } = upload
  if (artifact === undefined) return `\n\nNo log was saved, so no artifact was uploaded (${INPUT.uploadLogs}).\n`
  const name = artifact.url ? `[\`${artifact.name}\`](${artifact.url})` : `\`${artifact.name}\``
  return `\n\n📦 Logs uploaded as the artifact ${name}: ${artifact.files} file(s)${artifact.bytes === undefined ? '' : `, ${artifact.bytes} bytes zipped`}.\n`
}

/**
 * Sets the outputs, writes the report file (in `logsDir`), uploads the logs when `upload` is given
 * (a failed upload is a warning: the phase's work is done), and writes the job summary; the
 * logs-dir output is `logsWhere` (the directory, or s3://bucket/prefix). A report file that cannot
 * be written leaves the outputs and the summary written, and then throws.
 */
export async function writeReport(result: RunResult, logsDir: string, logsWhere = logsDir, upload?: UploadLogs): Promise<void> {
  const report = buildReport(result)
  for (const [name, value] of Object.entries(report.outputs)) core.setOutput(name, value)
  core.setOutput('logs-dir', logsWhere)
  const file = await writeReportFile(result, logsDir).then(
    (path) => ({ path }),
    (error: unknown) => ({ error })
  )
  if ('path' in file) core.setOutput('report-file', file.path)
  const uploaded: Uploaded | undefined =
    upload &&
    (await upload('path' in file ? file.path : undefined).then(
      (artifact) => ({ artifact }),
      (error: unknown) => ({ error })
    ))
  core.setOutput('logs-artifact', uploaded?.artifact?.name ?? '')
  core.setOutput('logs-artifact-url', uploaded?.artifact?.url ?? '')
  // The Logs column names what outlasts the runner: the artifact, else the bucket (a runner's directory is said to be one).
  const artifact = uploaded?.artifact
  const place: LogsPlace = artifact
    ? { kind: 'artifact', name: artifact.name, url: artifact.url }
    : logsWhere.startsWith('s3://')
      ? { kind: 'bucket', url: logsWhere }
      : { kind: 'dir', runner: process.env.GITHUB_ACTIONS === 'true' }
  await writeSummary(buildReport(result, place).markdown + uploadWords(uploaded, logsDir))
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
