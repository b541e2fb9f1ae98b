// The logs-dir input: a directory on this machine (~ expanded), or s3://bucket/prefix for an S3
// bucket or an S3-compatible store. For a store, the endpoint is the s3-endpoint input, else the
// AWS SDK's own setting (AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL), checked here; with one the
// bucket is addressed by path, as S3-compatible stores expect; credentials and the region are the SDK's.
import { tmpdir } from 'node:os'
import { join, relative, isAbsolute } from 'node:path'
import { INPUT, SettingsError } from './inputs.ts'
import { expandHome } from './kubeconfig-input.ts'

/** Where saved logs go: a directory, or objects under a key prefix in a bucket. */
export type LogsTarget =
  | { kind: 'dir'; dir: string }
  | {
      kind: 's3'
      /** The input as given, normalized: s3://bucket/prefix (no trailing slash). */
      url: string
      bucket: string
      /** Key prefix without leading or trailing '/'; '' for the bucket's root. */
      prefix: string
      /** An S3-compatible store's endpoint: the s3-endpoint input, else the environment's (AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL); undefined: AWS. */
      endpoint?: string
    }

/** The logs-dir as a user reads it: the directory, or s3://bucket/prefix. */
export const logsWhere = (target: LogsTarget): string => (target.kind === 'dir' ? target.dir : target.url)

const SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i
// S3's rules (3 to 63 lowercase letters, digits, '.' and '-'), widened to what S3-compatible stores
// take: Google Cloud Storage allows '_' and names up to 222 characters with dots.
const BUCKET = /^[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]$/

/**
 * The endpoint of the store: the s3-endpoint input, else the AWS SDK's own setting in the
 * environment (AWS_ENDPOINT_URL_S3, then AWS_ENDPOINT_URL), checked; undefined when none is set.
 */
function endpointOf(env: NodeJS.ProcessEnv, url: string, input: string | undefined): string | undefined {
  const fromEnv = (): readonly [string, string | undefined] | undefined =>
    /^true$/i.test(env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS ?? '')
      ? undefined
      : (['AWS_ENDPOINT_URL_S3', 'AWS_ENDPOINT_URL'] as const).map((n) => [n, env[n]?.trim()] as const).find(([, v]) => v)
  const [name, value] = input !== undefined ? [INPUT.s3Endpoint, input] : (fromEnv() ?? [])
  if (name === undefined || value === undefined) return undefined
  let parsed: URL | undefined
  try {
    parsed = new URL(value)
  } catch {
    parsed = undefined
  }
  if (parsed?.protocol !== 'http:' && parsed?.protocol !== 'https:')
    throw new SettingsError(
      `Invalid ${name} '${value}' (the endpoint of ${INPUT.logsDir} '${url}'): expected a URL like https://storage.googleapis.com or http://127.0.0.1:7070`
    )
  return value
}

/**
 * The logs-dir input (with s3-endpoint, `endpoint`), or the runner's default directory; throws
 * SettingsError for a URL it cannot write to, and for an endpoint without a bucket.
 */
export function logsTargetOf(value: string | undefined, env: NodeJS.ProcessEnv, endpoint?: string): LogsTarget {
  const given = value?.trim() || undefined
  const endpointInput = endpoint?.trim() || undefined
  const scheme = given === undefined ? undefined : SCHEME.exec(given)?.[1]
  if (endpointInput !== undefined && scheme?.toLowerCase() !== 's3')
    throw new SettingsError(
      `Invalid ${INPUT.s3Endpoint} '${endpointInput}' with ${INPUT.logsDir} '${given ?? ''}': expected ${INPUT.logsDir} s3://bucket/prefix, the bucket on that store`
    )
  if (given === undefined || scheme === undefined) return { kind: 'dir', dir: expandHome(given ?? defaultLogsDir(env), env) }
  const expected = `Invalid ${INPUT.logsDir} '${given}': expected a directory or s3://bucket/prefix`
  if (scheme.toLowerCase() !== 's3') throw new SettingsError(expected)
  const [bucket, ...rest] = given.slice(scheme.length + 3).split('/')
  if (bucket === '') throw new SettingsError(`${expected}; it names no bucket`)
  if (!BUCKET.test(bucket)) throw new SettingsError(`${expected}; '${bucket}' is no bucket name (lowercase letters, digits, '.', '-' and '_')`)
  const prefix = rest.filter((part) => part !== '').join('/')
  const url = `s3://${bucket}${prefix ? `/${prefix}` : ''}`
  return { kind: 's3', url, bucket, prefix, endpoint: endpointOf(env, url, endpointInput) }
}

/**
 * Where logs and the report file go when logs-dir is not given; the report file's directory when
 * logs-dir is a bucket. On a runner, its temporary directory (the job's own); elsewhere the
 * system's, in a folder of this user's (`job-sweeper-<uid>`, as tmux's `tmux-<uid>`): a shared
 * /tmp where another user ran job-sweeper first would otherwise refuse this user's writes.
 */
export const defaultLogsDir = (env: NodeJS.ProcessEnv): string =>
  env.RUNNER_TEMP ? join(env.RUNNER_TEMP, 'job-sweeper', 'logs') : join(tmpdir(), `job-sweeper${process.getuid ? `-${process.getuid()}` : ''}`, 'logs')

/**
 * Why what this run saves in `target` does not outlive it, or undefined when it does: a bucket (the
 * run's own logs-dir and endpoint) or a directory that stays once the run ended. A directory does
 * not in the runner's temporary directory (emptied when the job ends), on a GitHub-hosted runner
 * (gone with it), or as the default outside a runner (a temporary folder). pre and sweep let go of a
 * keeper's hold only when the logs they save for it outlive them.
 */
export function logsGoneWithRun(target: LogsTarget, env: NodeJS.ProcessEnv): string | undefined {
  if (target.kind === 's3') return undefined
  const where = `${INPUT.logsDir} '${target.dir}'`
  const inside = (dir: string): boolean => {
    const path = relative(dir, target.dir)
    return path === '' || (!path.startsWith('..') && !isAbsolute(path))
  }
  if (env.RUNNER_TEMP && inside(env.RUNNER_TEMP)) return `${where} is in the runner's temporary directory, emptied when the job ends`
  if (env.GITHUB_ACTIONS === 'true' && env.RUNNER_ENVIRONMENT !== 'self-hosted') return `${where} is on a GitHub-hosted runner, gone when the job ends`
  if (target.dir === defaultLogsDir(env)) return `${where} is the default, a temporary folder`
  return undefined
}
