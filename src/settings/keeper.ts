// `job-sweeper keeper`'s flags, parsed once into KeeperSettings. The keeper is a long-running mode
// of the CLI (a Deployment in the cluster), not a phase of the action: it has flags of its own.
import { existsSync, readFileSync } from 'node:fs'
import { parseDuration } from '../text/duration.ts'
import { SettingsError } from './inputs.ts'
import { readKubeconfigInput, type KubeconfigInput } from './kubeconfig-input.ts'
import { logsTargetOf, type LogsTarget } from './logs-dir.ts'
import { isDnsLabel } from './names.ts'
import { selectorProblem } from './selector.ts'
import { parseSize } from './size.ts'

/** The label post gives the Jobs it manages: the keeper's scope unless --selector says otherwise. */
export const KEEPER_DEFAULT_SELECTOR = 'job-sweeper.io/managed=true'

export interface KeeperSettings {
  /** The namespaces whose Jobs it keeps (one watch each); empty with allNamespaces. */
  namespaces: string[]
  /** `--all-namespaces`: one watch of the Jobs of every namespace (a ClusterRole's rights). */
  allNamespaces: boolean
  /** Which Jobs there: a label selector. */
  selector: string
  /** Where logs go: a directory, or a bucket. */
  logsTarget: LogsTarget
  /** How long after a held Job's deletion was asked the hold ends, archived or not. */
  holdDeadlineSeconds: number
  /** Most saved per container log (its head and tail past that). */
  maxLogBytes: number
  /** Jobs archived at once. */
  concurrency: number
  /** After SIGTERM, how long the archives in progress have to finish before the keeper releases its Lease and exits anyway. */
  shutdownGraceSeconds: number
  /** Where its Lease is (one leader at a time); undefined: its kubeconfig context's namespace, in a pod its own. */
  leaseNamespace?: string
  /** Where /healthz, /readyz and /metrics are served (port 0: any free port, printed). */
  listen: { host: string; port: number }
  /** The kubeconfig; undefined: KUBECONFIG, ~/.kube/config, or in a pod its ServiceAccount. */
  kubeconfig?: KubeconfigInput
  context?: string
  /** `--let-go`: run once, letting go of every Job still held (the keeper's removal), instead of keeping. */
  letGo: boolean
}

/** --shutdown-grace's default: the chart's terminationGracePeriodSeconds is this plus KEEPER_STOP_MARGIN_SECONDS. */
export const KEEPER_DEFAULT_SHUTDOWN_GRACE_SECONDS = 20

/**
 * After --shutdown-grace, the time left to release the Lease and close: the launcher ends the process
 * this long after the grace, and the pod's terminationGracePeriodSeconds must be longer (the chart's is
 * grace + 2 × margin), so that SIGKILL never comes first.
 */
export const KEEPER_STOP_MARGIN_SECONDS = 5

/** The flags as given (`--name value`), each at most once. */
export type KeeperFlags = Partial<Record<KeeperFlag, string>>
export const KEEPER_FLAGS = [
  'namespace',
  'selector',
  'logs-dir',
  's3-endpoint',
  'hold-deadline',
  'max-log-bytes',
  'concurrency',
  'shutdown-grace',
  'listen',
  'lease-namespace',
  'kubeconfig',
  'context'
] as const
export type KeeperFlag = (typeof KEEPER_FLAGS)[number]

const invalid = (flag: string, value: string, expected: string): SettingsError => new SettingsError(`Invalid --${flag} '${value}': expected ${expected}`)

export function parseKeeperSettings(
  flags: KeeperFlags & { 'let-go'?: boolean; 'all-namespaces'?: boolean },
  env: NodeJS.ProcessEnv = process.env
): KeeperSettings {
  const namespaces = (flags.namespace ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '')
  const allNamespaces = flags['all-namespaces'] === true
  if (allNamespaces && namespaces.length > 0)
    throw new SettingsError(`Invalid --all-namespaces with --namespace '${flags.namespace}': expected one of them, not both`)
  if (namespaces.length === 0 && !allNamespaces)
    throw new SettingsError('Missing --namespace: expected the namespaces whose Jobs the keeper keeps, comma separated (or --all-namespaces)')
  const bad = namespaces.find((n) => !isDnsLabel(n))
  if (bad !== undefined) throw invalid('namespace', flags.namespace ?? '', `namespace names, comma separated ('${bad}' is not one)`)

  const selector = flags.selector?.trim() || KEEPER_DEFAULT_SELECTOR
  const problem = selectorProblem(selector)
  if (problem) throw invalid('selector', selector, `a label selector (${problem})`)

  if (!flags['logs-dir']?.trim()) throw new SettingsError('Missing --logs-dir: expected a directory or s3://bucket/prefix to archive the logs in')
  const logsTarget = logsTargetOf(flags['logs-dir'], env, flags['s3-endpoint'])

  const holdText = flags['hold-deadline'] ?? '1h'
  const holdDeadlineSeconds = parseDuration(holdText)
  if (holdDeadlineSeconds === undefined || holdDeadlineSeconds < 1) throw invalid('hold-deadline', holdText, 'a duration like 90s, 15m, 1h30m, 7d, or seconds')

  const sizeText = flags['max-log-bytes'] ?? '10Mi'
  const maxLogBytes = parseSize(sizeText)
  if (maxLogBytes === undefined || maxLogBytes < 1024) throw invalid('max-log-bytes', sizeText, 'a size of at least 1Ki: 10Mi, 10MiB, 512Ki, bytes')

  const concurrencyText = flags.concurrency ?? '4'
  const concurrency = Number(concurrencyText)
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) throw invalid('concurrency', concurrencyText, 'a whole number from 1 to 64')

  const graceText = flags['shutdown-grace'] ?? `${KEEPER_DEFAULT_SHUTDOWN_GRACE_SECONDS}s`
  const shutdownGraceSeconds = parseDuration(graceText)
  if (shutdownGraceSeconds === undefined || shutdownGraceSeconds > 3600)
    throw invalid('shutdown-grace', graceText, 'a duration of at most 1h like 20s, 2m, or seconds (0: stop at once)')

  const listenText = flags.listen ?? '0.0.0.0:8080'
  const match = /^(.*):(\d{1,5})$/.exec(listenText)
  const port = Number(match?.[2])
  if (!match || port > 65535) throw invalid('listen', listenText, 'host:port, e.g. 0.0.0.0:8080 (port 0: any free port)')

  const leaseNamespace = flags['lease-namespace']?.trim() || undefined
  if (leaseNamespace !== undefined && !isDnsLabel(leaseNamespace)) throw invalid('lease-namespace', leaseNamespace, 'a namespace name')

  const kubeconfig = flags.kubeconfig?.trim()
  return {
    namespaces: [...new Set(namespaces)],
    allNamespaces,
    selector,
    logsTarget,
    holdDeadlineSeconds,
    maxLogBytes,
    concurrency,
    shutdownGraceSeconds,
    listen: { host: match[1] || '0.0.0.0', port },
    leaseNamespace,
    kubeconfig: kubeconfig ? readKubeconfigInput(kubeconfig, env, (p) => readFileSync(p, 'utf8'), existsSync) : undefined,
    context: flags.context?.trim() || undefined,
    letGo: flags['let-go'] === true
  }
}
