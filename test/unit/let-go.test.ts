// `keeper --let-go` (src/let-go.ts) over the fake client and clock: it takes the keeper's Lease for
// as long as it works, so that a standby keeper cannot start leading and hold again the Jobs it
// listed, and releases it at the end; while a keeper leads, it lets go of nothing. The cluster side
// (the chart's hooks, a real keeper stopped) is test/keeper.test.ts and test/chart-install.test.ts.
import type { V1Lease } from '@kubernetes/client-node'
import { KEEPER_LEASE, KEEPER_SCOPE_ANNOTATION, LEASE_DURATION_SECONDS, RENEW_EVERY_MS, takeLeases } from '../../src/kube/lease.ts'
import { letGo } from '../../src/let-go.ts'
import { ARCHIVE_ANNOTATION, LOGS_FINALIZER } from '../../src/plan/keeper.ts'
import type { LogSink } from '../../src/store/sink.ts'
import { FakeClock } from '../fake/clock.ts'
import { FakeJobsClient } from '../fake/jobs-client.ts'
import { keeperSettings } from '../fake/keeper-settings.ts'
import { newJob } from './jobs.ts'

const settings = keeperSettings({ leaseNamespace: 'job-sweeper', letGo: true })

const noStore: LogSink = {
  where: '/archive',
  open: () => Promise.reject(new Error('nothing is written: the Jobs here were archived before')),
  close: async () => undefined
}

/** A Job the keeper archived and still holds: let-go only releases it. */
const archivedHeld = (name: string): ReturnType<typeof newJob> =>
  newJob({ name, status: 'succeeded', finalizers: [LOGS_FINALIZER], annotations: { [ARCHIVE_ANNOTATION.where]: `/archive/prod/${name}/uid-${name}/` } })

function setup(...jobs: ReturnType<typeof newJob>[]) {
  const clock = new FakeClock()
  const client = Object.assign(new FakeJobsClient(clock), { close: async () => undefined })
  for (const job of jobs) client.create(job)
  const log: string[] = []
  const run = (): Promise<number> =>
    clock.settle(
      letGo(settings, {
        log: (line) => log.push(line),
        signal: new AbortController().signal,
        mask: () => undefined,
        connect: () => ({ client, sink: noStore, clock })
      })
    )
  return { clock, client, log, run }
}

test('it holds the keeper’s Lease while it releases the Jobs (holding nothing for post), and releases the Lease after', async () => {
  const { client, log, run } = setup(archivedHeld('app-migrate'), archivedHeld('app-seed'))
  const leaseAtRelease: (V1Lease | undefined)[] = []
  client.every('patchJob', async (proceed) => {
    leaseAtRelease.push(client.lease('job-sweeper', KEEPER_LEASE))
    return proceed()
  })
  expect(await run()).toBe(0)
  expect(leaseAtRelease).toHaveLength(2)
  for (const lease of leaseAtRelease) {
    expect(lease?.spec?.holderIdentity).toMatch(/\(keeper --let-go\)$/)
    expect(lease?.metadata?.annotations?.[KEEPER_SCOPE_ANNOTATION.namespaces]).toBe('')
    expect(lease?.metadata?.annotations?.[KEEPER_SCOPE_ANNOTATION.selector]).toBe('')
  }
  for (const name of ['app-migrate', 'app-seed']) expect(client.job('prod', name)?.metadata?.finalizers).toEqual([])
  expect(client.lease('job-sweeper', KEEPER_LEASE)).toBeUndefined()
  expect(log.at(-1)).toContain('2 held Job(s) in prod: 0 archived and released, 2 released (archived before)')
})

test('a standby keeper that tries to lead while let-go works waits: it takes the Lease only once let-go released it', async () => {
  const { clock, client, run } = setup(archivedHeld('app-migrate'))
  let standby: Promise<unknown> | undefined
  const tookAt: number[] = []
  client.every('patchJob', async (proceed) => {
    // The standby asks for the Lease while let-go holds it, and keeps asking.
    standby ??= takeLeases(['job-sweeper'], {
      client,
      name: KEEPER_LEASE,
      holder: 'keeper-1',
      scope: 'keeper',
      waitSeconds: Number.POSITIVE_INFINITY,
      info: () => undefined,
      clock
    }).then((leases) => (tookAt.push(clock.now()), leases))
    await clock.sleep(3 * RENEW_EVERY_MS + 5_000) // a slow release: longer than the Lease's 30 s, renewed meanwhile
    expect(tookAt).toEqual([])
    return proceed()
  })
  const finishedAt = { t: 0 }
  expect(await run().then((code) => ((finishedAt.t = clock.now()), code))).toBe(0)
  const leases = (await clock.settle(standby as Promise<{ release: () => Promise<void> }>)) ?? undefined
  expect(tookAt).toHaveLength(1)
  expect(tookAt[0]).toBeGreaterThanOrEqual(finishedAt.t)
  expect(client.lease('job-sweeper', KEEPER_LEASE)?.spec?.holderIdentity).toBe('keeper-1')
  await leases?.release()
})

test('positive control: a keeper still leads (renewing its Lease): let-go waits, then lets go of nothing and says who', async () => {
  const { clock, client, log, run } = setup(archivedHeld('app-migrate'))
  const renew = (): void => {
    client.putLease('job-sweeper', {
      metadata: { name: KEEPER_LEASE, resourceVersion: client.lease('job-sweeper', KEEPER_LEASE)?.metadata?.resourceVersion },
      spec: { holderIdentity: 'keeper-0', leaseDurationSeconds: LEASE_DURATION_SECONDS, renewTime: new Date(clock.now()) as never }
    })
    void clock.sleep(RENEW_EVERY_MS).then(renew)
  }
  renew()
  expect(await run()).toBe(1)
  expect(client.callsOf('patchJob')).toEqual([])
  expect(client.job('prod', 'app-migrate')?.metadata?.finalizers).toEqual([LOGS_FINALIZER])
  expect(log.at(-1)).toBe(`keeper --let-go: a keeper still runs (keeper-0, Lease job-sweeper/${KEEPER_LEASE}): stop it first; nothing was let go`)
  expect(client.lease('job-sweeper', KEEPER_LEASE)?.spec?.holderIdentity).toBe('keeper-0')
})

test('a keeper leads that keeps none of its namespaces (the chart’s namespaces shrunk): let-go lets go of the ones dropped at once, and leaves the Lease to it', async () => {
  const { clock, client, log, run } = setup(archivedHeld('app-migrate'))
  client.putLease('job-sweeper', {
    metadata: { name: KEEPER_LEASE, annotations: { [KEEPER_SCOPE_ANNOTATION.namespaces]: 'staging,qa' } },
    spec: { holderIdentity: 'keeper-0', leaseDurationSeconds: LEASE_DURATION_SECONDS, renewTime: new Date(clock.now()) as never }
  })
  expect(await run()).toBe(0)
  expect(log[0]).toBe(
    `keeper --let-go: the keeper leading (keeper-0, Lease job-sweeper/${KEEPER_LEASE}) keeps staging, qa, none of prod: its Lease is left to it`
  )
  expect(client.job('prod', 'app-migrate')?.metadata?.finalizers).toEqual([])
  expect(client.lease('job-sweeper', KEEPER_LEASE)?.spec?.holderIdentity).toBe('keeper-0')
  expect(client.callsOf('replaceLease')).toEqual([])
})

test('a keeper that died, its clock a minute ahead (renewTime 60 s in the future): let-go takes its Lease once it saw no change of it for 30 s by its own clock, and lets go', async () => {
  const { clock, client, log, run } = setup(archivedHeld('app-migrate'))
  client.putLease('job-sweeper', {
    metadata: { name: KEEPER_LEASE },
    spec: { holderIdentity: 'keeper-0', leaseDurationSeconds: LEASE_DURATION_SECONDS, renewTime: new Date(clock.now() + 60_000) as never }
  })
  const started = clock.now()
  expect(await run()).toBe(0)
  expect(clock.now() - started).toBeGreaterThan(LEASE_DURATION_SECONDS * 1000)
  expect(log[0]).toBe(`keeper --let-go: waiting for the keeper keeper-0 to stop (Lease job-sweeper/${KEEPER_LEASE})`)
  expect(client.job('prod', 'app-migrate')?.metadata?.finalizers).toEqual([])
  expect(client.lease('job-sweeper', KEEPER_LEASE)).toBeUndefined() // taken, then released
})
