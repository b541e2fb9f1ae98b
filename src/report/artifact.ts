// upload-logs: what a phase saved in logs-dir (a directory on the runner, gone with it) and its
// report file, uploaded as one workflow artifact with @actions/artifact, after the phase did its
// work, also when it failed or was cancelled. The artifact's name is the job's and the phase's; a
// name the run already has (a matrix runs the same job more than once) gets -2, -3, ….
import { join } from 'node:path'
import type { Phase } from '../settings/settings.ts'

/** Uploads files under `root` as the artifact `name`; @actions/artifact's client, or a test's. */
export interface ArtifactUploader {
  upload(name: string, files: string[], root: string): Promise<{ id?: number; size?: number }>
}

/** The artifact a phase uploaded, for the outputs and the summary. */
export interface LogsArtifact {
  name: string
  /** Its page in the workflow run (as actions/upload-artifact gives it); undefined without an id or a run. */
  url?: string
  files: number
  /** Bytes uploaded (zipped), as the service counted them. */
  bytes?: number
}

/** Names tried after the first when the run already has an artifact of that name. */
const MORE_NAMES = 4

/** job-sweeper-logs-<job>-<phase>, and -attempt<N> for a re-run (whose first attempt may have uploaded the name). */
export function artifactName(phase: Phase, env: NodeJS.ProcessEnv): string {
  // A job's id is letters, digits, '-' and '_': nothing an artifact name refuses.
  const job = env.GITHUB_JOB?.replace(/[^\w-]/g, '-') || 'job'
  const attempt = Number(env.GITHUB_RUN_ATTEMPT ?? '1')
  return `job-sweeper-logs-${job}-${phase}${attempt > 1 ? `-attempt${attempt}` : ''}`
}

/** Whether the service refused the name as one the run already has (twirp's 409). */
const nameTaken = (e: unknown): boolean => /\(409\)|already exists/i.test(e instanceof Error ? e.message : String(e))

/**
 * Uploads `keys` (under `logsDir`) and the report file as one artifact of the workflow run at
 * `runUrl` (main.ts's workflowRun). Returns what it uploaded;
 * undefined when the phase saved no log (nothing is uploaded then). Throws what the upload threw.
 */
export async function uploadSavedLogs(
  keys: readonly string[],
  logsDir: string,
  reportFile: string | undefined,
  phase: Phase,
  uploader: ArtifactUploader,
  runUrl: string | undefined,
  env: NodeJS.ProcessEnv = process.env
): Promise<LogsArtifact | undefined> {
  if (keys.length === 0) return undefined
  const files = [...new Set(keys)].map((key) => join(logsDir, ...key.split('/')))
  if (reportFile !== undefined) files.push(reportFile)
  const base = artifactName(phase, env)
  for (let n = 1; ; n++) {
    const name = n === 1 ? base : `${base}-${n}`
    try {
      const { id, size } = await uploader.upload(name, files, logsDir)
      // Its page, as actions/upload-artifact gives it: <run>/artifacts/<id>.
      return { name, url: id === undefined || runUrl === undefined ? undefined : `${runUrl}/artifacts/${id}`, files: files.length, bytes: size }
    } catch (e) {
      if (!nameTaken(e) || n > MORE_NAMES) throw e
    }
  }
}

/** @actions/artifact's client, loaded only when upload-logs is on (it brings an Azure blob client and a zip writer). */
export async function actionsArtifactUploader(): Promise<ArtifactUploader> {
  const { DefaultArtifactClient } = await import('@actions/artifact')
  const client = new DefaultArtifactClient()
  return { upload: (name, files, root) => client.uploadArtifact(name, files, root) }
}
