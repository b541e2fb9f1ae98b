// The action's inputs (or the CLI's flags), parsed once into one typed Settings object.
// Nothing else reads inputs: every other module takes Settings. Every bad input is refused here,
// before the cluster is read; files the inputs name (manifest, kubeconfig) are read here too.
import { existsSync, readFileSync } from 'node:fs'
import type { V1Job } from '@kubernetes/client-node'
import { formatDuration, parseDuration } from '../text/duration.ts'
import { renderedRelease, type RenderedRelease } from './rendered-release.ts'
import { INPUT, SettingsError } from './inputs.ts'
import { expandHome, readKubeconfigInput, type KubeconfigInput } from './kubeconfig-input.ts'
import { defaultLogsDir, logsTargetOf, type LogsTarget } from './logs-dir.ts'
import { renderedJobs } from './manifest.ts'
import { isDnsLabel, isDnsSubdomain, labelKeyProblem } from './names.ts'
import { selectorProblem } from './selector.ts'
import { parseSize } from './size.ts'

export { ACTION_ONLY, INPUT, SettingsError } from './inputs.ts'
export type { KubeconfigInput } from './kubeconfig-input.ts'
export { logsWhere, type LogsTarget } from './logs-dir.ts'

export const PHASES = ['pre', 'post', 'sweep', 'preflight'] as const
/** pre: before helm upgrade; post: after the deployment; sweep: scheduled garbage collection; preflight: will the upgrade apply (changes nothing). */
export type Phase = (typeof PHASES)[number]

export const ON_RUNNING = ['wait', 'delete', 'fail'] as const
/** What to do with a conflicting Job that is still running. */
export type OnRunning = (typeof ON_RUNNING)[number]

export const HARVEST_LOGS = ['failed', 'all', 'none'] as const
/** Whose pod logs are saved before a Job is deleted. */
export type HarvestLogs = (typeof HARVEST_LOGS)[number]

export const ON_LOG_FAILURE = ['keep', 'delete'] as const
/** What to do with a Job whose logs the policy asks for but could not be saved completely. */
export type OnLogFailure = (typeof ON_LOG_FAILURE)[number]

export const PREFLIGHT_GATES = ['fail', 'warn', 'off'] as const
/** Pre with a manifest: what a preflight that finds an object the upgrade cannot write does (docs/preflight.md). */
export type PreflightGate = (typeof PREFLIGHT_GATES)[number]

/** The longest wait: Node.js timers fire at once beyond 2^31-1 ms (24d20h31m), so 24d. */
export const MAX_WAIT_SECONDS = 24 * 86400
/**
 * How long a Job's pods may try before a Job that never started counts as stuck: a scale-up by a
 * cluster autoscaler and the pull of a large image commonly take a minute or two.
 */
export const DEFAULT_STUCK_AFTER = '2m'
/** The longest retention: ttlSecondsAfterFinished is a 32-bit integer. */
export const MAX_RETENTION_SECONDS = 2 ** 31 - 1
/** The most Jobs handled at once: more would only queue at the API server's rate limits. */
export const MAX_CONCURRENCY = 64

/** Which Jobs the action may touch. A Job must match every field that is set. */
export interface Scope {
  /** Helm release name: Jobs annotated meta.helm.sh/release-name (and release-namespace). */
  release?: string
  /** Path of rendered manifests (helm template or Helm's --dry-run output): the Jobs named there. */
  manifest?: string
  /** Label selector, checked with the API server's grammar, passed to it as is. */
  selector?: string
  /** Explicit Job names. */
  jobs?: string[]
}

/** Everything one run needs to know, parsed and validated. */
export interface Settings {
  /** Which phase runs (the post entry of a one-step setup runs `post` regardless). */
  phase: Phase
  /** The kubeconfig the input gave (a file's or its own content); undefined: the default loading rules. */
  kubeconfig?: KubeconfigInput
  /** Kubeconfig context to use; undefined: the current context. */
  context?: string
  /** Namespace to work in; undefined: the context's namespace, else `default`. */
  namespace?: string
  /** Sweep only: the namespaces to sweep (the namespace input as a list, each once); undefined: `namespace`. */
  namespaces?: string[]
  /** Sweep only: every namespace. */
  allNamespaces: boolean
  /** Which Jobs are in scope. At least one field is set. */
  scope: Scope
  /** With `scope.manifest`: the batch/v1 Jobs it renders, read and parsed with the settings. */
  manifestJobs?: V1Job[]
  /** Preflight, and pre unless preflightGate is off: every object of the manifest the upgrade writes (hooks apart), read and parsed with the settings. */
  manifestObjects?: RenderedRelease
  /** Whether Helm/Argo hook Jobs are in scope (their own delete policies manage them otherwise). */
  includeHooks: boolean
  /** What to do with a conflicting Job that is still running. */
  onRunning: OnRunning
  /** How long `on-running: wait` waits for running Jobs, and deletions may take, in seconds (1 to 24d). */
  waitTimeoutSeconds: number
  /**
   * Pre and post: a Job none of whose pods ever ran a main container is stuck (not running) once
   * it has tried this long, in seconds: pre deletes it without waiting, post's wait gives up on it.
   */
  stuckAfterSeconds: number
  /** Whose logs are saved before deletion. */
  harvestLogs: HarvestLogs
  /** A Job whose logs could not be saved completely: `keep` it (and fail the step), or `delete` it anyway. */
  onLogFailure: OnLogFailure
  /** Most bytes saved per container log (the API's limitBytes); a longer log is cut, and says so. */
  maxLogBytes: number
  /** Whether failed Jobs' log tails in the summary have the kubeconfig's secrets replaced by ***. */
  maskLogTails: boolean
  /** While pre or post waits on running Jobs, their containers' logs are printed into the run's log as they are written. */
  streamLogs: boolean
  /**
   * Where logs are saved (logs-dir): <dir>/<namespace>/<job>/<uid>/<pod>/<container>.log and
   * <namespace>/<job>/<uid>/job.json, or the same keys under s3://bucket/prefix.
   */
  logsTarget: LogsTarget
  /** The action: what the phase saved in logs-dir (a directory) and its report file are uploaded as a workflow artifact. */
  uploadLogs: boolean
  /** The directory of the report file: logs-dir's, or with a bucket the runner's ($RUNNER_TEMP/job-sweeper/logs). */
  logsDir: string
  /** Plan and report only; change nothing. */
  dryRun: boolean
  /** Retention of a succeeded Job after it finished, in seconds (an int32); null: never delete it. */
  ttlSeconds: number | null
  /** Retention of a failed Job after it finished, in seconds (an int32); null: never delete it. */
  failureGraceSeconds: number | null
  /** Post: how long to wait for running Jobs to finish, in seconds; 0: don't wait. */
  waitForJobsSeconds: number
  /** Post: fail the step when a Job it waited for failed. */
  failOnJobFailure: boolean
  /**
   * The namespace of a job-sweeper keeper's Lease. Post: while a keeper holds it and keeps a Job,
   * post adds the keeper's finalizer with the TTL, in the same patch. Pre and sweep: while none
   * runs, they save a held Job's logs themselves and let go of the hold.
   */
  keeperNamespace?: string
  /**
   * Pre, post and sweep: the name of the Lease that keeps runs on the same scope apart; undefined:
   * named after the scope (src/kube/lease.ts). A Role can name it in resourceNames.
   */
  leaseName?: string
  /** How many Jobs are worked on at once (1 to 64). */
  concurrency: number
  /** Sweep and post: the newest Jobs kept per group whatever their ttl (0: off); see src/plan/keep-last.ts. */
  keepLast: number
  /** With keepLast: the label whose value groups Jobs that no CronJob owns and no Helm release annotates. */
  groupBy?: string
  /**
   * Pre with a manifest: `fail` deletes nothing when the preflight finds an object the upgrade cannot
   * write that neither pre nor a chosen remedy clears; `warn` says so and goes on; `off` does not check.
   */
  preflightGate: PreflightGate
  /** Pre (and preflight): a release's StatefulSet whose spec change is immutable is deleted with propagationPolicy Orphan, for the upgrade to recreate. */
  recreateStatefulSets: boolean
}

/** How settings read the files that inputs name: a parameter, as the clock is to the planner. */
export interface SettingsFiles {
  readText(path: string): string
  exists(path: string): boolean
}

const DISK: SettingsFiles = { readText: (path) => readFileSync(path, 'utf8'), exists: (path) => existsSync(path) }

type ReadInput = (name: string) => string

/** A keyword input: like true/false and never, keywords are matched without regard to case. */
function oneOf<T extends string>(read: ReadInput, name: string, allowed: readonly T[], fallback: T): T {
  const value = read(name).trim()
  if (value === '') return fallback
  const found = allowed.find((a) => a === value.toLowerCase())
  if (found !== undefined) return found
  throw new SettingsError(`Invalid ${name} '${value}': expected one of ${allowed.join(', ')}`)
}

function bool(read: ReadInput, name: string, fallback: boolean): boolean {
  const value = read(name).trim()
  if (value === '') return fallback
  if (/^true$/i.test(value)) return true
  if (/^false$/i.test(value)) return false
  throw new SettingsError(`Invalid ${name} '${value}': expected true or false`)
}

const DURATION_EXAMPLES = 'like 90s, 15m, 1h30m, 7d, or seconds'

function duration(read: ReadInput, name: string, fallback: string, min: number, max: number, why: string): number {
  const value = read(name).trim() || fallback
  const seconds = parseDuration(value)
  if (seconds === undefined) throw new SettingsError(`Invalid ${name} '${value}': expected a duration ${DURATION_EXAMPLES}`)
  if (seconds < min || seconds > max)
    throw new SettingsError(`Invalid ${name} '${value}': expected a duration from ${formatDuration(min)} to ${formatDuration(max)} (${why})`)
  return seconds
}

/** A retention: a duration that fits ttlSecondsAfterFinished (an int32), or `never` (null). */
function retention(read: ReadInput, name: string, fallback: string): number | null {
  const value = read(name).trim() || fallback
  if (value.toLowerCase() === 'never') return null
  const seconds = parseDuration(value)
  if (seconds === undefined) throw new SettingsError(`Invalid ${name} '${value}': expected never, or a duration ${DURATION_EXAMPLES}`)
  if (seconds > MAX_RETENTION_SECONDS)
    throw new SettingsError(
      `Invalid ${name} '${value}': expected never, or a duration of at most ${MAX_RETENTION_SECONDS} seconds (about 68 years: ttlSecondsAfterFinished is a 32-bit integer)`
    )
  return seconds
}

function count(read: ReadInput, name: string, fallback: number, max: number): number {
  const value = read(name).trim()
  if (value === '') return fallback
  if (/^\d+$/.test(value) && Number(value) >= 1 && Number(value) <= max) return Number(value)
  throw new SettingsError(`Invalid ${name} '${value}': expected a whole number from 1 to ${max}`)
}

function size(read: ReadInput, name: string, fallback: number): number {
  const value = read(name).trim()
  if (value === '') return fallback
  const bytes = parseSize(value)
  if (bytes === undefined || bytes === 0) throw new SettingsError(`Invalid ${name} '${value}': expected a size above 0 like 10Mi, 10MiB, 512Ki, or bytes`)
  return bytes
}

function optional(read: ReadInput, name: string): string | undefined {
  const value = read(name).trim()
  return value === '' ? undefined : value
}

/** Items of a comma- or newline-separated input; a value with no item at all (`,`) is refused. */
function list(read: ReadInput, name: string, what: string): string[] {
  const value = read(name).trim()
  const items = value
    .split(/[,\n]/)
    .map((item) => item.trim())
    .filter((item) => item !== '')
  if (value !== '' && items.length === 0) throw new SettingsError(`Invalid ${name} '${value}': expected ${what}, separated by commas or newlines`)
  return items
}

function namespaceList(read: ReadInput, phase: Phase): string[] {
  const namespaces = list(read, INPUT.namespace, 'namespace names')
  for (const ns of namespaces) {
    if (!isDnsLabel(ns))
      throw new SettingsError(
        `Invalid ${INPUT.namespace} '${ns}': expected a namespace name (at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit)`
      )
  }
  const twice = namespaces.find((ns, i) => namespaces.indexOf(ns) !== i)
  if (twice !== undefined)
    throw new SettingsError(`Invalid ${INPUT.namespace} '${namespaces.join(', ')}': expected each namespace once; ${twice} is listed twice`)
  if (namespaces.length > 1 && phase !== 'sweep')
    throw new SettingsError(`Invalid ${INPUT.namespace} '${namespaces.join(', ')}': the ${phase} phase works in one namespace; lists are for phase: sweep`)
  return namespaces
}

/** The rendered Jobs of the manifest input, read now so that a bad file is refused before the cluster is read. */
function manifestJobs(path: string, env: NodeJS.ProcessEnv, files: SettingsFiles): V1Job[] {
  return parseManifest(path, env, files, renderedJobs)
}

function parseManifest<T>(path: string, env: NodeJS.ProcessEnv, files: SettingsFiles, parse: (text: string) => T): T {
  let text: string
  try {
    text = files.readText(expandHome(path, env))
  } catch (e) {
    throw new SettingsError(
      `Invalid ${INPUT.manifest} '${path}': expected a readable file of rendered manifests; cannot read it (${(e as NodeJS.ErrnoException).code ?? e})`
    )
  }
  try {
    return parse(text)
  } catch (e) {
    throw new SettingsError(
      `Invalid ${INPUT.manifest} '${path}': expected YAML (helm template, or helm upgrade --dry-run=server output); ${(e as Error).message.split('\n')[0]}`
    )
  }
}

function scopeOf(read: ReadInput): Scope {
  const jobs = list(read, INPUT.jobs, 'Job names')
  for (const job of jobs) {
    if (!isDnsSubdomain(job)) throw new SettingsError(`Invalid ${INPUT.jobs} '${job}': expected a Job name (lowercase letters, digits, '-' and '.')`)
  }
  const release = optional(read, INPUT.release)
  if (release !== undefined && !isDnsSubdomain(release, 53))
    throw new SettingsError(`Invalid ${INPUT.release} '${release}': expected a Helm release name (at most 53 lowercase letters, digits, '-' and '.')`)
  const selector = optional(read, INPUT.selector)
  const problem = selector === undefined ? undefined : selectorProblem(selector)
  if (problem !== undefined)
    throw new SettingsError(`Invalid ${INPUT.selector} '${selector}': expected a label selector like app=web,tier in (a,b),!canary; ${problem}`)
  const scope: Scope = { release, manifest: optional(read, INPUT.manifest), selector, jobs: jobs.length > 0 ? jobs : undefined }
  if (!scope.release && !scope.manifest && !scope.selector && !scope.jobs) {
    throw new SettingsError(
      `No scope: set at least one of ${INPUT.release}, ${INPUT.manifest}, ${INPUT.selector} or ${INPUT.jobs}, so that only the Jobs you mean are touched`
    )
  }
  return scope
}

/** The most Jobs keep-last keeps per group. */
export const MAX_KEEP_LAST = 1000

/** keep-last and group-by: a count (0: off), and a label key that only means something with it. */
function keepLastOf(read: ReadInput): Pick<Settings, 'keepLast' | 'groupBy'> {
  const value = read(INPUT.keepLast).trim()
  if (value !== '' && !(/^\d+$/.test(value) && Number(value) <= MAX_KEEP_LAST))
    throw new SettingsError(`Invalid ${INPUT.keepLast} '${value}': expected a whole number from 0 (off) to ${MAX_KEEP_LAST}, the newest Jobs kept per group`)
  const keepLast = value === '' ? 0 : Number(value)
  const groupBy = optional(read, INPUT.groupBy)
  if (groupBy === undefined) return { keepLast }
  if (labelKeyProblem(groupBy) !== undefined)
    throw new SettingsError(`Invalid ${INPUT.groupBy} '${groupBy}': expected a label key like app.kubernetes.io/name or team`)
  if (keepLast === 0)
    throw new SettingsError(`Invalid ${INPUT.groupBy} '${groupBy}' without ${INPUT.keepLast}: expected ${INPUT.keepLast} too, whose groups it chooses`)
  return { keepLast, groupBy }
}

/** preflight and recreate-statefulsets: the remedy needs the verdicts, so a manifest and a check. */
function preflightOf(read: ReadInput, phase: Phase, scope: Scope): Pick<Settings, 'preflightGate' | 'recreateStatefulSets'> {
  const preflightGate = oneOf(read, INPUT.preflight, PREFLIGHT_GATES, 'fail')
  const recreateStatefulSets = bool(read, INPUT.recreateStatefulSets, false)
  if (!recreateStatefulSets) return { preflightGate, recreateStatefulSets }
  const why = 'the preflight verdicts choose which StatefulSets to recreate'
  if (phase !== 'pre' && phase !== 'preflight')
    throw new SettingsError(
      `Invalid ${INPUT.recreateStatefulSets} 'true' with ${INPUT.phase} '${phase}': expected phase pre (or preflight, which only reports it)`
    )
  if (scope.manifest === undefined)
    throw new SettingsError(`Invalid ${INPUT.recreateStatefulSets} 'true' without ${INPUT.manifest}: expected ${INPUT.manifest}, since ${why}`)
  if (preflightGate === 'off' && phase === 'pre')
    throw new SettingsError(
      `Invalid ${INPUT.recreateStatefulSets} 'true' with ${INPUT.preflight} 'off': expected ${INPUT.preflight} fail or warn, since ${why}`
    )
  return { preflightGate, recreateStatefulSets }
}

/** Whether the phase checks every object of the manifest: preflight always, pre unless the gate is off. */
const checksRelease = (phase: Phase, gate: PreflightGate): boolean => phase === 'preflight' || (phase === 'pre' && gate !== 'off')

/** logs-dir: where logs go, and the directory of the report file; upload-logs, which needs a directory. */
function keeperNamespaceOf(read: ReadInput): string | undefined {
  const namespace = optional(read, INPUT.keeperNamespace)
  if (namespace !== undefined && !isDnsLabel(namespace))
    throw new SettingsError(
      `Invalid ${INPUT.keeperNamespace} '${namespace}': expected the namespace of the keeper's Lease (a namespace name, like job-sweeper)`
    )
  return namespace
}

/** lease-name: an object name, as the API server takes a Lease's (a DNS-1123 subdomain). */
function leaseNameOf(read: ReadInput): string | undefined {
  const name = optional(read, INPUT.leaseName)
  if (name !== undefined && !isDnsSubdomain(name))
    throw new SettingsError(
      `Invalid ${INPUT.leaseName} '${name}': expected a Lease name (at most 253 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit), like my-app-job-sweeper`
    )
  return name
}

function logsOf(read: ReadInput, env: NodeJS.ProcessEnv): Pick<Settings, 'logsTarget' | 'logsDir' | 'uploadLogs'> {
  const logsTarget = logsTargetOf(optional(read, INPUT.logsDir), env, optional(read, INPUT.s3Endpoint))
  const uploadLogs = bool(read, INPUT.uploadLogs, false)
  if (uploadLogs && logsTarget.kind === 's3')
    throw new SettingsError(
      `Invalid ${INPUT.uploadLogs} 'true' with ${INPUT.logsDir} '${logsTarget.url}': expected a directory as ${INPUT.logsDir}, whose files are uploaded; logs saved to a bucket are kept there`
    )
  return { logsTarget, logsDir: logsTarget.kind === 'dir' ? logsTarget.dir : defaultLogsDir(env), uploadLogs }
}

/**
 * Every bad input, not only the first: each check runs, a bad value standing in for its default
 * meanwhile, so that one run of the step names all there is to fix.
 */
class Problems {
  readonly messages: string[] = []
  /** What `parse` returns, or `fallback` (the problem noted) when it refuses the input. */
  take<T>(parse: () => T, fallback: T): T {
    try {
      return parse()
    } catch (e) {
      if (!(e instanceof SettingsError)) throw e
      this.messages.push(e.message)
      return fallback
    }
  }
  /** Throws one SettingsError naming them all (one a line), if there are any. */
  throwAny(): void {
    if (this.messages.length === 1) throw new SettingsError(this.messages[0])
    if (this.messages.length > 1) throw new SettingsError(`${this.messages.length} invalid inputs:\n${this.messages.map((m) => `- ${m}`).join('\n')}`)
  }
}

/** Parses and validates the inputs; throws one SettingsError naming every bad input (nothing has been read from the cluster). */
export function parseSettings(read: ReadInput, env: NodeJS.ProcessEnv = process.env, files: SettingsFiles = DISK): Settings {
  const problems = new Problems()
  const take = <T>(parse: () => T, fallback: T): T => problems.take(parse, fallback)
  const phase = take(() => oneOf(read, INPUT.phase, PHASES, 'pre'), 'pre')
  const kubeconfig = optional(read, INPUT.kubeconfig)
  const namespaces = take(() => namespaceList(read, phase), [])
  const allNamespaces = take(() => bool(read, INPUT.allNamespaces, false), false)
  take(() => {
    if (allNamespaces && phase !== 'sweep') throw new SettingsError(`Invalid ${INPUT.allNamespaces} 'true': only phase: sweep works across namespaces`)
    if (allNamespaces && namespaces.length > 0)
      throw new SettingsError(`Invalid ${INPUT.allNamespaces} 'true' with ${INPUT.namespace} '${namespaces.join(', ')}': expected one of them, not both`)
    if (phase === 'preflight' && optional(read, INPUT.manifest) === undefined)
      throw new SettingsError(`Invalid ${INPUT.phase} 'preflight' without ${INPUT.manifest}: expected ${INPUT.manifest}, the rendered release to check`)
  }, undefined)
  const scope = take(() => scopeOf(read), {})
  take(() => {
    if (allNamespaces && scope.manifest !== undefined)
      throw new SettingsError(
        `Invalid ${INPUT.allNamespaces} 'true' with ${INPUT.manifest}: expected the namespaces to sweep, since the rendered Jobs' names would match Jobs of the same name in every namespace`
      )
  }, undefined)
  const preflight = take<Pick<Settings, 'preflightGate' | 'recreateStatefulSets'>>(() => preflightOf(read, phase, scope), {
    preflightGate: 'fail',
    recreateStatefulSets: false
  })
  const manifestJobsRead = scope.manifest === undefined ? undefined : take(() => manifestJobs(scope.manifest as string, env, files), undefined)
  const settings: Settings = {
    phase,
    kubeconfig: kubeconfig === undefined ? undefined : take(() => readKubeconfigInput(kubeconfig, env, files.readText, files.exists), undefined),
    context: optional(read, INPUT.context),
    namespace: namespaces[0],
    namespaces: namespaces.length > 0 ? namespaces : undefined,
    allNamespaces,
    scope,
    manifestJobs: manifestJobsRead,
    manifestObjects:
      scope.manifest === undefined || manifestJobsRead === undefined || !checksRelease(phase, preflight.preflightGate)
        ? undefined
        : take(() => parseManifest(scope.manifest as string, env, files, renderedRelease), undefined),
    includeHooks: take(() => bool(read, INPUT.includeHooks, false), false),
    onRunning: take(() => oneOf(read, INPUT.onRunning, ON_RUNNING, 'wait'), 'wait'),
    waitTimeoutSeconds: take(
      () => duration(read, INPUT.waitTimeout, '10m', 1, MAX_WAIT_SECONDS, 'waiting for running Jobs and for deletions needs time, and no timer waits longer'),
      600
    ),
    stuckAfterSeconds: take(
      () =>
        duration(
          read,
          INPUT.stuckAfter,
          DEFAULT_STUCK_AFTER,
          1,
          MAX_WAIT_SECONDS,
          'a pod needs some time to be scheduled and to pull its image, and no timer waits longer'
        ),
      120
    ),
    harvestLogs: take(() => oneOf(read, INPUT.harvestLogs, HARVEST_LOGS, 'failed'), 'failed'),
    onLogFailure: take(() => oneOf(read, INPUT.onLogFailure, ON_LOG_FAILURE, 'keep'), 'keep'),
    maxLogBytes: take(() => size(read, INPUT.maxLogBytes, 10 * 1024 ** 2), 10 * 1024 ** 2),
    maskLogTails: take(() => bool(read, INPUT.maskLogTails, true), true),
    streamLogs: take(() => bool(read, INPUT.streamLogs, true), true),
    ...take(() => logsOf(read, env), { logsTarget: { kind: 'dir', dir: defaultLogsDir(env) }, logsDir: defaultLogsDir(env), uploadLogs: false }),
    dryRun: take(() => bool(read, INPUT.dryRun, false), false),
    ttlSeconds: take(() => retention(read, INPUT.ttl, '1h'), 3600),
    failureGraceSeconds: take(() => retention(read, INPUT.failureGrace, '24h'), 86400),
    waitForJobsSeconds: take(() => duration(read, INPUT.waitForJobs, '0', 0, MAX_WAIT_SECONDS, '0 does not wait, and no timer waits longer'), 0),
    failOnJobFailure: take(() => bool(read, INPUT.failOnJobFailure, true), true),
    keeperNamespace: take(() => keeperNamespaceOf(read), undefined),
    leaseName: take(() => leaseNameOf(read), undefined),
    concurrency: take(() => count(read, INPUT.concurrency, 8, MAX_CONCURRENCY), 8),
    ...take(() => keepLastOf(read), { keepLast: 0 }),
    ...preflight
  }
  problems.throwAny()
  return settings
}
