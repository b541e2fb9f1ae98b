// `job-sweeper keeper --let-go`: the keeper's removal (the chart's post-delete hook, or by hand).
// Once no keeper runs (its Lease gone or expired: a keeper still running would hold the Jobs again),
// every Job of its namespaces still held with its finalizer is let go: one archived already is
// released; one finished or being deleted is archived once more first; a Job that could not be
// archived, or still runs, is released with a Warning Event LogsNotArchived saying so. Nothing is
// left held by a keeper that is gone, so nothing waits on one.
import { KubeJobsClient } from './kube/client.ts'
import { apiErrorMessage } from './kube/errors.ts'
import type { JobRecord } from './kube/job-record.ts'
import { loadKubeConfig } from './kube/kubeconfig.ts'
import { isExpired, KEEPER_LEASE, runIdentity } from './kube/lease.ts'
import { ClusterUnreachable } from './kube/retry.ts'
import { archiveJob, giveUp, setHold } from './execute/keep.ts'
import { isArchived, isHeld } from './plan/keeper.ts'
import { isFinished } from './plan/predicates.ts'
import type { KeeperSettings } from './settings/keeper.ts'
import { logsWhere } from './settings/logs-dir.ts'
import { openLogSink } from './store/open.ts'
import PQueue from 'p-queue'

/** How long it waits for a running keeper to stop: its Lease lasts 30 s after its last renewal. */
const KEEPER_STOP_WAIT_MS = 90_000
const POLL_MS = 2_000

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms)
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true })
  })

/** Lets go every Job the keeper holds in its namespaces; 0 when none is left held, 1 otherwise. */
export async function letGo(
  settings: KeeperSettings,
  options: { log: (line: string) => void; signal: AbortSignal; mask: (secret: string) => void }
): Promise<number> {
  const { log, signal } = options
  const client = new KubeJobsClient(loadKubeConfig(settings.kubeconfig, settings.context, options.mask))
  const sink = await openLogSink(settings.logsTarget)
  const where = logsWhere(settings.logsTarget)
  try {
    const leaseNamespace = settings.leaseNamespace ?? client.defaultNamespace
    for (const started = Date.now(); ;) {
      const lease = await client.getLease(leaseNamespace, KEEPER_LEASE)
      if (lease === undefined || !lease.spec?.holderIdentity || isExpired(lease, new Date())) break
      if (Date.now() - started > KEEPER_STOP_WAIT_MS || signal.aborted) {
        log(`keeper --let-go: a keeper still runs (${lease.spec.holderIdentity}, Lease ${leaseNamespace}/${KEEPER_LEASE}): stop it first; nothing was let go`)
        return 1
      }
      log(`keeper --let-go: waiting for the keeper ${lease.spec.holderIdentity} to stop (Lease ${leaseNamespace}/${KEEPER_LEASE})`)
      await sleep(POLL_MS, signal)
    }

    const held: JobRecord[] = []
    for (const namespace of settings.allNamespaces ? [undefined] : settings.namespaces) held.push(...(await client.listJobs(namespace)).jobs.filter(isHeld))
    const scope = settings.allNamespaces ? 'all namespaces' : settings.namespaces.join(', ')
    const counts = { archived: 0, released: 0, unarchived: 0, failed: 0 }
    const queue = new PQueue({ concurrency: settings.concurrency })
    const keep = { maxBytes: settings.maxLogBytes, lastLines: 0 }
    const work = held.map((job) => {
      const name = `${job.metadata?.namespace}/${job.metadata?.name}`
      return queue.add(async () => {
        try {
          if (isArchived(job)) {
            await setHold(client, job, false)
            counts.released++
            return
          }
          const finished = isFinished(job) || job.metadata?.deletionTimestamp !== undefined
          const archived = finished ? await archiveJob(client, sink, job, keep, () => new Date(), { keeper: runIdentity(process.env) }) : undefined
          if (archived?.done) {
            counts.archived++
            log(`archived ${name}: ${archived.bytes ?? 0} bytes of logs to ${where}, and released`)
            return
          }
          const reason = finished
            ? 'the keeper is being removed (--let-go), and its archive failed'
            : 'the keeper is being removed (--let-go) while it still runs'
          await giveUp(client, job, { action: 'give-up', reason }, where, archived?.failures ?? [])
          counts.unarchived++
          log(`released ${name} unarchived: ${reason}`)
        } catch (e) {
          if (e instanceof ClusterUnreachable) throw e
          counts.failed++
          log(`could not let go of ${name}: ${apiErrorMessage(e)}`)
        }
      })
    })
    await Promise.all(work)
    log(
      `keeper --let-go: ${held.length} held Job(s) in ${scope}: ${counts.archived} archived and released, ${counts.released} released (archived before), ${counts.unarchived} released unarchived (a Warning Event on each), ${counts.failed} still held`
    )
    return counts.failed > 0 ? 1 : 0
  } finally {
    await sink.close()
    await client.close()
  }
}
