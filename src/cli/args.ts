// The CLI's command line: `job-sweeper <pre|post|sweep> [--input value ...] [--json]`. Flags are
// the action's inputs, so the same settings parser validates both and gives the same messages.
import { parseArgs } from 'node:util'
import { INPUT, PHASES, type Phase } from '../settings/settings.ts'

/** Inputs that are true/false: a bare `--dry-run` means `--dry-run=true`. */
const BOOLEAN_INPUTS: string[] = [INPUT.dryRun, INPUT.includeHooks, INPUT.allNamespaces, INPUT.failOnJobFailure]
/** Inputs the CLI does not take: the phase is the command. */
const NOT_FLAGS: string[] = [INPUT.phase]

/** Bad usage: exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError'
}

export type Command = { kind: 'help'; phase?: Phase } | { kind: 'run'; phase: Phase; inputs: Record<string, string>; json: boolean }

const FLAGS = Object.values(INPUT).filter((name) => !NOT_FLAGS.includes(name))

export function parseCommandLine(argv: string[]): Command {
  const [first, ...rest] = argv
  if (first === undefined || first === '--help' || first === '-h' || first === 'help') return { kind: 'help' }
  if (!(PHASES as readonly string[]).includes(first)) throw new UsageError(`Unknown command '${first}': expected one of ${PHASES.join(', ')}`)
  const phase = first as Phase
  // A bare boolean flag means true; `--flag false` and `--flag=false` also work.
  const args = rest.flatMap((arg, i) => {
    const name = arg.startsWith('--') ? arg.slice(2) : ''
    if (BOOLEAN_INPUTS.includes(name) && !['true', 'false'].includes(rest[i + 1] ?? '')) return [`--${name}=true`]
    return [arg]
  })
  let parsed
  try {
    parsed = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        ...Object.fromEntries(FLAGS.map((name) => [name, { type: 'string' as const }])),
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' }
      }
    })
  } catch (e) {
    throw new UsageError((e as Error).message.replace(/^TypeError \[\w+\]: /, ''))
  }
  const { json, help, ...inputs } = parsed.values as Record<string, string | boolean | undefined>
  if (help) return { kind: 'help', phase }
  return { kind: 'run', phase, json: json === true, inputs: Object.fromEntries(Object.entries(inputs).map(([k, v]) => [k, String(v)])) }
}

const COMMON = `Scope (at least one; a Job must match all given):
  --release NAME          Jobs Helm owns for this release
  --manifest FILE         Jobs named in rendered manifests (helm template output)
  --selector SELECTOR     label selector
  --jobs NAMES            Job names, comma separated

Cluster:
  --kubeconfig YAML       kubeconfig content or base64 (default: KUBECONFIG, ~/.kube/config,
                          in a pod its service account)
  --context NAME          kubeconfig context
  --namespace NAME        namespace (default: the context's, else default)

Output:
  --json                  print the result as JSON on standard output
  --dry-run               plan and report, change nothing
  --harvest-logs WHICH    failed (default), all or none
  --logs-dir DIR          where logs go: DIR/<namespace>/<job>/<pod>/<container>.log
  --include-hooks         include Helm/Argo hook Jobs`

const USAGE: Record<Phase | 'all', string> = {
  all: `Usage: job-sweeper <command> [flags]

Commands:
  pre     before helm upgrade: clear the Jobs that would make it fail (wait, save logs, delete)
  post    after the deployment: give the Jobs TTLs by outcome (ttl, failure-grace)
  sweep   delete finished Jobs whose retention expired, across namespaces

Run 'job-sweeper <command> --help' for its flags.
Exit codes: 0 done, 1 failed, 2 bad usage.`,
  pre: `Usage: job-sweeper pre [flags]

Before helm upgrade: finds the prior Jobs that would conflict, waits for running ones (or fails,
or deletes, as set), saves their logs, deletes them safely and waits until they are gone.

${COMMON}

Running Jobs:
  --on-running WHAT       wait (default), delete or fail
  --wait-timeout DURATION how long to wait (default 10m): 90s, 15m, 1h30m, 7d or seconds`,
  post: `Usage: job-sweeper post [flags]

After the deployment: annotates the Jobs with their policy and sets ttlSecondsAfterFinished by
outcome, so the cluster deletes them in time. Needs no saved state.

${COMMON}

Retention:
  --ttl DURATION          succeeded Jobs (default 1h), or never
  --failure-grace DURATION failed Jobs (default 24h), or never
  --wait-for-jobs DURATION wait for running Jobs, then set their exact TTL (default 0: no wait)
  --fail-on-job-failure BOOL exit 1 when a waited-for Job failed (default true)`,
  sweep: `Usage: job-sweeper sweep [flags]

Deletes the finished Jobs whose retention expired (their job-sweeper.io/ annotations, else
--ttl / --failure-grace); keeps the rest and says how long each has left.

${COMMON}
  --all-namespaces        sweep every namespace (--namespace also takes a comma-separated list)

Retention:
  --ttl DURATION          succeeded Jobs without an annotation (default 1h), or never
  --failure-grace DURATION failed Jobs without an annotation (default 24h), or never`
}

export function usage(phase?: Phase): string {
  return `${USAGE[phase ?? 'all']}\n`
}
