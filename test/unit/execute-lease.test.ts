// The Lease that keeps concurrent runs apart, over the fake client and clock (test/fake/): waiting
// for another run's live Lease, taking over an expired one, a Lease taken over while held, renewals
// that fail, a wait cancelled. The cluster suite (test/lease.test.ts) proves two real runs on a
// real API server keep apart, and a 403 on Leases.
import type { V1Lease } from '@kubernetes/client-node'
import { LEASE_DURATION_SECONDS, RENEW_EVERY_MS, takeLeases, type RunLeases } from '../../src/kube/lease.ts'
import { RunCancelled } from '../../src/kube/retry.ts'
import { FakeClock } from '../fake/clock.ts'
import { apiError, FakeJobsClient, fail } from '../fake/jobs-client.ts'

const NAME = 'job-sweeper-app-0123456789abcdef'

function setup() {
  const clock = new FakeClock()
  const client = new FakeJobsClient(clock)
  const info: string[] = []
  const take = (waitSeconds = 60, signal?: AbortSignal): Promise<RunLeases> =>
    takeLeases(['prod'], { client, name: NAME, scope: 'release=app', holder: 'me', waitSeconds, info: (m) => info.push(m), signal, clock })
  /** Another run holds the Lease, renewed `ago` seconds before now. */
  const heldBy = (holder: string, ago = 0): V1Lease =>
    client.putLease('prod', {
      metadata: { name: NAME, resourceVersion: client.lease('prod', NAME)?.metadata?.resourceVersion },
      spec: { holderIdentity: holder, leaseDurationSeconds: LEASE_DURATION_SECONDS, renewTime: new Date(clock.now() - ago * 1000) as never }
    })
  return { clock, client, info, take, heldBy }
}

test('another run’s live Lease: the run waits up to wait-timeout, then fails naming the holder, and writes nothing', async () => {
  const { clock, client, take, heldBy, info } = setup()
  heldBy('other-run')
  // The other run keeps renewing it.
  const renew = (): void => void clock.sleep(RENEW_EVERY_MS).then(() => (heldBy('other-run'), renew()))
  renew()
  const started = clock.now()
  await expect(clock.settle(take(60))).rejects.toThrow(
    `Lease prod/${NAME} is still held by other-run (another job-sweeper run on the same scope) after wait-timeout 1m; nothing was changed`
  )
  expect(clock.now() - started).toBe(60_000)
  expect(info[0]).toBe(`waiting for another run on the same scope to finish: other-run holds Lease prod/${NAME}`)
  expect(client.callsOf('replaceLease')).toEqual([])
  expect(client.lease('prod', NAME)?.spec?.holderIdentity).toBe('other-run')
})

test('a dead run’s Lease is taken over once this run saw no change of it for 30 s by its own clock, its renewTime notwithstanding; the release deletes it', async () => {
  // Its renewTime a minute ahead: its runner's clock was fast. A wait-timeout shorter than the Lease
  // lasts still waits to see it expire, or a dead run's Lease would block every such run for good.
  const { clock, client, take, heldBy, info } = setup()
  heldBy('dead-run', -60)
  const started = clock.now()
  const leases = await clock.settle(take(5))
  expect(clock.now() - started).toBe((LEASE_DURATION_SECONDS + 1) * 1000) // read every second: the first past 30 s
  expect(info).toEqual([
    `waiting for another run on the same scope to finish: dead-run holds Lease prod/${NAME}`,
    `15s: still waiting for another run on the same scope to finish: dead-run holds Lease prod/${NAME}`,
    `30s: still waiting for another run on the same scope to finish: dead-run holds Lease prod/${NAME}`,
    `took over Lease prod/${NAME} from dead-run: it expired (no renewal for over ${LEASE_DURATION_SECONDS}s)`
  ])
  expect(client.lease('prod', NAME)?.spec).toEqual(expect.objectContaining({ holderIdentity: 'me', leaseTransitions: 1 }))
  await clock.settle(leases.release())
  expect(client.lease('prod', NAME)).toBeUndefined()
  expect(leases.warnings).toEqual([])
})

test('a live run’s Lease whose renewTime is 5 minutes old (its runner’s clock slow) is not taken: the run waits, then fails at wait-timeout', async () => {
  const { clock, client, take, heldBy } = setup()
  const renew = (): void => void clock.sleep(RENEW_EVERY_MS).then(() => (heldBy('slow-clock-run', 300), renew()))
  heldBy('slow-clock-run', 300)
  renew()
  await expect(clock.settle(take(60))).rejects.toThrow(`Lease prod/${NAME} is still held by slow-clock-run`)
  expect(client.callsOf('replaceLease')).toEqual([])
  expect(client.lease('prod', NAME)?.spec?.holderIdentity).toBe('slow-clock-run')
})

test('positive control: a Lease the other run releases while this one waits is taken then', async () => {
  const { clock, client, take, heldBy } = setup()
  heldBy('other-run')
  void clock.sleep(5_000).then(() => client.deleteLease('prod', NAME, { uid: client.lease('prod', NAME)?.metadata?.uid ?? '' }))
  const leases = await clock.settle(take(60))
  expect(client.lease('prod', NAME)?.spec?.holderIdentity).toBe('me')
  await clock.settle(leases.release())
})

test('held Lease renewed every 10 s; one taken over by another run meanwhile is lost with a warning, and the release leaves it alone', async () => {
  const { clock, client, take, heldBy } = setup()
  const leases = await clock.settle(take())
  await clock.advance(RENEW_EVERY_MS * 3)
  expect(client.callsOf('replaceLease')).toHaveLength(3) // renewed, each 10 s after the last
  heldBy('thief')
  await clock.advance(RENEW_EVERY_MS)
  await clock.settle(leases.release())
  expect(leases.warnings).toEqual([
    `lost Lease prod/${NAME} to thief: this run could not renew it in time, so another run on the same scope may have worked beside it (every delete still carried its UID and resourceVersion preconditions)`
  ])
  expect(client.callsOf('deleteLease')).toEqual([])
  expect(client.lease('prod', NAME)?.spec?.holderIdentity).toBe('thief')
  await clock.advance(RENEW_EVERY_MS * 3)
  expect(client.callsOf('replaceLease')).toHaveLength(4) // lost: no renewal after it
})

test('renewals that keep failing warn once, and the Lease is still released at the end', async () => {
  const { clock, client, take } = setup()
  const leases = await clock.settle(take())
  client.every('replaceLease', fail(apiError(500, 'etcdserver: request timed out')))
  await clock.advance(RENEW_EVERY_MS * 4)
  expect(client.callsOf('replaceLease')).toHaveLength(4)
  await clock.settle(leases.release())
  expect(leases.warnings).toEqual([`could not renew Lease prod/${NAME}: etcdserver: request timed out`])
  expect(client.lease('prod', NAME)).toBeUndefined()
})

test('a run cancelled while it waits for another run’s Lease ends at once, saying nothing was changed', async () => {
  const { clock, client, take, heldBy } = setup()
  heldBy('other-run')
  const cancel = new AbortController()
  void clock.sleep(3_000).then(() => cancel.abort(new RunCancelled('cancelled by SIGTERM')))
  const started = clock.now()
  await expect(clock.settle(take(600, cancel.signal))).rejects.toThrow(
    `cancelled by SIGTERM while waiting for Lease prod/${NAME}, held by other-run; nothing was changed`
  )
  expect(clock.now() - started).toBe(3_000)
  expect(client.lease('prod', NAME)?.spec?.holderIdentity).toBe('other-run')
})
