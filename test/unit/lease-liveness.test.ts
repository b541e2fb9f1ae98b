// Whether a keeper runs, by this run's clock alone (plan/lease-liveness.ts leaseLiveness), and the
// watch of its Lease that feeds it (observe/keeper-lease.ts readKeeperLease) over the fake client
// and clock: a keeper whose clock is 30 s off from the runner's is judged by whether its Lease
// changes, never by its renewTime. The cluster side is test/keeper-clock.test.ts.
import type { V1Lease } from '@kubernetes/client-node'
import { KEEPER_LEASE, LEASE_DURATION_SECONDS, RENEW_EVERY_MS, type LeaseObservation } from '../../src/kube/lease.ts'
import { readKeeperLease, type KeeperPresence } from '../../src/observe/keeper-lease.ts'
import { keeperLine, orphanedHold, LOGS_FINALIZER } from '../../src/plan/keeper.ts'
import { leaseLiveness } from '../../src/plan/lease-liveness.ts'
import { FakeClock } from '../fake/clock.ts'
import { apiError, FakeJobsClient } from '../fake/jobs-client.ts'
import { newJob } from './jobs.ts'

/** A read at `at` seconds on this run's clock: as first read, or with what changed. */
const read = (at: number, changed: Partial<LeaseObservation> = {}): LeaseObservation => ({
  at: at * 1000,
  holder: 'keeper-0',
  renewTime: '2026-06-01T12:00:00.000Z',
  resourceVersion: '7',
  ...changed
})

describe('leaseLiveness: what reads timed on this run’s clock tell', () => {
  test.each([
    ['no read yet → undecided', [], undefined],
    ['one read of a held Lease → undecided (its renewTime is on the keeper’s clock)', [read(0)], undefined],
    ['one read, nobody holds it → free', [read(0, { holder: undefined })], { running: false, state: 'free' }],
    ['unchanged for 29 s → undecided', [read(0), read(29)], undefined],
    ['unchanged for the whole 30 s → stale', [read(0), read(14), read(30)], { running: false, state: 'stale', watchedSeconds: 30 }],
    [
      'renewTime changed after 4 s → renewed',
      [read(0), read(2), read(4, { renewTime: '2026-06-01T12:00:10.000Z', resourceVersion: '8' })],
      { running: true, state: 'renewed', watchedSeconds: 4 }
    ],
    [
      'only its resourceVersion changed (rewritten) → renewed',
      [read(0), read(2, { resourceVersion: '9' })],
      { running: true, state: 'renewed', watchedSeconds: 2 }
    ],
    ['another keeper took it → renewed', [read(0), read(2, { holder: 'keeper-1' })], { running: true, state: 'renewed', watchedSeconds: 2 }],
    ['released while watched → free', [read(0), read(2, { holder: undefined, resourceVersion: '8' })], { running: false, state: 'free' }]
  ] as const)('%s', (_, observations, expected) => {
    expect(leaseLiveness([...observations], LEASE_DURATION_SECONDS)).toEqual(expected)
  })
})

describe('readKeeperLease: the watch, on a clock the test moves', () => {
  /** The keeper's clock is `skewSeconds` off from this run's: its renewTime says so, its renewals do not. */
  function setup(skewSeconds: number) {
    const clock = new FakeClock()
    const client = new FakeJobsClient(clock)
    const info: string[] = []
    const warnings: string[] = []
    const write = (): V1Lease =>
      client.putLease('job-sweeper', {
        metadata: {
          name: KEEPER_LEASE,
          annotations: { 'job-sweeper.io/keeper-namespaces': 'prod', 'job-sweeper.io/keeper-selector': 'job-sweeper.io/managed=true' }
        },
        spec: {
          holderIdentity: 'keeper-0',
          leaseDurationSeconds: LEASE_DURATION_SECONDS,
          renewTime: new Date(clock.now() + skewSeconds * 1000).toISOString() as never
        }
      })
    const watch = (post = true, signal?: AbortSignal): Promise<KeeperPresence> =>
      readKeeperLease(client, 'job-sweeper', (w) => warnings.push(w), post, { clock, decide: leaseLiveness, info: (l) => info.push(l), signal })
    return { clock, client, info, warnings, write, watch }
  }
  const held = newJob({ name: 'app-migrate', status: 'failed', finalizers: [LOGS_FINALIZER] })

  test('a dead keeper whose renewTime is 30 s in the future: no keeper, after watching its 30 s; said in one line', async () => {
    const { clock, client, info, write, watch } = setup(30)
    write() // never renewed again
    const started = clock.now()
    const keeper = await clock.settle(watch())
    expect(clock.now() - started).toBe(30_000)
    expect(keeper.lease?.liveness).toEqual({ running: false, state: 'stale', watchedSeconds: 30 })
    expect(info).toEqual(["keeper-namespace 'job-sweeper': watching the keeper's Lease job-sweeper-keeper for a renewal (up to 30s)…"])
    expect(keeperLine('job-sweeper', keeper.lease)).toBe(
      "keeper-namespace 'job-sweeper': no keeper running: its Lease job-sweeper-keeper was not renewed in the 30s this run watched it: no Job is held for one"
    )
    expect(orphanedHold(held, keeper)).toBe('no keeper: its Lease job-sweeper-keeper was not renewed in the 30s this run watched it')
    expect(client.callsOf('getLease').length).toBeLessThanOrEqual(17) // every 2 s, never faster
  })

  test('a live keeper whose renewTime is 30 s in the past: a keeper runs, seen at its next renewal, and the watch stops there', async () => {
    const { clock, client, write, watch } = setup(-30)
    write()
    const renew = (): void => void clock.sleep(RENEW_EVERY_MS).then(() => (write(), renew()))
    void clock.sleep(3_000).then(() => (write(), renew())) // its last renewal was 7 s before the run's first read
    const started = clock.now()
    const keeper = await clock.settle(watch())
    expect(clock.now() - started).toBe(4_000) // the first read after its renewal at 3 s
    expect(keeper.lease?.liveness).toEqual({ running: true, state: 'renewed', watchedSeconds: 4 })
    expect(keeperLine('job-sweeper', keeper.lease)).toContain(
      'a keeper runs (keeper-0, its Lease seen renewed after 4s), keeping Jobs matching job-sweeper.io/managed=true in prod'
    )
    expect(orphanedHold(held, keeper)).toBeUndefined()
    expect(client.callsOf('getLease')).toHaveLength(3)
  })

  test('a released Lease (no holder) settles at the first read: no line, no wait', async () => {
    const { clock, client, info, watch } = setup(0)
    client.putLease('job-sweeper', { metadata: { name: KEEPER_LEASE }, spec: { leaseDurationSeconds: LEASE_DURATION_SECONDS } })
    const started = clock.now()
    const keeper = await clock.settle(watch())
    expect([clock.now() - started, info, keeper.lease?.liveness]).toEqual([0, [], { running: false, state: 'free' }])
    const none = await clock.settle(setup(0).watch())
    expect(none).toEqual({ namespace: 'job-sweeper' }) // no Lease at all: one read
  })

  test('a read refused during the watch: unread, as a refused first read (nothing decided), with the same warning', async () => {
    const { clock, client, warnings, write, watch } = setup(0)
    write()
    let reads = 0
    client.every('getLease', (proceed) => (++reads > 2 ? Promise.reject(apiError(403, 'leases is forbidden')) : proceed()))
    const keeper = await clock.settle(watch(false))
    expect(keeper).toEqual({ namespace: 'job-sweeper', unread: true })
    expect(orphanedHold(held, keeper)).toBeUndefined()
    expect(warnings).toEqual([
      "keeper-namespace 'job-sweeper': cannot read the keeper's Lease job-sweeper-keeper (403 leases is forbidden; the credentials need 'get' on leases there): no hold of the keeper’s is let go"
    ])
  })

  test('a watch ended early (the answer no longer needed): nothing decided, nothing taken from the keeper', async () => {
    const { clock, write, watch } = setup(30)
    write()
    const enough = new AbortController()
    void clock.sleep(5_000).then(() => enough.abort())
    const keeper = await clock.settle(watch(false, enough.signal))
    expect(keeper.lease?.liveness).toBeUndefined()
    expect(orphanedHold(held, keeper)).toBeUndefined()
  })
})
