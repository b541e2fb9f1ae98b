// The TTL starts after the archive (src/plan/release-ttl.ts): post, with a keeper running for the
// Job, records its TTL by outcome and writes no ttlSecondsAfterFinished; whoever lets go of the
// hold writes the outcome's TTL in the same patch (execute/keep.ts), over the fake client.
import type { V1Job } from '@kubernetes/client-node'
import { giveUp, setHold } from '../../src/execute/keep.ts'
import { runKeeper, type KeeperClient } from '../../src/keeper.ts'
import { realClock } from '../../src/kube/clock.ts'
import type { LogSink } from '../../src/store/sink.ts'
import { running } from './pods.ts'
import { toJobRecord } from '../../src/kube/job-record.ts'
import { LOGS_FINALIZER } from '../../src/plan/keeper.ts'
import { postTtl, TTL_AFTER_ARCHIVE, ttlAfterArchive, ttlAtRelease, type ReleaseTtl } from '../../src/plan/release-ttl.ts'
import { FakeClock } from '../fake/clock.ts'
import { FakeJobsClient } from '../fake/jobs-client.ts'
import { keeperSettings } from '../fake/keeper-settings.ts'
import { newJob, NOW, type JobShape } from './jobs.ts'

const HOUR = 3600
const recorded = (shape: JobShape, value = 'ttl 1h, failure-grace 1s'): V1Job =>
  newJob({ ...shape, finalizers: [LOGS_FINALIZER], annotations: { ...shape.annotations, [TTL_AFTER_ARCHIVE]: value } })

describe('ttlAtRelease: the TTL whoever lets go of the hold writes', () => {
  const cases: [string, V1Job, Partial<ReleaseTtl> | undefined][] = [
    ['no TTL recorded (post did not leave it to the release) → nothing written', newJob({ name: 'j', status: 'failed' }), undefined],
    [
      'failed 10 s ago, failure-grace 1s → 1 (expired: deleted at once)',
      recorded({ name: 'j', status: 'failed', finishedAgo: 10 }),
      { ttlSeconds: 1, leftSeconds: 0 }
    ],
    [
      'succeeded 20 min ago, ttl 1h → 3600, 40 min left (the TTL controller counts it from the finish)',
      recorded({ name: 'j', status: 'succeeded', finishedAgo: 1200 }),
      { ttlSeconds: HOUR, leftSeconds: 2400 }
    ],
    [
      'succeeded 2 h ago, ttl 1h → 3600, none left, never below 0',
      recorded({ name: 'j', status: 'succeeded', finishedAgo: 2 * HOUR }),
      { ttlSeconds: HOUR, leftSeconds: 0 }
    ],
    [
      'failed and being deleted → its outcome’s, failure-grace',
      recorded({ name: 'j', status: 'failed', finishedAgo: 0 }, 'ttl 1h, failure-grace 1d'),
      { ttlSeconds: 86400, leftSeconds: 86400 }
    ],
    [
      'let go while it runs (let-go, a give-up) → the larger of the two, counted from its finish to come',
      recorded({ name: 'j', status: 'running' }, 'ttl 1h, failure-grace 1d'),
      { ttlSeconds: 86400, leftSeconds: undefined }
    ],
    ['running, either never → none', recorded({ name: 'j', status: 'running' }, 'ttl 1h, failure-grace never'), { ttlSeconds: null }],
    ['succeeded, ttl never → none (the field stays absent)', recorded({ name: 'j', status: 'succeeded' }, 'ttl never, failure-grace 1s'), { ttlSeconds: null }],
    ['an annotation edited into nonsense → none, and says why', recorded({ name: 'j', status: 'failed' }, 'soon'), { ttlSeconds: null }]
  ]
  test.each(cases)('%s', (_, job, expected) => {
    const decided = ttlAtRelease(toJobRecord(job), NOW)
    if (expected === undefined) return expect(decided).toBeUndefined()
    expect({ ttlSeconds: decided?.ttlSeconds, leftSeconds: decided?.leftSeconds }).toEqual(expected)
  })

  test('the words name the annotation that cannot be read', () => {
    expect(ttlAtRelease(toJobRecord(recorded({ name: 'j', status: 'failed' }, 'soon')), NOW)?.words).toBe(
      `no TTL written: its annotation ${TTL_AFTER_ARCHIVE} 'soon' is not 'ttl <duration>, failure-grace <duration>'`
    )
  })
})

describe('postTtl: what post writes', () => {
  const byOutcome = { ttl: HOUR, failureGrace: 1 }
  test.each([
    ['no keeper runs for it → the TTL at once, as ever', 1, false, { ttlSeconds: 1, afterArchive: undefined }],
    ['held for a keeper → no TTL now; its policy by outcome for the release', 1, true, { ttlSeconds: null, afterArchive: 'ttl 1h, failure-grace 1s' }],
    [
      'held, running (the upper bound decided) → the same: the release picks by its outcome',
      HOUR,
      true,
      { ttlSeconds: null, afterArchive: 'ttl 1h, failure-grace 1s' }
    ],
    ['held, never (or none while keep-last keeps it) → nothing to leave to the release', null, true, { ttlSeconds: null, afterArchive: undefined }]
  ] as const)('%s', (_, ttl, held, expected) => {
    const { ttlSeconds, afterArchive } = postTtl(ttl, byOutcome, held)
    expect({ ttlSeconds, afterArchive }).toEqual(expected)
  })
  test('the value round-trips', () => {
    expect(ttlAfterArchive(null, 90)).toBe('ttl never, failure-grace 1m30s')
  })
})

describe('the release writes it, in the patch that removes the finalizer', () => {
  function held(shape: JobShape): { client: FakeJobsClient; job: V1Job } {
    const client = new FakeJobsClient(new FakeClock())
    client.create(recorded(shape))
    return { client, job: client.update('prod', 'j', (j) => void (j.metadata!.finalizers = ['example.com/other', LOGS_FINALIZER])) }
  }

  test('setHold(false): ttlSecondsAfterFinished of its outcome, the annotation gone, the other finalizer kept, one patch', async () => {
    const { client, job } = held({ name: 'j', status: 'failed', finishedAgo: 5 })
    const released = await setHold(client, toJobRecord(job), false)
    expect(released.ttl).toMatchObject({ ttlSeconds: 1 })
    const now = client.job('prod', 'j')
    expect(now?.spec?.ttlSecondsAfterFinished).toBe(1)
    expect(now?.metadata?.annotations?.[TTL_AFTER_ARCHIVE]).toBeUndefined()
    expect(now?.metadata?.finalizers).toEqual(['example.com/other'])
    expect(client.callsOf('patchJob')).toHaveLength(1)
  })

  test('a hold added (not let go) writes no TTL', async () => {
    const client = new FakeJobsClient(new FakeClock())
    const job = client.create(recorded({ name: 'j', status: 'running', finalizers: [] }))
    client.update('prod', 'j', (j) => void (j.metadata!.finalizers = []))
    await setHold(client, toJobRecord(client.job('prod', 'j') ?? job), true)
    expect(client.job('prod', 'j')?.spec?.ttlSecondsAfterFinished).toBeUndefined()
    expect(client.job('prod', 'j')?.metadata?.annotations?.[TTL_AFTER_ARCHIVE]).toBe('ttl 1h, failure-grace 1s')
  })

  test('a give-up (hold-deadline) writes it too: no Job outlives its policy because its archive failed', async () => {
    const { client, job } = held({ name: 'j', status: 'succeeded', finishedAgo: 5 })
    await giveUp(client, toJobRecord(job), { action: 'give-up', reason: 'hold-deadline' }, 's3://logs', [])
    expect(client.job('prod', 'j')?.spec?.ttlSecondsAfterFinished).toBe(HOUR)
  })

  test('after a conflict, the TTL of the Job as it is now: post recorded it meanwhile', async () => {
    const client = new FakeJobsClient(new FakeClock())
    const start = client.create(newJob({ name: 'j', status: 'failed', finalizers: [LOGS_FINALIZER] }))
    const stale = toJobRecord(start)
    client.update('prod', 'j', (j) => void (j.metadata!.annotations = { ...j.metadata?.annotations, [TTL_AFTER_ARCHIVE]: 'ttl 1h, failure-grace 1s' }))
    // The fake's patch ignores resourceVersion: the keeper's conflict is scripted, as the API server answers it.
    client.script('patchJob', async () => 'conflict')
    const released = await setHold(client, stale, false)
    expect(released.ttl).toMatchObject({ ttlSeconds: 1 })
    expect(client.job('prod', 'j')?.spec?.ttlSecondsAfterFinished).toBe(1)
  })
})

describe('the keeper’s loop (runKeeper over the fake client and a store that takes everything)', () => {
  const settings = keeperSettings()
  const store: LogSink = {
    where: '/archive',
    open: async () => ({ write: async (body) => void (await body.toArray()), discard: async () => undefined }),
    close: async () => undefined
  }

  test('it archives a failed Job post left its TTL to, then writes failure-grace as it lets go; a held Job post did not touch gets no TTL', async () => {
    const fake = new FakeJobsClient(realClock)
    const client = Object.assign(fake, { close: async () => undefined }) as KeeperClient
    const failed = (name: string, annotations: Record<string, string>): V1Job => {
      const shape = newJob({ name, status: 'failed', labels: { 'job-sweeper.io/managed': 'true' }, finalizers: [LOGS_FINALIZER], annotations })
      return { ...shape, status: { ...shape.status, failed: 1 } }
    }
    for (const [name, annotations] of [
      ['migrate', { [TTL_AFTER_ARCHIVE]: 'ttl 1h, failure-grace 1s' }],
      ['other', {}]
    ] as const) {
      const job = fake.create(failed(name, annotations))
      const pod = running(30)
      fake.addPod(job, { ...pod, metadata: { ...pod.metadata, name: `${name}-abc` }, status: { ...pod.status, phase: 'Failed' } }, { migrate: 'boom\n' })
    }
    const lines: string[] = []
    const stop = new AbortController()
    const ran = runKeeper(settings, { log: (line) => lines.push(line), signal: stop.signal, mask: () => undefined, connect: () => ({ client, sink: store }) })
    try {
      for (const name of ['migrate', 'other'])
        for (let waited = 0; fake.job('prod', name)?.metadata?.finalizers?.includes(LOGS_FINALIZER); waited += 50) {
          if (waited > 15_000) throw new Error(`${name} not released; keeper said: ${lines.join(' | ')}`)
          await new Promise((resolve) => setTimeout(resolve, 50))
        }
      const migrate = fake.job('prod', 'migrate')
      expect([migrate?.spec?.ttlSecondsAfterFinished, migrate?.metadata?.annotations?.[TTL_AFTER_ARCHIVE]]).toEqual([1, undefined])
      expect(migrate?.metadata?.annotations?.['job-sweeper.io/logs']).toBe('/archive/prod/migrate/uid-migrate/')
      expect(lines.find((l) => l.startsWith('archived prod/migrate'))).toContain('; ttlSecondsAfterFinished 1 (failed: failure-grace 1s, ')
      // The control: released as ever, its TTL left as it was (none).
      expect(fake.job('prod', 'other')?.spec?.ttlSecondsAfterFinished).toBeUndefined()
      expect(lines.find((l) => l.startsWith('archived prod/other'))).not.toContain('ttlSecondsAfterFinished')
    } finally {
      stop.abort()
      expect(await ran).toBe(0)
    }
  }, 30_000)
})
