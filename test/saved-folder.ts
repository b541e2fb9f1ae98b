// Where a phase saved a Job's logs in a logs-dir directory: `<logs-dir>/<namespace>/<job>/<uid>/`
// (jobKey). The disk twin of s3-objects.ts's savedJob.
import { readdirSync } from 'node:fs'
import { join } from 'node:path'

/**
 * The folder of the Job `namespace/job` under `logsDir`: `uid`'s, or without it the only one there
 * (a test that saved more than one Job of the name names the uid; two folders here is an error).
 */
export function savedFolder(logsDir: string, namespace: string, job: string, uid?: string): string {
  const named = join(logsDir, namespace, job)
  if (uid !== undefined) return join(named, uid)
  const uids = readdirSync(named)
  if (uids.length !== 1) throw new Error(`${named}: expected the folder of one Job's uid, found ${JSON.stringify(uids)}`)
  return join(named, uids[0])
}
