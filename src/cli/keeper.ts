// `job-sweeper keeper [flags]`: the long-running keeper (src/keeper.ts), a command of the CLI with
// flags of its own (it is not a phase of the action). Exit codes: 0 stopped (SIGTERM), 1 a watch
// could not go on, 2 bad usage.
import { parseArgs } from 'node:util'
import { parentPort } from 'node:worker_threads'
import { runCancellation } from '../cancel.ts'
import { apiErrorMessage } from '../kube/errors.ts'
import { runKeeper } from '../keeper.ts'
import { letGo } from '../let-go.ts'
import {
  KEEPER_DEFAULT_SELECTOR,
  KEEPER_DEFAULT_SHUTDOWN_GRACE_SECONDS,
  KEEPER_FLAGS,
  KEEPER_STOP_MARGIN_SECONDS,
  parseKeeperSettings,
  type KeeperFlags,
  type KeeperSettings
} from '../settings/keeper.ts'
import { SettingsError } from '../settings/inputs.ts'
import { redact, secretMasker } from '../text/secrets.ts'

export const KEEPER_USAGE = `Usage: job-sweeper keeper [flags]

Runs until stopped (SIGTERM): archives the logs of every Job of its scope as soon as it finishes,
and holds each with the finalizer job-sweeper.io/logs until then, so that nothing that deletes a
Job (its TTL, kubectl delete, helm uninstall, a namespace's deletion) takes its logs first. Once
archived, a Job is annotated job-sweeper.io/logs=<where> and released. docs/keeper.md.

Scope:
  --namespace NAMES       the namespaces, comma separated (one watch each)
  --all-namespaces        every namespace instead (one watch; a ClusterRole's rights)
  --selector SELECTOR     which Jobs there (default ${KEEPER_DEFAULT_SELECTOR}: those post manages)

Logs:
  --logs-dir DIR|URL      where logs go: DIR/<namespace>/<job>/<uid>/<pod>/<container>.log
                          and .../<uid>/job.json, or the same keys in s3://bucket/prefix
  --s3-endpoint URL       an S3-compatible store's endpoint (default: AWS_ENDPOINT_URL_S3, else
                          AWS_ENDPOINT_URL; none: AWS)
  --max-log-bytes SIZE    most saved per container log (default 10Mi)
  --hold-deadline DURATION  how long after a held Job's deletion was asked it is released even
                          if its logs could not be archived, with a Warning Event (default 1h)
  --concurrency N         Jobs archived at once, 1 to 64 (default 4)
  --shutdown-grace DURATION  after SIGTERM, how long the archives in progress have to finish
                          before it releases its Lease and exits 0 anyway (default ${KEEPER_DEFAULT_SHUTDOWN_GRACE_SECONDS}s; the
                          process ends ${KEEPER_STOP_MARGIN_SECONDS}s after it: give the pod a terminationGracePeriodSeconds
                          of at least this + ${2 * KEEPER_STOP_MARGIN_SECONDS}s)

Serving:
  --listen HOST:PORT      /healthz, /readyz (every namespace listed), /metrics (Prometheus)
                          (default 0.0.0.0:8080)

Removal:
  --let-go                run once instead: wait for the keeper to stop (its Lease gone or expired,
                          at most 90 s) and hold its Lease meanwhile (a keeper leading that keeps
                          none of --namespace is left its Lease), then let go of every Job held in
                          --namespace: archived once more if finished, released with a Warning
                          Event if not (the chart's hooks run it at helm uninstall, and at helm
                          upgrade for the namespaces the keeper no longer keeps)

Cluster:
  --lease-namespace NAME  where its Lease job-sweeper-keeper is (one leader at a time; default: its
                          kubeconfig context's namespace, in a pod its own)
  --kubeconfig PATH       kubeconfig file (default: KUBECONFIG, ~/.kube/config, in a pod its
                          service account)
  --context NAME          kubeconfig context

Exit codes: 0 stopped (--let-go: nothing left held), 1 a watch could not go on (forbidden, or the
cluster unreachable; --let-go: a keeper still runs, or a Job is still held), 2 bad usage.
`

const err = (text: string): boolean => process.stderr.write(redact(text))

export async function keeperMain(argv: string[]): Promise<number> {
  let settings: KeeperSettings
  try {
    const { values } = parseArgs({
      args: argv,
      options: {
        ...Object.fromEntries(KEEPER_FLAGS.map((f) => [f, { type: 'string' as const }])),
        'let-go': { type: 'boolean' as const },
        'all-namespaces': { type: 'boolean' as const },
        help: { type: 'boolean' as const }
      },
      strict: true,
      allowPositionals: false
    })
    if (values.help) {
      process.stdout.write(KEEPER_USAGE)
      return 0
    }
    settings = parseKeeperSettings(values as KeeperFlags & { 'let-go'?: boolean; 'all-namespaces'?: boolean })
  } catch (e) {
    const message = e instanceof SettingsError ? e.message : (e as Error).message
    process.stderr.write(`job-sweeper keeper: ${message}\nRun 'job-sweeper keeper --help' for usage.\n`)
    return 2
  }
  // The launcher's hard stop after SIGTERM waits for the archives in progress, not its usual 6 s.
  if (!settings.letGo) parentPort?.postMessage({ cancelDeadlineMs: (settings.shutdownGraceSeconds + KEEPER_STOP_MARGIN_SECONDS) * 1000 })
  try {
    if (settings.letGo) return await letGo(settings, { log: (line) => err(`${line}\n`), signal: runCancellation(), mask: (secret) => secretMasker.add(secret) })
    return await runKeeper(settings, {
      log: (line) => err(`${line}\n`),
      signal: runCancellation(),
      mask: (secret) => secretMasker.add(secret),
      serving: (address) => err(`keeper: serving on ${address}\n`)
    })
  } catch (e) {
    err(`job-sweeper keeper: ${apiErrorMessage(e)}\n`)
    return e instanceof SettingsError ? 2 : 1
  }
}
