// `job-sweeper keeper --let-go`: the keeper's removal (the chart's post-delete hook, its pre-upgrade
// hook when the keeper is turned off or keeps fewer namespaces, or by hand). Once no keeper runs (its
// Lease gone or expired), let-go takes the keeper's Lease itself for as long as it works, so that no
// standby keeper starts leading and holds again the Jobs let-go listed; the Lease it holds names no
// namespace and no selector, so post holds nothing for it either. Then every Job of the given
// namespaces still held with its finalizer is let go: one archived already is released; one
// finished or being deleted is archived once more first; a Job that could not be archived, or still
// runs, is released with a Warning Event LogsNotArchived saying so. Nothing is left held by a keeper
// that is gone, so nothing waits on one. The Lease is released at the end.
import { KubeJobsClient } from './kube/client.ts'
import { realClock, type Clock } from './kube/clock.ts'
import { apiErrorMessage } from './kube/errors.ts'
import type { JobRecord } from './kube/job-record.ts'
import type { JobsClient } from './kube/jobs-client.ts'
import { loadKubeConfig } from './kube/kubeconfig.ts'
import { ALL_NAMESPACES, KEEPER_LEASE, KEEPER_SCOPE_ANNOTATION, LeaseExpiry, runIdentity, takeLeases, type RunLeases } from './kube/lease.ts'
import { ClusterUnreachable } from './kube/retry.ts'
import { keeperLeaseOf } from './observe/keeper-lease.ts'
import { archiveJob, giveUp, setHold, ttlWords } from './execute/keep.ts'
import { isArchived, isHeld } from './plan/keeper.ts'
import { isFinished } from './plan/predicates.ts'
import type { KeeperSettings } from './settings/keeper.ts'
import { logsWhere } from './settings/logs-dir.ts'
import { openLogSink } from './store/open.ts'
import type { LogSink } from './store/sink.ts'
import PQueue from 'p-queue'

/** How long it waits for a running keeper to stop: its Lease lasts 30 s after its last renewal. */
const KEEPER_STOP_WAIT_MS = 90_000
const POLL_MS = 2_000

/** What let-go works through: the real client and store, or (tests) fakes and a fake clock. */
export interface LetGoOptions {
  log: (line: string) => void
  signal: AbortSignal
  mask: (secret: string) => void
  connect?: () => { client: JobsClient & { close(): Promise<void> }; sink: LogSink; clock?: Clock }
}

/**
 * The keeper's Lease, taken for let-go once no keeper leads (its Lease free or expired); or
 * 'elsewhere': a keeper leads that keeps none of let-go's namespaces (the chart's upgrade that
 * shrank `namespaces` while the keeper stays), whose Lease is left to it; or 'refused': a keeper
 * keeping some of them still leads after KEEPER_STOP_WAIT_MS (said in the log).
 */
async function takeOrPass(
  client: JobsClient,
  namespace: string,
  settings: KeeperSettings,
  options: { log: (line: string) => void; signal: AbortSignal; clock: Clock },
  scope: string
): Promise<RunLeases | 'elsewhere' | 'refused'> {
  const { log, signal, clock } = options
  const where = `Lease ${namespace}/${KEEPER_LEASE}`
  let waitingFor: string | undefined
  // Expired by this process's clock (no change of it seen for its duration), never by the keeper's renewTime.
  const expiry = new LeaseExpiry(clock)
  for (const started = clock.now(); ;) {
    const current = await client.getLease(namespace, KEEPER_LEASE)
    const holder = current?.spec?.holderIdentity || undefined
    const keeps = keeperLeaseOf(current)?.namespaces ?? []
    if (current !== undefined && holder !== undefined && !expiry.expired(current)) {
      // A Lease that names no namespace (another let-go's) keeps them all apart: it is waited for.
      const apart = !settings.allNamespaces && keeps.length > 0 && !keeps.includes(ALL_NAMESPACES) && !settings.namespaces.some((n) => keeps.includes(n))
      if (apart) {
        log(`keeper --let-go: the keeper leading (${holder}, ${where}) keeps ${keeps.join(', ')}, none of ${scope}: its Lease is left to it`)
        return 'elsewhere'
      }
    } else {
      try {
        return await takeLeases([namespace], {
          client,
          name: KEEPER_LEASE,
          holder: `${runIdentity(process.env)} (keeper --let-go)`,
          scope: 'keeper --let-go: letting go of the keeper’s holds',
          // Held by let-go, the Lease keeps nothing: post holds no Job for it.
          annotations: { [KEEPER_SCOPE_ANNOTATION.namespaces]: '', [KEEPER_SCOPE_ANNOTATION.selector]: '' },
          waitSeconds: 0, // taken by another meanwhile: read again
          expiry,
          info: () => undefined,
          signal,
          clock,
          onLost: (warning) => log(`keeper --let-go: ${warning}`)
        })
      } catch (e) {
        if (e instanceof ClusterUnreachable) throw e
      }
    }
    if (clock.now() - started >= KEEPER_STOP_WAIT_MS || signal.aborted) {
      const who = (await client.getLease(namespace, KEEPER_LEASE).catch(() => undefined))?.spec?.holderIdentity ?? holder
      log(`keeper --let-go: a keeper still runs (${who ?? 'unknown'}, ${where}): stop it first; nothing was let go`)
      return 'refused'
    }
    if (holder !== undefined && holder !== waitingFor) {
      log(`keeper --let-go: waiting for the keeper ${holder} to stop (${where})`)
      waitingFor = holder
    }
    await clock.sleep(POLL_MS, signal).catch(() => undefined)
  }
}

/** Lets go every Job the keeper holds in its namespaces; 0 when none is left held, 1 otherwise. */
export async function letGo(settings: KeeperSettings, options: LetGoOptions): Promise<number> {
  const { log, signal } = options
  const connected = options.connect?.()
  const client = connected?.client ?? new KubeJobsClient(loadKubeConfig(settings.kubeconfig, settings.context, options.mask))
  const sink = connected?.sink ?? (await openLogSink(settings.logsTarget))
  const where = logsWhere(settings.logsTarget)
  let leases: RunLeases | undefined
  try {
    const leaseNamespace = settings.leaseNamespace ?? client.defaultNamespace
    const scope = settings.allNamespaces ? 'all namespaces' : settings.namespaces.join(', ')
    const taken = await takeOrPass(client, leaseNamespace, settings, { log, signal, clock: connected?.clock ?? realClock }, scope)
    if (taken === 'refused') return 1
    leases = taken === 'elsewhere' ? undefined : taken
    for (const warning of leases?.warnings ?? []) log(`keeper --let-go: ${warning}`)

    const held: JobRecord[] = []
    for (const namespace of settings.allNamespaces ? [undefined] : settings.namespaces) held.push(...(await client.listJobs(namespace)).jobs.filter(isHeld))
    const counts = { archived: 0, released: 0, unarchived: 0, failed: 0 }
    const queue = new PQueue({ concurrency: settings.concurrency })
    const keep = { maxBytes: settings.maxLogBytes, lastLines: 0 }
    const work = held.map((job) => {
      const name = `${job.metadata?.namespace}/${job.metadata?.name}`
      return queue.add(async () => {
        try {
          if (isArchived(job)) {
            const released = await setHold(client, job, false)
            counts.released++
            if (released.ttl) log(`released ${name} (archived before)${ttlWords(released)}`)
            return
          }
          const finished = isFinished(job) || job.metadata?.deletionTimestamp !== undefined
          const archived = finished ? await archiveJob(client, sink, job, keep, () => new Date(), { keeper: runIdentity(process.env) }) : undefined
          if (archived?.done) {
            counts.archived++
            log(`archived ${name}: ${archived.bytes ?? 0} bytes of logs to ${where}, and released${ttlWords(archived)}`)
            return
          }
          const reason = finished
            ? 'the keeper is being removed (--let-go), and its archive failed'
            : 'the keeper is being removed (--let-go) while it still runs'
          const released = await giveUp(client, job, { action: 'give-up', reason }, where, archived?.failures ?? [])
          counts.unarchived++
          log(`released ${name} unarchived: ${reason}${ttlWords(released)}`)
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
    if (leases) {
      const before = leases.warnings.length
      await leases.release()
      for (const warning of leases.warnings.slice(before)) log(`keeper --let-go: ${warning}`)
    }
    await sink.close()
    await client.close()
  }
}
