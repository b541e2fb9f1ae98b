// The Lease's name, its holder and its expiry: pure rules, no cluster.
import { jest } from '@jest/globals'
import type { V1Lease } from '@kubernetes/client-node'
import {
  HeldLease,
  LeaseExpiry,
  LEASE_DURATION_SECONDS,
  leaseName,
  RENEW_DEADLINE_MS,
  RENEW_EVERY_MS,
  runIdentity,
  runLeaseName,
  scopeKey
} from '../../src/kube/lease.ts'
import type { ClusterObjects } from '../../src/kube/objects.ts'

describe('leaseName', () => {
  test.each([
    ['release only', { release: 'app' }, /^job-sweeper-app-[0-9a-f]{16}$/],
    ['selector only', { selector: 'app=web' }, /^job-sweeper-[0-9a-f]{16}$/],
    ['a 53-character release is cut, and the name stays a DNS label', { release: `${'a'.repeat(29)}-${'b'.repeat(23)}` }, /^job-sweeper-a{29}-[0-9a-f]{16}$/],
    ['a release with dots', { release: 'my.app' }, /^job-sweeper-my\.app-[0-9a-f]{16}$/]
  ])('%s', (_, scope, expected) => {
    const name = leaseName(scope)
    expect(name).toMatch(expected)
    expect(name.length).toBeLessThanOrEqual(63)
  })

  test('the same scope gives the same name in every run and phase; another scope another name', () => {
    expect(leaseName({ release: 'app', jobs: ['b', 'a'] })).toBe(leaseName({ release: 'app', jobs: ['a', 'b'] }))
    expect(leaseName({ release: 'app' })).not.toBe(leaseName({ release: 'app', selector: 'tier=db' }))
    expect(leaseName({ release: 'app' })).not.toBe(leaseName({ release: 'api' }))
    // A manifest is known by the Jobs it renders, not by the path of this run's rendered file.
    expect(leaseName({ manifest: '/tmp/a/rendered.yaml' }, ['app-migrate'])).toBe(leaseName({ manifest: '/tmp/b/out.yaml' }, ['app-migrate']))
    expect(scopeKey({ release: 'app', selector: 'x=y' })).toBe('release=app; selector=x=y')
  })
})

test('runLeaseName: lease-name when given, for every phase and scope; else the name derived from the scope', () => {
  expect(runLeaseName({ scope: { release: 'app', jobs: ['app-migrate'] }, leaseName: 'app-job-sweeper' })).toBe('app-job-sweeper')
  expect(runLeaseName({ scope: { manifest: '/tmp/r.yaml' }, leaseName: 'app-job-sweeper' }, ['app-migrate'])).toBe('app-job-sweeper')
  expect(runLeaseName({ scope: { release: 'app' } })).toBe(leaseName({ release: 'app' }))
  expect(runLeaseName({ scope: { manifest: '/tmp/r.yaml' } }, ['app-migrate'])).toBe(leaseName({ manifest: '/tmp/r.yaml' }, ['app-migrate']))
})

test('runIdentity: the workflow run URL (a working link) and the process, else the host and process', () => {
  const env = { GITHUB_SERVER_URL: 'https://github.example', GITHUB_REPOSITORY: 'acme/shop', GITHUB_RUN_ID: '7' }
  expect(runIdentity(env)).toMatch(new RegExp(`^https://github\\.example/acme/shop/actions/runs/7#.+-${process.pid}$`))
  expect(runIdentity({}, 'https://x.example/o/r/actions/runs/1')).toMatch(/^https:\/\/x\.example\/o\/r\/actions\/runs\/1#/)
  expect(runIdentity({})).toMatch(new RegExp(`^.+-${process.pid}$`))
})

describe('LeaseExpiry: expired by this process’s clock, never by the holder’s renewTime', () => {
  const lease = (renewTime: string, resourceVersion = '7', duration = LEASE_DURATION_SECONDS): V1Lease => ({
    metadata: { resourceVersion },
    spec: { holderIdentity: 'other', leaseDurationSeconds: duration, renewTime: renewTime as never }
  })
  test.each([
    ['unchanged 30 s → held (not yet past)', [0, 30], [lease('2026-01-01T12:00:00Z')], false],
    ['unchanged 31 s → expired', [0, 31], [lease('2026-01-01T12:00:00Z')], true],
    ['renewTime 5 min in the past (its clock behind), first read → held', [0], [lease('2026-01-01T11:55:00Z')], false],
    ['renewTime 1 min in the future (its clock ahead), unchanged 31 s → expired', [0, 31], [lease('2026-01-01T12:01:00Z')], true],
    ['renewed at 20 s, then unchanged to 45 s → held', [0, 20, 45], [lease('2026-01-01T12:00:00Z'), lease('2026-01-01T12:00:10Z', '8')], false],
    ['unchanged 5 min, duration 1 h → held', [0, 300], [lease('2026-01-01T12:00:00Z', '7', 3600)], false]
  ] as const)('%s', (_, times, leases, expired) => {
    let t = 0
    const expiry = new LeaseExpiry({ now: () => t * 1000, sleep: () => Promise.resolve() })
    const results = times.map((at, i) => ((t = at), expiry.expired(leases[Math.min(i, leases.length - 1)])))
    expect(results.at(-1)).toBe(expired)
  })
})

describe('HeldLease: renewals never overlap, and a failed release warns', () => {
  /** A fake of the Lease calls: each replace takes `replaceMs`; the Lease's resourceVersion counts writes. */
  function fakeLeases(replaceMs: number) {
    const calls: string[] = []
    let version = 1
    let inFlight = 0
    let maxInFlight = 0
    const stored = (): V1Lease => ({ metadata: { name: 'l', uid: 'u1', resourceVersion: String(version) }, spec: { holderIdentity: 'me' } })
    const client = {
      replaceLease: async (_ns: string, lease: V1Lease) => {
        calls.push(`replace@${lease.metadata?.resourceVersion}`)
        maxInFlight = Math.max(maxInFlight, ++inFlight)
        await new Promise((r) => setTimeout(r, replaceMs))
        inFlight--
        if (lease.metadata?.resourceVersion !== String(version)) return 'conflict' as const
        version++
        return stored()
      },
      getLease: async () => stored(),
      deleteLease: async (_ns: string, _name: string, p: { resourceVersion?: string }) => {
        calls.push(`delete@${p.resourceVersion}`)
        return p.resourceVersion === String(version) ? ('deleted' as const) : ('conflict' as const)
      }
    } as unknown as ClusterObjects
    return { client, calls, lease: stored(), maxInFlight: () => maxInFlight }
  }
  const request = (client: ClusterObjects) => ({ client, namespace: 'ns', name: 'l', holder: 'me', scope: 'release=app', waitSeconds: 60, info: () => {} })

  beforeEach(() => jest.useFakeTimers())
  afterEach(() => jest.useRealTimers())

  test('a renewal that takes 25 s (retrying): the next one starts 10 s after it settled, and the release carries its resourceVersion', async () => {
    const fake = fakeLeases(25_000)
    const held = new HeldLease(request(fake.client), fake.lease)
    await jest.advanceTimersByTimeAsync(RENEW_EVERY_MS) // the first renewal starts
    await jest.advanceTimersByTimeAsync(20_000) // with an interval, two more would have started by now
    expect(fake.calls).toEqual(['replace@1'])
    await jest.advanceTimersByTimeAsync(5_000 + RENEW_EVERY_MS) // settled, then 10 s later the next one
    expect(fake.calls).toEqual(['replace@1', 'replace@2'])
    const release = held.release() // while the second renewal is in flight: it waits for it
    await jest.advanceTimersByTimeAsync(25_000)
    await release
    expect(fake.calls).toEqual(['replace@1', 'replace@2', 'delete@3'])
    expect(fake.maxInFlight()).toBe(1)
    expect(held.warnings).toEqual([])
    await jest.advanceTimersByTimeAsync(60_000) // released: no renewal after it
    expect(fake.calls).toHaveLength(3)
  })

  test('a leader’s renew deadline: a renewal with no answer (an API server answering 429 for a minute) loses the Lease 20 s after the last renewal, before it can expire; without a deadline it waits', async () => {
    const hanging = { ...fakeLeases(0).client, replaceLease: () => new Promise<never>(() => undefined) } as unknown as ClusterObjects
    const lost: string[] = []
    const leader = new HeldLease({ ...request(hanging), renewDeadlineMs: RENEW_DEADLINE_MS, onLost: (w) => lost.push(w) }, fakeLeases(0).lease)
    const follower = new HeldLease({ ...request(hanging), onLost: (w) => lost.push(`no deadline: ${w}`) }, fakeLeases(0).lease)
    await jest.advanceTimersByTimeAsync(RENEW_DEADLINE_MS - 1)
    expect(lost).toEqual([])
    await jest.advanceTimersByTimeAsync(1)
    expect(lost).toEqual([
      'could not renew Lease ns/l within 20s of its last renewal (no answer in time): stopped leading before the Lease can expire and another holder take it'
    ])
    expect(RENEW_DEADLINE_MS).toBeLessThan(LEASE_DURATION_SECONDS * 1000)
    await jest.advanceTimersByTimeAsync(120_000)
    expect(lost).toHaveLength(1) // once; and the one without a deadline never
    void leader
    void follower
  })

  test('a leader’s renew deadline: renewals that fail at once warn first, and lose the Lease at the first failure past the deadline; one that works in time keeps it', async () => {
    const fake = fakeLeases(0)
    let fail = true
    const flaky = {
      ...fake.client,
      replaceLease: (ns: string, l: V1Lease) => (fail ? Promise.reject(new Error('429 Too Many Requests')) : fake.client.replaceLease(ns, l))
    } as unknown as ClusterObjects
    const lost: string[] = []
    const held = new HeldLease({ ...request(flaky), renewDeadlineMs: RENEW_DEADLINE_MS, onLost: (w) => lost.push(w) }, fake.lease)
    await jest.advanceTimersByTimeAsync(RENEW_EVERY_MS) // the first renewal fails: 10 s since the last
    expect([lost, held.warnings]).toEqual([[], ['could not renew Lease ns/l: 429 Too Many Requests']])
    fail = false
    await jest.advanceTimersByTimeAsync(RENEW_EVERY_MS) // the second works: the deadline counts from it
    fail = true
    await jest.advanceTimersByTimeAsync(RENEW_EVERY_MS + 100) // 10 s after it: a failure, still in time
    expect(lost).toEqual([])
    await jest.advanceTimersByTimeAsync(RENEW_EVERY_MS) // 20 s after it: past the deadline
    expect(lost).toEqual([
      'could not renew Lease ns/l within 20s of its last renewal (429 Too Many Requests): stopped leading before the Lease can expire and another holder take it'
    ])
  })

  test('a release the API server keeps refusing warns, saying what failed and when the Lease expires', async () => {
    const fake = fakeLeases(0)
    const failing = { ...fake.client, deleteLease: async () => Promise.reject(new Error('connection reset')) } as unknown as ClusterObjects
    const held = new HeldLease(request(failing), fake.lease)
    await held.release()
    expect(held.warnings).toEqual([
      'could not release Lease ns/l (connection reset); it expires 30s after its last renewal, and until then another run on the same scope waits for it'
    ])
  })

  test('a release that meets a conflict on our own Lease (an answer lost) deletes it from a fresh read; one that keeps conflicting warns', async () => {
    const fake = fakeLeases(0)
    let deletes = 0
    const conflicting = { ...fake.client, deleteLease: async () => (++deletes, 'conflict' as const) } as unknown as ClusterObjects
    const held = new HeldLease(request(conflicting), fake.lease)
    await held.release()
    expect(deletes).toBe(2)
    expect(held.warnings).toEqual([
      'could not release Lease ns/l: it kept changing (409 Conflict); it expires 30s after its last renewal, and until then another run on the same scope waits for it'
    ])
  })
})
