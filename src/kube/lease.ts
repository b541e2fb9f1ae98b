// Keeping concurrent runs apart: while a run works on a namespace it holds a coordination.k8s.io/v1
// Lease there, named after its scope, as client-go's leader election holds one. A second run on
// the same scope (a re-run, two deploys racing, a post step and the next pre phase) waits until the
// first releases it, or until it expires when its holder died, and only then observes and plans.
//
// The protocol: create the Lease, or take it over with an update that carries the resourceVersion
// read (a 409 means another run won, so read again); renew it 10 s after the previous renewal
// settled (never two at once: a release must carry the resourceVersion of the last one); delete it
// at the end with a resourceVersion precondition, so a Lease someone else took over is never deleted.
import { createHash } from 'node:crypto'
import { hostname } from 'node:os'
import type { V1Lease, V1MicroTime } from '@kubernetes/client-node'
import { formatDuration } from '../text/duration.ts'
import type { Scope, Settings } from '../settings/settings.ts'
import { realClock, type Clock } from './clock.ts'
import type { ClusterObjects } from './objects.ts'
import { apiErrorMessage, statusCode } from './errors.ts'
import { cancelledBy, RunCancelled } from './retry.ts'

/** How long a Lease stays valid after its last renewal: a dead run blocks others this long at most. */
export const LEASE_DURATION_SECONDS = 30
/** How long after the previous renewal settled a held Lease is renewed: three fit in one duration, as in client-go. */
export const RENEW_EVERY_MS = 10_000
/** A leader's renew deadline (the keeper's): two renewals' worth, and 10 s before its Lease can expire. */
export const RENEW_DEADLINE_MS = 20_000
// A waiting run reads the Lease this often (client-go's leader election polls too: RetryPeriod).
const POLL_MS = 1_000
const PROGRESS_MS = 15_000
/** The annotation that says, on the Lease, which scope it keeps apart. */
export const SCOPE_ANNOTATION = 'job-sweeper.io/scope'

/** The keeper's Lease, in its own namespace (`--lease-namespace`): one leader at a time. */
export const KEEPER_LEASE = 'job-sweeper-keeper'

/** The keeper's namespaces on its Lease when it keeps every namespace. */
export const ALL_NAMESPACES = '*'

/** What the leading keeper writes on its Lease, so that `post` knows which Jobs it keeps. */
export const KEEPER_SCOPE_ANNOTATION = {
  /** Its `--namespace` list, comma separated; with `--all-namespaces`, ALL_NAMESPACES. */
  namespaces: 'job-sweeper.io/keeper-namespaces',
  /** Its `--selector`. */
  selector: 'job-sweeper.io/keeper-selector'
} as const

/** The scope in words, the same for every phase: what the Lease is named after. */
export function scopeKey(scope: Scope, manifestJobNames?: string[]): string {
  const parts: string[] = []
  if (scope.release !== undefined) parts.push(`release=${scope.release}`)
  if (scope.selector !== undefined) parts.push(`selector=${scope.selector}`)
  if (scope.jobs !== undefined) parts.push(`jobs=${[...scope.jobs].sort().join(',')}`)
  // The rendered Jobs' names, not the manifest's path: each run renders to a file of its own.
  if (manifestJobNames !== undefined) parts.push(`manifest=${[...manifestJobNames].sort().join(',')}`)
  return parts.join('; ')
}

/** The Lease's name: `job-sweeper-[<release>-]<hash of the scope>`, at most 63 characters. */
export function leaseName(scope: Scope, manifestJobNames?: string[]): string {
  const hash = createHash('sha256').update(scopeKey(scope, manifestJobNames)).digest('hex').slice(0, 16)
  const release = scope.release?.slice(0, 30).replace(/[-.]+$/, '')
  return `job-sweeper-${release ? `${release}-` : ''}${hash}`
}

/** The Lease a run of pre, post or sweep takes: lease-name when given (a name a Role can grant), else the scope's. */
export function runLeaseName(settings: Pick<Settings, 'scope' | 'leaseName'>, manifestJobNames?: string[]): string {
  return settings.leaseName ?? leaseName(settings.scope, manifestJobNames)
}

/** Who holds a Lease: the workflow run's URL when known (a link to it), and this process. */
export function runIdentity(env: NodeJS.ProcessEnv, runUrl?: string): string {
  const { GITHUB_SERVER_URL: server, GITHUB_REPOSITORY: repo, GITHUB_RUN_ID: id } = env
  const url = runUrl ?? (server && repo && id ? `${server}/${repo}/actions/runs/${id}` : undefined)
  // The process too: two jobs of one workflow run (a matrix) share its URL but not their runner.
  const self = `${hostname()}-${process.pid}`
  return url ? `${url}#${self}` : self
}

/** The clock's now as a MicroTime: RFC 3339 with six fractional digits, as the API server writes one. */
const microTime = (clock: Clock): V1MicroTime => new Date(clock.now()).toISOString().replace(/Z$/, '000Z') as unknown as V1MicroTime

/** One read of a Lease, timed on this process's clock: what tells a renewal (client-go's observedRecord) and when it was read (its observedTime). */
export interface LeaseObservation {
  /** When it was read: ms on this process's clock, never the holder's. */
  at: number
  /** Its holder; undefined when nobody holds it (released) or it is gone. */
  holder?: string
  /** As its holder wrote it, on the holder's clock: compared between reads, never measured against ours. */
  renewTime?: string
  resourceVersion?: string
}

/** `lease` as read at `at` (this process's clock); undefined: it is gone. */
export function observationOf(lease: V1Lease | undefined, at: number): LeaseObservation {
  const renewed = lease?.spec?.renewTime ?? lease?.spec?.acquireTime
  return {
    at,
    holder: lease?.spec?.holderIdentity || undefined,
    renewTime: renewed === undefined ? undefined : new Date(renewed as unknown as string).toISOString(),
    resourceVersion: lease?.metadata?.resourceVersion
  }
}

/** The Lease changed between two reads: renewed, taken by another holder, released, or rewritten. */
export const changedBetween = (a: LeaseObservation, b: LeaseObservation): boolean =>
  a.holder !== b.holder || a.renewTime !== b.renewTime || a.resourceVersion !== b.resourceVersion

/**
 * Whether a held Lease expired, as a candidate waiting for it judges by its own clock only, as
 * client-go's leader election does: when its record (holder, renewTime, resourceVersion) has not
 * changed for its leaseDurationSeconds since this process first read it so. Its renewTime is written
 * on the holder's clock, which may be off from ours by more than the Lease lasts: a runner 30 s
 * behind would take a live holder's Lease, one 30 s ahead would wait on a dead one.
 */
export class LeaseExpiry {
  /** The first read of the record last seen. */
  private since?: LeaseObservation
  /** A change was seen since the first read: its holder renews it (or another took it). */
  renewalSeen = false
  private readonly clock: Clock

  constructor(clock: Clock = realClock) {
    this.clock = clock
  }

  /** Notes a read of `lease` made now; true when it has not changed for its duration by this clock. */
  expired(lease: V1Lease): boolean {
    const seen = observationOf(lease, this.clock.now())
    if (this.since === undefined || changedBetween(this.since, seen)) {
      this.renewalSeen ||= this.since !== undefined
      this.since = seen
      return false
    }
    return seen.at - this.since.at > (lease.spec?.leaseDurationSeconds ?? LEASE_DURATION_SECONDS) * 1000
  }
}

/** The credentials may not use Leases (403): the run goes on without the lock, with a warning. */
class LeaseForbidden extends Error {
  override name = 'LeaseForbidden'
}

/** What taking a Lease needs: where, who, for how long, and where progress goes. */
export interface LeaseRequest {
  client: ClusterObjects
  namespace: string
  name: string
  /** This run's identity (runIdentity). */
  holder: string
  /** The scope in words, recorded on the Lease for `kubectl get lease -o yaml`. */
  scope: string
  /** More annotations to write on it (the keeper's scope, for post). */
  annotations?: Record<string, string>
  /** How long to wait for another run to release it, in seconds (wait-timeout). */
  waitSeconds: number
  info: (message: string) => void
  /** The run's cancellation: the wait for another run ends at once (RunCancelled). */
  signal?: AbortSignal
  /** What the Lease's times, its renewals and the wait for another run are measured on (default: the machine's). */
  clock?: Clock
  /** Called once if the Lease is lost (another holder took it: this one's renewals did not come in time). */
  onLost?: (warning: string) => void
  /**
   * A leader's renew deadline (client-go's RenewDeadline): not renewed within this long of its last
   * renewal, measured on this holder's own clock, the Lease counts as lost (onLost), before it can
   * expire and another take it. Undefined: a renewal is waited for however long it takes.
   */
  renewDeadlineMs?: number
  /** What this process observed of the Lease already (let-go reads it before): one namespace's. Default: a fresh watch. */
  expiry?: LeaseExpiry
}

/** A Lease this run holds: renewed in the background until release() deletes it. */
export class HeldLease {
  /** Problems met while holding or releasing it (they do not fail the run). */
  readonly warnings: string[] = []
  private lease: V1Lease
  private readonly request: LeaseRequest
  /** Aborted on release: the sleep until the next renewal is cut short. */
  private readonly timer = new AbortController()
  private renewing: Promise<void> = Promise.resolve()
  private lost = false
  private released = false
  private readonly clock: Clock
  /** When (this holder's clock) the Lease's last renewal was sent that the API server took: the renew deadline counts from here. */
  private renewedAt: number

  constructor(request: LeaseRequest, lease: V1Lease) {
    this.request = request
    this.lease = lease
    this.clock = request.clock ?? realClock
    this.renewedAt = this.clock.now()
    this.schedule()
  }

  private lose(warning: string): void {
    this.lost = true
    this.warnings.push(warning)
    this.request.onLost?.(warning)
  }

  /** The write, or 'late' once the renew deadline passes first (the write may still settle, unheard). */
  private async withinDeadline<T>(write: Promise<T>): Promise<T | 'late'> {
    const deadline = this.request.renewDeadlineMs
    if (deadline === undefined) return write
    const stop = new AbortController()
    const late = this.clock.sleep(Math.max(0, this.renewedAt + deadline - this.clock.now()), stop.signal, true).then(
      () => 'late' as const,
      () => new Promise<never>(() => undefined) // the write settled first
    )
    try {
      return await Promise.race([write, late])
    } finally {
      stop.abort()
    }
  }

  /** The next renewal, RENEW_EVERY_MS after the previous one settled (a slow one is never overlapped). */
  private schedule(): void {
    if (this.released || this.lost) return
    this.clock.sleep(RENEW_EVERY_MS, this.timer.signal, true).then(
      () => {
        this.renewing = this.renew().finally(() => this.schedule())
      },
      () => undefined // released
    )
  }

  private get where(): string {
    return `Lease ${this.request.namespace}/${this.request.name}`
  }

  private async renew(): Promise<void> {
    if (this.lost) return
    const { client, namespace, holder, renewDeadlineMs } = this.request
    const sentAt = this.clock.now()
    const missed = (why: string): string =>
      `could not renew ${this.where} within ${(renewDeadlineMs ?? 0) / 1000}s of its last renewal (${why}): stopped leading before the Lease can expire and another holder take it`
    try {
      const renewed = await this.withinDeadline(
        client.replaceLease(namespace, {
          ...this.lease,
          spec: { ...this.lease.spec, renewTime: microTime(this.clock) }
        })
      )
      if (renewed === 'late') return this.released ? undefined : this.lose(missed('no answer in time'))
      if (typeof renewed !== 'string') {
        this.lease = renewed
        this.renewedAt = sentAt
        return
      }
      const now = await client.getLease(namespace, this.request.name)
      if (now?.spec?.holderIdentity === holder) {
        this.lease = now // our own earlier write, whose answer was lost: renew from it next time
        this.renewedAt = sentAt
        return
      }
      this.lose(
        `lost ${this.where} to ${now?.spec?.holderIdentity ?? 'nobody (it was deleted)'}: this run could not renew it in time, so another run on the same scope may have worked beside it (every delete still carried its UID and resourceVersion preconditions)`
      )
    } catch (e) {
      // Transient failures were retried already; the Lease lasts 30 s, and the next renewal may work.
      if (renewDeadlineMs !== undefined && this.clock.now() - this.renewedAt >= renewDeadlineMs && !this.released) return this.lose(missed(apiErrorMessage(e)))
      if (!this.warnings.some((w) => w.startsWith(`could not renew ${this.where}`))) this.warnings.push(`could not renew ${this.where}: ${apiErrorMessage(e)}`)
    }
  }

  /** Stops renewing and deletes the Lease, unless another run holds it by now. Never throws. */
  async release(): Promise<void> {
    this.released = true
    this.timer.abort()
    await this.renewing
    if (this.lost) return
    const { client, namespace, name, holder } = this.request
    const expires = `it expires ${LEASE_DURATION_SECONDS}s after its last renewal, and until then another run on the same scope waits for it`
    try {
      const uid = this.lease.metadata?.uid ?? ''
      const deleted = await client.deleteLease(namespace, name, { uid, resourceVersion: this.lease.metadata?.resourceVersion })
      if (deleted !== 'conflict') return
      // Changed since this run's last write: another run's (it took the Lease over), or ours whose answer was lost.
      const now = await client.getLease(namespace, name)
      if (now === undefined || now.spec?.holderIdentity !== holder) return
      const again = await client.deleteLease(namespace, name, { uid: now.metadata?.uid ?? '', resourceVersion: now.metadata?.resourceVersion })
      if (again === 'conflict') this.warnings.push(`could not release ${this.where}: it kept changing (409 Conflict); ${expires}`)
    } catch (e) {
      this.warnings.push(`could not release ${this.where} (${apiErrorMessage(e)}); ${expires}`)
    }
  }
}

/** The Lease as this run writes it when it takes it: fresh, or over `current`. */
function claim(request: LeaseRequest, current?: V1Lease): V1Lease {
  const now = microTime(request.clock ?? realClock)
  const transitions = current?.spec?.leaseTransitions ?? 0
  const changesHands = current !== undefined && current.spec?.holderIdentity !== request.holder
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      ...current?.metadata,
      name: request.name,
      namespace: request.namespace,
      annotations: { ...current?.metadata?.annotations, ...request.annotations, [SCOPE_ANNOTATION]: request.scope },
      labels: { ...current?.metadata?.labels, 'app.kubernetes.io/managed-by': 'job-sweeper' }
    },
    spec: {
      holderIdentity: request.holder,
      leaseDurationSeconds: LEASE_DURATION_SECONDS,
      acquireTime: now,
      renewTime: now,
      leaseTransitions: changesHands ? transitions + 1 : transitions
    }
  }
}

/** Takes the Lease, waiting up to waitSeconds while another run holds it. */
async function take(request: LeaseRequest): Promise<HeldLease> {
  const { client, namespace, name, holder, info, signal, clock = realClock } = request
  const where = `Lease ${namespace}/${name}`
  const started = clock.now()
  let waitingFor: string | undefined
  let lastProgress = 0
  const expiry = request.expiry ?? new LeaseExpiry(clock)
  for (;;) {
    if (signal?.aborted) throw leaseCancelled(cancelledBy(signal), where, waitingFor)
    const current = await client.getLease(namespace, name)
    if (current === undefined) {
      const created = await client.createLease(namespace, claim(request))
      if (created !== 'exists') return new HeldLease(request, created)
      continue // another run created it first: read who
    }
    const other = current.spec?.holderIdentity
    const expired = expiry.expired(current)
    if (!other || other === holder || expired) {
      const taken = await client.replaceLease(namespace, claim(request, current))
      if (typeof taken === 'string') continue // 409: another run took it first; 404: released meanwhile
      if (other && other !== holder) info(`took over ${where} from ${other}: it expired (no renewal for over ${LEASE_DURATION_SECONDS}s)`)
      return new HeldLease(request, taken)
    }
    const waited = (clock.now() - started) / 1000
    // Not given up before this run could tell a dead holder (no change for the Lease's duration,
    // at most ours): the Lease of a run that died blocks every later run with a shorter wait-timeout otherwise.
    const mustWatch = Math.min(current.spec?.leaseDurationSeconds ?? LEASE_DURATION_SECONDS, LEASE_DURATION_SECONDS)
    if (waited >= request.waitSeconds && (expiry.renewalSeen || waited > mustWatch)) {
      throw new Error(
        `${where} is still held by ${other} (another job-sweeper run on the same scope) after wait-timeout ${formatDuration(request.waitSeconds)}; nothing was changed`
      )
    }
    if (other !== waitingFor || clock.now() - lastProgress >= PROGRESS_MS) {
      const line = waitingFor === undefined ? 'waiting' : `${formatDuration(waited)}: still waiting`
      info(`${line} for another run on the same scope to finish: ${other} holds ${where}`)
      waitingFor = other
      lastProgress = clock.now()
    }
    await clock.sleep(POLL_MS, signal).catch((e: RunCancelled) => Promise.reject(leaseCancelled(e, where, waitingFor)))
  }
}

/** The run's cancellation, while it waited for (or took) the Lease: nothing was changed yet. */
function leaseCancelled(e: RunCancelled, where: string, heldBy: string | undefined): RunCancelled {
  const waiting = heldBy === undefined ? `while taking ${where}` : `while waiting for ${where}, held by ${heldBy}`
  return new RunCancelled(`${e.message} ${waiting}; nothing was changed`)
}

/** The Leases of one run, one per namespace it works in. */
export interface RunLeases {
  /** Problems with the Leases that do not fail the run: no permission, a Lease lost or not released. */
  readonly warnings: string[]
  /** Releases every Lease held (never throws). */
  release(): Promise<void>
}

/**
 * Takes the Lease `name` in each namespace, in name order (two runs over overlapping namespace
 * lists then never wait on each other in a circle). A 403 means the credentials may not use Leases:
 * the run goes on without them and says so, as it did before Leases existed.
 */
export async function takeLeases(namespaces: string[], request: Omit<LeaseRequest, 'namespace'>): Promise<RunLeases> {
  const held: HeldLease[] = []
  const warnings: string[] = []
  const release = async (): Promise<void> => {
    await Promise.all(held.map((h) => h.release()))
    warnings.push(...held.flatMap((h) => h.warnings))
  }
  try {
    for (const namespace of [...namespaces].sort()) {
      try {
        held.push(await take({ ...request, namespace }))
      } catch (e) {
        if (statusCode(e) === 403) throw new LeaseForbidden(apiErrorMessage(e))
        if (statusCode(e) === 404) throw new Error(`namespace '${namespace}' does not exist`, { cause: e })
        throw e
      }
    }
  } catch (e) {
    await release()
    if (!(e instanceof LeaseForbidden)) throw e
    return {
      warnings: [
        `no lock: the credentials may not use Leases (${e.message}), so a concurrent job-sweeper run on the same scope is not kept out; grant get, create, update and delete on leases (coordination.k8s.io) as the README's Role does`
      ],
      release: async () => {}
    }
  }
  return { warnings, release }
}
