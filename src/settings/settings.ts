// The action's inputs (or the CLI's flags), parsed once into one typed Settings object.
// Nothing else reads inputs: every other module takes Settings.
import { join } from 'node:path'
import { tmpdir } from 'node:os'
import { parseDuration } from './duration.ts'

/** Input names: part of the public interface (action.yml and README document each). */
export const INPUT = {
  kubeconfig: 'kubeconfig',
  context: 'context',
  namespace: 'namespace',
  release: 'release',
  manifest: 'manifest',
  selector: 'selector',
  jobs: 'jobs',
  includeHooks: 'include-hooks',
  onRunning: 'on-running',
  waitTimeout: 'wait-timeout',
  harvestLogs: 'harvest-logs',
  logsDir: 'logs-dir',
  dryRun: 'dry-run'
} as const

export const ON_RUNNING = ['wait', 'delete', 'fail'] as const
/** What to do with a conflicting Job that is still running. */
export type OnRunning = (typeof ON_RUNNING)[number]

export const HARVEST_LOGS = ['failed', 'all', 'none'] as const
/** Whose pod logs are saved before a Job is deleted. */
export type HarvestLogs = (typeof HARVEST_LOGS)[number]

/** Which Jobs the action may touch. A Job must match every field that is set. */
export interface Scope {
  /** Helm release name: Jobs annotated meta.helm.sh/release-name (and release-namespace). */
  release?: string
  /** Path of rendered manifests (helm template output): the Jobs named there. */
  manifest?: string
  /** Label selector, passed to the API server as is. */
  selector?: string
  /** Explicit Job names. */
  jobs?: string[]
}

/** Everything one run needs to know, parsed and validated. */
export interface Settings {
  /** Kubeconfig content (YAML), decoded from base64 when given so; undefined: the default loading rules. */
  kubeconfig?: string
  /** Kubeconfig context to use; undefined: the current context. */
  context?: string
  /** Namespace to work in; undefined: the context's namespace, else `default`. */
  namespace?: string
  /** Which Jobs are in scope. At least one field is set. */
  scope: Scope
  /** Whether Helm/Argo hook Jobs are in scope (their own delete policies manage them otherwise). */
  includeHooks: boolean
  /** What to do with a conflicting Job that is still running. */
  onRunning: OnRunning
  /** How long `on-running: wait` waits for running Jobs, in seconds. */
  waitTimeoutSeconds: number
  /** Whose logs are saved before deletion. */
  harvestLogs: HarvestLogs
  /** Where logs are saved: <logsDir>/<namespace>/<job>/<pod>/<container>.log. */
  logsDir: string
  /** Plan and report only; change nothing. */
  dryRun: boolean
}

/** A bad input: the message names the input, the value and what was expected. */
export class SettingsError extends Error {
  override name = 'SettingsError'
}

type ReadInput = (name: string) => string

function oneOf<T extends string>(read: ReadInput, name: string, allowed: readonly T[], fallback: T): T {
  const value = read(name).trim()
  if (value === '') return fallback
  if ((allowed as readonly string[]).includes(value)) return value as T
  throw new SettingsError(`Invalid ${name} '${value}': expected one of ${allowed.join(', ')}`)
}

function bool(read: ReadInput, name: string, fallback: boolean): boolean {
  const value = read(name).trim().toLowerCase()
  if (value === '') return fallback
  if (value === 'true') return true
  if (value === 'false') return false
  throw new SettingsError(`Invalid ${name} '${read(name).trim()}': expected true or false`)
}

function duration(read: ReadInput, name: string, fallback: string): number {
  const value = read(name).trim() || fallback
  const seconds = parseDuration(value)
  if (seconds === undefined) throw new SettingsError(`Invalid ${name} '${value}': expected a duration like 90s, 15m, 1h30m, 7d, or seconds`)
  return seconds
}

function optional(read: ReadInput, name: string): string | undefined {
  const value = read(name).trim()
  return value === '' ? undefined : value
}

/** Kubeconfig YAML as given, or decoded when the input is base64 (as many secrets store it). */
export function decodeKubeconfig(value: string): string {
  const text = value.trim()
  if (/^[A-Za-z0-9+/=\s]+$/.test(text) && !text.includes(':')) {
    const decoded = Buffer.from(text.replace(/\s+/g, ''), 'base64').toString('utf8')
    if (/apiVersion|clusters|current-context/.test(decoded)) return decoded
    throw new SettingsError(`Invalid ${INPUT.kubeconfig}: it looks like base64 but does not decode to a kubeconfig`)
  }
  if (!/clusters\s*:|"clusters"/.test(text))
    throw new SettingsError(`Invalid ${INPUT.kubeconfig}: expected kubeconfig YAML (with clusters:) or the same base64-encoded`)
  return text
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/
const JOB_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/

/** Parses and validates the inputs; throws SettingsError naming the first bad input. */
export function parseSettings(read: ReadInput, env: NodeJS.ProcessEnv = process.env): Settings {
  const kubeconfigInput = optional(read, INPUT.kubeconfig)
  const namespace = optional(read, INPUT.namespace)
  if (namespace !== undefined && !DNS_LABEL.test(namespace))
    throw new SettingsError(`Invalid ${INPUT.namespace} '${namespace}': expected a namespace name (lowercase letters, digits and '-')`)

  const jobs = optional(read, INPUT.jobs)
    ?.split(/[,\n]/)
    .map((j) => j.trim())
    .filter((j) => j !== '')
  for (const job of jobs ?? []) {
    if (!JOB_NAME.test(job) || job.length > 253)
      throw new SettingsError(`Invalid ${INPUT.jobs} entry '${job}': expected a Job name (lowercase letters, digits, '-' and '.')`)
  }
  const scope: Scope = {
    release: optional(read, INPUT.release),
    manifest: optional(read, INPUT.manifest),
    selector: optional(read, INPUT.selector),
    jobs: jobs && jobs.length > 0 ? jobs : undefined
  }
  if (!scope.release && !scope.manifest && !scope.selector && !scope.jobs) {
    throw new SettingsError(
      `No scope: set at least one of ${INPUT.release}, ${INPUT.manifest}, ${INPUT.selector} or ${INPUT.jobs}, so that only the Jobs you mean are touched`
    )
  }

  return {
    kubeconfig: kubeconfigInput === undefined ? undefined : decodeKubeconfig(kubeconfigInput),
    context: optional(read, INPUT.context),
    namespace,
    scope,
    includeHooks: bool(read, INPUT.includeHooks, false),
    onRunning: oneOf(read, INPUT.onRunning, ON_RUNNING, 'wait'),
    waitTimeoutSeconds: duration(read, INPUT.waitTimeout, '10m'),
    harvestLogs: oneOf(read, INPUT.harvestLogs, HARVEST_LOGS, 'failed'),
    logsDir: optional(read, INPUT.logsDir) ?? join(env.RUNNER_TEMP || tmpdir(), 'job-sweeper', 'logs'),
    dryRun: bool(read, INPUT.dryRun, false)
  }
}
