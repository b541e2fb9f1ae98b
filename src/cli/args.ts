// The CLI's command line: `job-sweeper <pre|post|sweep> [--input value ...] [--json]`. Flags are
// the action's inputs, so the same settings parser validates both and gives the same messages.
// Two flags are the CLI's own: --json, and --kubeconfig-env, because a kubeconfig's content on
// the command line could be read by anyone on the machine (ps, /proc/<pid>/cmdline).
// The usage text words each flag shorter than action.yml, which declares the inputs; the docs test
// (test/unit/docs.test.ts) holds its flag names, defaults and choices to action.yml.
import { existsSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { isKubeconfigPath } from '../settings/kubeconfig-input.ts'
import { ACTION_ONLY, INPUT, PHASES, type Phase } from '../settings/settings.ts'

/** Inputs that are true/false: a bare `--dry-run` means `--dry-run=true`. */
export const BOOLEAN_INPUTS: string[] = [
  INPUT.dryRun,
  INPUT.includeHooks,
  INPUT.allNamespaces,
  INPUT.failOnJobFailure,
  INPUT.maskLogTails,
  INPUT.streamLogs,
  INPUT.recreateStatefulSets
]
/** Inputs the CLI does not take: the phase is the command, and the action's own (upload-logs: no workflow artifacts outside Actions). */
const NOT_FLAGS: string[] = [INPUT.phase, ...ACTION_ONLY]
/** The CLI's flag naming the environment variable that holds the kubeconfig's content. */
export const KUBECONFIG_ENV_FLAG = 'kubeconfig-env'

/** Bad usage: exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError'
}

export type Command = { kind: 'help'; phase?: Phase } | { kind: 'version' } | { kind: 'run'; phase: Phase; inputs: Record<string, string>; json: boolean }

/** The version --version prints: the bundle's, set at build time (scripts/bundle.mjs). */
export const VERSION = process.env.JOB_SWEEPER_VERSION ?? 'development'

/** kubectl's and helm's short flags: -n namespace, -l selector, -A all namespaces. */
const SHORT: Record<string, string> = { '-n': INPUT.namespace, '-l': INPUT.selector }

/**
 * The action's words for an input, as a CLI user typed it: `Invalid wait-timeout '…'` is
 * `Invalid --wait-timeout '…'`, and `phase: sweep` is the sweep command.
 */
export function inCliWords(message: string): string {
  const named = FLAGS.reduce((m, name) => m.replace(new RegExp(`(^|[ (])(Invalid|set|Set|with) ${name}\\b`, 'g'), `$1$2 --${name}`), message)
  return named.replace(/\bphase: (pre|post|sweep|preflight)\b/g, 'the $1 command')
}

const FLAGS = [...Object.values(INPUT).filter((name) => !NOT_FLAGS.includes(name)), KUBECONFIG_ENV_FLAG]

/** The kubeconfig input: a path as given, or the content of the variable --kubeconfig-env names. */
function kubeconfigInput(inputs: Record<string, string>, env: NodeJS.ProcessEnv): string | undefined {
  const { [INPUT.kubeconfig]: given, [KUBECONFIG_ENV_FLAG]: variable } = inputs
  delete inputs[KUBECONFIG_ENV_FLAG]
  if (given !== undefined && variable !== undefined)
    throw new UsageError(`Invalid --${KUBECONFIG_ENV_FLAG} '${variable}' with --${INPUT.kubeconfig}: expected one of them, not both`)
  if (variable !== undefined) {
    const content = env[variable]
    if (!content?.trim())
      throw new UsageError(
        `Invalid --${KUBECONFIG_ENV_FLAG} '${variable}': expected the name of an environment variable that holds a kubeconfig (YAML or base64); it is not set`
      )
    return content
  }
  if (given !== undefined && !isKubeconfigPath(given, existsSync))
    throw new UsageError(
      `Invalid --${INPUT.kubeconfig}: expected a file path (its content is not shown); a kubeconfig's content on the command line can be read by anyone on the machine, so put it in an environment variable and pass --${KUBECONFIG_ENV_FLAG} NAME`
    )
  return given
}

export function parseCommandLine(argv: string[], env: NodeJS.ProcessEnv = process.env): Command {
  const [first, ...rest] = argv
  if (first === undefined || first === '--help' || first === '-h' || first === 'help') return { kind: 'help' }
  if (first === '--version' || first === 'version') return { kind: 'version' }
  // Keywords are matched without regard to case, as the action's inputs are: PRE, True, Never.
  const phase = PHASES.find((p) => p === first.toLowerCase())
  if (phase === undefined) throw new UsageError(`Unknown command '${first}': expected one of ${[...PHASES, 'keeper'].join(', ')}`)
  // A bare boolean flag means true; `--flag false` and `--flag=false` also work.
  const args = rest.flatMap((arg, i) => {
    if (arg === '-A') return [`--${INPUT.allNamespaces}=true`]
    if (SHORT[arg] !== undefined) return [`--${SHORT[arg]}`]
    const short = /^(-[nl])=?(.+)$/.exec(arg)
    if (short && SHORT[short[1]] !== undefined) return [`--${SHORT[short[1]]}=${short[2]}`]
    const name = arg.startsWith('--') ? arg.slice(2) : ''
    if (BOOLEAN_INPUTS.includes(name) && !['true', 'false'].includes((rest[i + 1] ?? '').toLowerCase())) return [`--${name}=true`]
    return [arg]
  })
  let parsed
  try {
    parsed = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        ...Object.fromEntries(FLAGS.map((name) => [name, { type: 'string' as const, multiple: true as const }])),
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' }
      }
    })
  } catch (e) {
    throw new UsageError(inCliWords((e as Error).message.replace(/^TypeError \[\w+\]: /, '')))
  }
  const { json, help, ...values } = parsed.values as Record<string, string[] | boolean | undefined>
  if (help) return { kind: 'help', phase }
  const inputs: Record<string, string> = {}
  for (const [name, given] of Object.entries(values)) {
    if (!Array.isArray(given)) continue
    // The last of two would win silently; for sweep, several namespaces are one comma-separated list.
    if (given.length > 1) throw new UsageError(`Invalid --${name}: expected it once; it was given ${given.length} times`)
    inputs[name] = given[0]
  }
  const kubeconfig = kubeconfigInput(inputs, env)
  if (kubeconfig !== undefined) inputs[INPUT.kubeconfig] = kubeconfig
  return { kind: 'run', phase, json: json === true, inputs }
}

const COMMON = `Scope (at least one; a Job must match all given):
  --release NAME          Jobs Helm owns for this release
  --manifest FILE         Jobs named in rendered manifests (helm template, or helm upgrade --dry-run=server output)
  --chart CHART           instead of --manifest: render CHART for --release as the upgrade will
                          (helm upgrade --dry-run=server, with the helm on PATH)
  --helm-args 'ARGS'      with --chart: helm upgrade's arguments for the render (-f, --set, --version)
  -l, --selector SELECTOR label selector
  --jobs NAMES            Job names, comma separated

Cluster:
  --kubeconfig PATH       kubeconfig file, as kubectl takes it (default: KUBECONFIG, ~/.kube/config,
                          in a pod its service account)
  --kubeconfig-env NAME   or: the environment variable NAME holds the kubeconfig (YAML or base64);
                          never put its content on the command line, where ps shows it
  --context NAME          kubeconfig context
  -n, --namespace NAME    namespace (default: the context's, else default)
  --concurrency N         Jobs worked on at once, 1 to 64 (default 8)
  --keeper-namespace NS   where the keeper's Lease is: post, while it runs and keeps a Job,
                          adds its finalizer job-sweeper.io/logs too; pre and sweep, while
                          none runs, save a held Job's logs and let go of it (docs/keeper.md)
  --lease-name NAME       the Lease that keeps runs on the same scope apart, for a Role's
                          resourceNames; the same for every run on the scope (default: named
                          after the scope, job-sweeper-<release>-<hash>)

Output:
  --json                  print the result as JSON on standard output
  --dry-run               plan and report, change nothing
  --include-hooks         include Helm/Argo hook Jobs

Logs:
  --harvest-logs WHICH    failed (default), all or none
  --logs-dir DIR|URL      where logs go: DIR/<namespace>/<job>/<uid>/<pod>/<container>.log
                          and .../<uid>/job.json, or the same keys in s3://bucket/prefix
                          (AWS SDK credentials and region; endpoint: AWS_ENDPOINT_URL_S3)
  --s3-endpoint URL       an S3-compatible store's endpoint, for logs-dir s3://… (default:
                          AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL; none: AWS)
  --on-log-failure WHAT   keep (default: keep the Job, fail) or delete, when logs cannot be saved
  --max-log-bytes SIZE    most saved per container log (default 10Mi): 10Mi, 10MiB, 512Ki, bytes;
                          a longer log keeps its first quarter and last three quarters
  --mask-log-tails BOOL   hide the kubeconfig's secrets in the summary's log tails (default true)
  --stream-logs BOOL      print waited Jobs' logs as they are written (default true)`

const USAGE: Record<Phase | 'all', string> = {
  all: `Usage: job-sweeper <command> [flags]

Commands:
  pre     before helm upgrade: clear the Jobs that would make it fail (wait, save logs, delete)
  post    after the deployment: give the Jobs TTLs by outcome (ttl, failure-grace)
  sweep   delete finished Jobs whose retention expired, across namespaces
  preflight  will helm upgrade apply? dry-runs every object of --manifest against the cluster,
          changes nothing (exit 0: it would, once pre has cleared its Jobs; 1: it would fail)
  keeper  runs in the cluster: archives each finished Job's logs, holding it with a finalizer
          until then (docs/keeper.md)

Run 'job-sweeper <command> --help' for its flags; 'job-sweeper --version' for the version.
Exit codes: 0 done; 1 a Job failed (a migration failed or never started, a running Job blocked
pre; preflight: the upgrade would fail); 2 bad usage; 3 the cluster or job-sweeper errored
(unreachable, refused, a log not saved, cancelled): worth a retry.
Bad usage is found before the cluster is read.
Flags and keywords: --dry-run alone means true; true, false, never and choices ignore case.`,
  pre: `Usage: job-sweeper pre [flags]

Before helm upgrade: finds the prior Jobs that would conflict, waits for running ones (or fails,
or deletes, as set), saves their logs, deletes them safely and waits until they are gone.

${COMMON}

Running Jobs:
  --on-running WHAT       wait (default), delete or fail
  --wait-timeout DURATION how long to wait (default 10m, at most 24d): 90s, 15m, 1h30m, 7d or seconds
  --stuck-after DURATION  a Job whose pods never started a main container this long is stuck:
                          deleted without waiting (default 2m)

Preflight (with --manifest):
  --preflight WHAT        fail (default), warn or off: whether pre deletes nothing (fail) when the
                          upgrade would fail on an object that pre does not clear
  --recreate-statefulsets delete a StatefulSet whose change is immutable with propagationPolicy
                          Orphan (pods and PVCs stay) for the upgrade to recreate`,
  post: `Usage: job-sweeper post [flags]

After the deployment: annotates the Jobs with their policy and sets ttlSecondsAfterFinished by
outcome, so the cluster deletes them in time. Needs no saved state.

${COMMON}

Retention:
  --ttl DURATION          succeeded Jobs (default 1h), or never
  --failure-grace DURATION failed Jobs (default 24h), or never
  --wait-for-jobs DURATION wait for running Jobs, then set their exact TTL (default 0: no wait)
  --fail-on-job-failure BOOL exit 1 when a waited-for Job failed (default true)
  --stuck-after DURATION  a Job whose pods never started a main container this long is stuck:
                          no longer waited for, and an error (default 2m)
  --keep-last N           the N newest Jobs of each group get no TTL (default 0: off)
  --group-by LABEL        group Jobs no CronJob or Helm release groups by this label
  --wait-timeout DURATION how long to wait for another run on the same scope (default 10m)`,
  sweep: `Usage: job-sweeper sweep [flags]

Deletes the finished Jobs whose retention expired (their job-sweeper.io/ annotations, else
--ttl / --failure-grace); keeps the rest and says how long each has left.

${COMMON}
  -A, --all-namespaces    sweep every namespace (--namespace also takes a comma-separated list)

Retention:
  --ttl DURATION          succeeded Jobs without an annotation (default 1h), or never
  --failure-grace DURATION failed Jobs without an annotation (default 24h), or never
  --keep-last N           keep the N newest succeeded Jobs of each group whatever their ttl
                          (groups: owning CronJob, else Helm release + name without revision)
  --group-by LABEL        group Jobs no CronJob or Helm release groups by this label
  --wait-timeout DURATION how long deletions, and waiting for another run on the same scope, may
                          take (default 10m)`,
  preflight: `Usage: job-sweeper preflight --manifest FILE [flags]

Will helm upgrade apply? Reads the release as Helm does (a pending operation, the previous
revision's kinds), then checks every object of the rendered release (helm upgrade --install
--dry-run=server output, which is what the upgrade writes, or helm template's) against the live
cluster by a dry run of the write the upgrade will make: Helm 4's server-side apply (field manager
helm, no force) when the release was applied server-side, else a create or Helm 3's patch; an
object new to the release must be its own, and a hook an earlier run left is named. Changes nothing. Exit 0 when the upgrade would apply once pre
has cleared the Jobs it clears (listed as such), 1 when it would fail (failing objects first).

  --manifest FILE         the rendered release (required)
  --release NAME          the release, whose record says how Helm writes it (default: decided from
                          the objects' field managers)
  --kubeconfig PATH       kubeconfig file (default: KUBECONFIG, ~/.kube/config, in a pod its
                          service account); or --kubeconfig-env NAME
  --context NAME          kubeconfig context
  --namespace NAME        namespace of objects the manifest names none for (default: the context's)
  --concurrency N         objects checked at once, 1 to 64 (default 8)
  --recreate-statefulsets count StatefulSets pre would recreate (as pre --recreate-statefulsets) as cleared
  --logs-dir DIR          where the report file job-sweeper-preflight.json goes
  --json                  print every object's verdict as JSON on standard output`
}

export function usage(phase?: Phase): string {
  return `${USAGE[phase ?? 'all']}\n`
}
