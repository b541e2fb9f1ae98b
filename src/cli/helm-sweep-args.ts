// `helm sweep upgrade [--install] RELEASE CHART [helm upgrade flags] [--sweep-* flags]`: the
// plugin's command line split in two, without knowing helm's flags. Every argument that does not
// start with --sweep- is helm upgrade's and goes to helm as given; the few helm flags that tell
// job-sweeper where the release is (-n, --kube-context, --kubeconfig) are read, not removed.
// Helm 3 takes its global flags (-n, --kube-context, --kubeconfig, ...) out of a plugin's arguments
// and hands them over as HELM_NAMESPACE, HELM_KUBECONTEXT and KUBECONFIG instead: both are read.
import { INPUT } from '../settings/settings.ts'
import { BOOLEAN_INPUTS, UsageError } from './args.ts'

/** The prefix of job-sweeper's own flags on helm sweep's command line. */
export const SWEEP_PREFIX = '--sweep-'

/** job-sweeper flags helm sweep sets itself, from helm's flags and the render. */
const DERIVED: string[] = [INPUT.release, INPUT.manifest, INPUT.namespace, INPUT.context, INPUT.kubeconfig, 'kubeconfig-env', 'json', INPUT.allNamespaces]

/** job-sweeper flags only pre takes, and only post: each goes to its phase alone (the other would warn that it does nothing there). */
const PRE_ONLY: string[] = [INPUT.onRunning, INPUT.preflight, INPUT.recreateStatefulSets]
const POST_ONLY: string[] = [INPUT.ttl, INPUT.failureGrace, INPUT.waitForJobs, INPUT.failOnJobFailure, INPUT.keepLast, INPUT.groupBy]

/** helm upgrade's flags that roll a failed upgrade back (Helm 3: --atomic; Helm 4: --rollback-on-failure, --atomic kept as its alias). */
const ROLLBACK_FLAGS = ['--atomic', '--rollback-on-failure']

export interface HelmSweepCommand {
  /** helm upgrade's arguments (after `upgrade`), without the --sweep- flags: the real upgrade runs with exactly these. */
  helmArgs: string[]
  /** The same, for the render: without a --dry-run of the user's (the render sets its own). */
  renderArgs: string[]
  /** job-sweeper's flags for pre, the prefix taken off (`--sweep-wait-timeout 5m` is `--wait-timeout=5m`): all but post's own. */
  preArgs: string[]
  /** The same for post: all but pre's own. */
  postArgs: string[]
  /** --dry-run (helm's) or --sweep-dry-run: render and show pre's plan, change nothing. */
  dryRun: boolean
  /** The rollback flag given (--atomic, --rollback-on-failure), if any: it is warned about. */
  rollback?: string
  /** -n/--namespace as given to helm, if it was. */
  namespace?: string
  /** --kube-context as given to helm, if it was. */
  kubeContext?: string
  /** --kubeconfig as given to helm, if it was. */
  kubeconfig?: string
}

/** The value of a helm flag at `args[i]` (`--flag value`, `--flag=value`, `-nvalue`), and how many arguments it took. */
function flagValue(args: string[], i: number, long: string, short?: string): { value: string; taken: number } | undefined {
  const arg = args[i]
  if (arg === long || (short !== undefined && arg === short)) {
    if (args[i + 1] === undefined) throw new UsageError(`Invalid ${arg}: expected a value after it`)
    return { value: args[i + 1], taken: 2 }
  }
  if (arg.startsWith(`${long}=`)) return { value: arg.slice(long.length + 1), taken: 1 }
  if (short !== undefined && arg.startsWith(short) && arg.length > short.length) return { value: arg.slice(short.length).replace(/^=/, ''), taken: 1 }
  return undefined
}

/** The helm flags that say where the release is, read (and left in helm's arguments). */
const LOCATION_FLAGS: [key: 'namespace' | 'kubeContext' | 'kubeconfig', long: string, short?: string][] = [
  ['namespace', '--namespace', '-n'],
  ['kubeContext', '--kube-context'],
  ['kubeconfig', '--kubeconfig']
]

const isTrue = (value: string): boolean => !['false', '0'].includes(value.toLowerCase())

/** Splits helm sweep's arguments after `upgrade`; throws UsageError on a --sweep- flag it cannot take. */
export function parseHelmSweep(args: string[]): HelmSweepCommand {
  const command: HelmSweepCommand = { helmArgs: [], renderArgs: [], preArgs: [], postArgs: [], dryRun: false }
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]
    if (arg.startsWith(SWEEP_PREFIX)) {
      const [name, given] = arg.slice(SWEEP_PREFIX.length).split(/=(.*)/s, 2)
      if (DERIVED.includes(name))
        throw new UsageError(`Invalid ${SWEEP_PREFIX}${name}: helm sweep sets it from helm's own flags and the rendered release; expected none`)
      const takesValue = !BOOLEAN_INPUTS.includes(name)
      let value = given
      if (value === undefined && (takesValue || ['true', 'false'].includes((args[i + 1] ?? '').toLowerCase()))) {
        value = args[++i]
        if (value === undefined) throw new UsageError(`Invalid ${arg}: expected a value after it`)
      }
      if (name === INPUT.dryRun) command.dryRun = value === undefined || isTrue(value)
      else {
        const flag = value === undefined ? `--${name}` : `--${name}=${value}`
        if (!POST_ONLY.includes(name)) command.preArgs.push(flag)
        if (!PRE_ONLY.includes(name)) command.postArgs.push(flag)
      }
      continue
    }
    command.helmArgs.push(arg)
    if (arg === '--dry-run' || arg.startsWith('--dry-run=')) {
      // Helm 4's --dry-run=none is no dry run.
      const value = arg.slice('--dry-run='.length)
      command.dryRun ||= arg === '--dry-run' || !['none', 'false'].includes(value.toLowerCase())
      continue
    }
    command.renderArgs.push(arg)
    const rollback = ROLLBACK_FLAGS.find((f) => arg === f || arg.startsWith(`${f}=`))
    if (rollback !== undefined && (arg === rollback || isTrue(arg.slice(rollback.length + 1)))) command.rollback = rollback
    for (const [key, long, short] of LOCATION_FLAGS) {
      const found = flagValue(args, i, long, short)
      if (found === undefined) continue
      command[key] = found.value
      // The value that followed the flag is helm's too.
      if (found.taken === 2) {
        i++
        command.helmArgs.push(args[i])
        command.renderArgs.push(args[i])
      }
      break
    }
  }
  return command
}
