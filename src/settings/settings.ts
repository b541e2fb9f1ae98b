// The action's inputs (or the CLI's flags), parsed once into one typed Settings object.
// Nothing else reads inputs: every other module takes Settings.
import { join } from 'node:path'
import { tmpdir } from 'node:os'
import { parseDuration } from './duration.ts'

/** Input names: part of the public interface (action.yml and README document each). */
export const INPUT = {
  phase: 'phase',
  kubeconfig: 'kubeconfig',
  context: 'context',
  namespace: 'namespace',
  allNamespaces: 'all-namespaces',
  release: 'release',
  manifest: 'manifest',
  selector: 'selector',
  jobs: 'jobs',
  includeHooks: 'include-hooks',
  onRunning: 'on-running',
  waitTimeout: 'wait-timeout',
  harvestLogs: 'harvest-logs',
  logsDir: 'logs-dir',
  dryRun: 'dry-run',
  ttl: 'ttl',
  failureGrace: 'failure-grace',
  waitForJobs: 'wait-for-jobs',
  failOnJobFailure: 'fail-on-job-failure'
} as const

export const PHASES = ['pre', 'post', 'sweep'] as const
/** pre: before helm upgrade; post: after the deployment; sweep: scheduled garbage collection. */
export type Phase = (typeof PHASES)[number]

export const ON_RUNNING = ['wait', 'delete', 'fail'] as const
/** What to do with a conflicting Job that is still running. */
export type OnRunning = (typeof ON_RUNNING)[number]

export const HARVEST_LOGS = ['failed', 'all', 'none'] as const
/** Whose pod logs are saved before a Job is deleted. */
export type HarvestLogs = (typeof HARVEST_LOGS)[number]

export const ON_LOG_FAILURE = ['keep', 'delete'] as const
/** What to do with a Job whose logs could not all be saved. */
export type OnLogFailure = (typeof ON_LOG_FAILURE)[number]

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
  /** Which phase runs (the post entry of a one-step setup runs `post` regardless). */
  phase: Phase
  /** Kubeconfig content (YAML), decoded from base64 when given so; undefined: the default loading rules. */
  kubeconfig?: string
  /** Kubeconfig context to use; undefined: the current context. */
  context?: string
  /** Namespace to work in; undefined: the context's namespace, else `default`. */
  namespace?: string
  /** Sweep only: the namespaces to sweep (the namespace input as a list); undefined: `namespace`. */
  namespaces?: string[]
  /** Sweep only: every namespace. */
  allNamespaces: boolean
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
  /** Retention of a succeeded Job after it finished, in seconds; null: never delete it. */
  ttlSeconds: number | null
  /** Retention of a failed Job after it finished, in seconds; null: never delete it. */
  failureGraceSeconds: number | null
  /** Post: how long to wait for running Jobs to finish, in seconds; 0: don't wait. */
  waitForJobsSeconds: number
  /** Post: fail the step when a Job it waited for failed. */
  failOnJobFailure: boolean
  /** keep: a Job whose logs could not all be saved is kept and the step fails; delete: it is acted on anyway. */
  onLogFailure: OnLogFailure
  /** The most bytes saved of one container log (the API's limitBytes); a longer log is cut, and says so. */
  maxLogBytes: number
  /** How many Jobs are acted on at once (the work queue's concurrency). */
  concurrency: number
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

/** A retention: a duration, or `never` (null). */
function retention(read: ReadInput, name: string, fallback: string): number | null {
  const value = read(name).trim() || fallback
  if (value.toLowerCase() === 'never') return null
  const seconds = parseDuration(value)
  if (seconds === undefined) throw new SettingsError(`Invalid ${name} '${value}': expected never, or a duration like 90s, 15m, 1h30m, 7d, or seconds`)
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

/** Items of a comma- or newline-separated input. */
function list(value: string): string[] {
  return value
    .split(/[,\n]/)
    .map((item) => item.trim())
    .filter((item) => item !== '')
}

/** Parses and validates the inputs; throws SettingsError naming the first bad input. */
export function parseSettings(read: ReadInput, env: NodeJS.ProcessEnv = process.env): Settings {
  const phase = oneOf(read, INPUT.phase, PHASES, 'pre')
  const kubeconfigInput = optional(read, INPUT.kubeconfig)
  const namespaces = list(read(INPUT.namespace))
  for (const ns of namespaces) {
    if (!DNS_LABEL.test(ns)) throw new SettingsError(`Invalid ${INPUT.namespace} '${ns}': expected a namespace name (lowercase letters, digits and '-')`)
  }
  if (namespaces.length > 1 && phase !== 'sweep') {
    throw new SettingsError(`Invalid ${INPUT.namespace} '${namespaces.join(', ')}': the ${phase} phase works in one namespace; lists are for phase: sweep`)
  }
  const allNamespaces = bool(read, INPUT.allNamespaces, false)
  if (allNamespaces && phase !== 'sweep') throw new SettingsError(`Invalid ${INPUT.allNamespaces} 'true': only phase: sweep works across namespaces`)
  if (allNamespaces && namespaces.length > 0) throw new SettingsError(`Set either ${INPUT.namespace} or ${INPUT.allNamespaces}, not both`)

  const jobs = list(read(INPUT.jobs))
  for (const job of jobs) {
    if (!JOB_NAME.test(job) || job.length > 253)
      throw new SettingsError(`Invalid ${INPUT.jobs} entry '${job}': expected a Job name (lowercase letters, digits, '-' and '.')`)
  }
  const scope: Scope = {
    release: optional(read, INPUT.release),
    manifest: optional(read, INPUT.manifest),
    selector: optional(read, INPUT.selector),
    jobs: jobs.length > 0 ? jobs : undefined
  }
  if (!scope.release && !scope.manifest && !scope.selector && !scope.jobs) {
    throw new SettingsError(
      `No scope: set at least one of ${INPUT.release}, ${INPUT.manifest}, ${INPUT.selector} or ${INPUT.jobs}, so that only the Jobs you mean are touched`
    )
  }

  return {
    phase,
    kubeconfig: kubeconfigInput === undefined ? undefined : decodeKubeconfig(kubeconfigInput),
    context: optional(read, INPUT.context),
    namespace: namespaces[0],
    namespaces: namespaces.length > 0 ? namespaces : undefined,
    allNamespaces,
    scope,
    includeHooks: bool(read, INPUT.includeHooks, false),
    onRunning: oneOf(read, INPUT.onRunning, ON_RUNNING, 'wait'),
    waitTimeoutSeconds: duration(read, INPUT.waitTimeout, '10m'),
    harvestLogs: oneOf(read, INPUT.harvestLogs, HARVEST_LOGS, 'failed'),
    logsDir: optional(read, INPUT.logsDir) ?? join(env.RUNNER_TEMP || tmpdir(), 'job-sweeper', 'logs'),
    dryRun: bool(read, INPUT.dryRun, false),
    ttlSeconds: retention(read, INPUT.ttl, '1h'),
    failureGraceSeconds: retention(read, INPUT.failureGrace, '24h'),
    waitForJobsSeconds: duration(read, INPUT.waitForJobs, '0'),
    failOnJobFailure: bool(read, INPUT.failOnJobFailure, true),
    onLogFailure: 'keep',
    maxLogBytes: 10 * 1024 * 1024,
    concurrency: 8
  }
}
