// The keeper's loop (src/keeper.ts runKeeper) over the fake JobsClient and an in-memory store:
// the real informer, Lease, queue and plan, with the client and the sink swapped (options.connect).
import type { V1Job } from '@kubernetes/client-node'
import { runKeeper, type KeeperClient } from '../../src/keeper.ts'
import { realClock } from '../../src/kube/clock.ts'
import { LOGS_FINALIZER } from '../../src/plan/keeper.ts'
import { KEEPER_DEFAULT_SELECTOR, type KeeperSettings } from '../../src/settings/keeper.ts'
import { SinkError, type LogSink } from '../../src/store/sink.ts'
import { FakeJobsClient } from '../fake/jobs-client.ts'
import { newJob } from './jobs.ts'
import { running } from './pods.ts'

const settings: KeeperSettings = {
  namespaces: ['prod'],
  allNamespaces: false,
  selector: KEEPER_DEFAULT_SELECTOR,
  logsTarget: { kind: 'dir', dir: '/archive' },
  holdDeadlineSeconds: 3600,
  maxLogBytes: 1_000_000,
  concurrency: 2,
  leaseNamespace: 'prod',
  listen: { host: '127.0.0.1', port: 0 },
  letGo: false
}

/** An in-memory store whose writes `refuse` (by key) may refuse; `stored(key)` resolves once `key` is stored. */
function memoryStore(refuse: (key: string) => string | undefined): { sink: LogSink; refused: string[]; stored: (key: string) => Promise<string> } {
  const objects = new Map<string, string>()
  const waiting = new Map<string, (text: string) => void>()
  const refused: string[] = []
  const sink: LogSink = {
    where: '/archive',
    open: async (key) => ({
      write: async (body) => {
        const text = Buffer.concat((await body.toArray()) as Buffer[]).toString()
        const why = refuse(key)
        if (why !== undefined) {
          refused.push(key)
          throw new SinkError(`cannot write ${key}: ${why}`)
        }
        objects.set(key, text)
        waiting.get(key)?.(text)
      },
      discard: async () => undefined
    }),
    close: async () => undefined
  }
  const stored = (key: string): Promise<string> =>
    objects.has(key) ? Promise.resolve(objects.get(key) ?? '') : new Promise((resolve) => waiting.set(key, resolve))
  return { sink, refused, stored }
}

/** `promise`, or a rejection saying `what()` after `ms`. */
function within<T>(promise: Promise<T>, ms: number, what: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`not within ${ms} ms: ${what()}`)), ms)))
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}

test('a save of a terminating pod the store refuses once (503) is tried again, and the log is stored', async () => {
  const fake = new FakeJobsClient(realClock)
  const client = Object.assign(fake, { close: async () => undefined }) as KeeperClient
  const shape = newJob({ name: 'migrate', status: 'running', labels: { 'job-sweeper.io/managed': 'true' }, finalizers: [LOGS_FINALIZER] })
  // A held Job still running, one of its pods being deleted (an eviction): the keeper saves what it wrote so far.
  const job: V1Job = fake.create({ ...shape, status: { active: 1, terminating: 1 } })
  fake.addPod(job, { ...running(30), metadata: { ...running(30).metadata, name: 'migrate-abc' } }, { migrate: 'step 1\nstep 2\n' })
  // A decoy: a held Job running, nothing terminating: nothing of it is saved.
  const decoy = fake.create(newJob({ name: 'other', status: 'running', labels: { 'job-sweeper.io/managed': 'true' }, finalizers: [LOGS_FINALIZER] }))
  fake.addPod(decoy, { ...running(30), metadata: { ...running(30).metadata, name: 'other-abc' } }, { migrate: 'other\n' })

  let refusals = 0
  const store = memoryStore((key) => (key.endsWith('/migrate.log') && refusals++ === 0 ? '503 SlowDown: please reduce your request rate' : undefined))
  const lines: string[] = []
  const stop = new AbortController()
  const ran = runKeeper(settings, {
    log: (line) => lines.push(line),
    signal: stop.signal,
    mask: () => undefined,
    connect: () => ({ client, sink: store.sink })
  })
  try {
    const text = await within(
      store.stored('prod/migrate/uid-migrate/migrate-abc/migrate.log'),
      15_000,
      () => `the log stored after its refusal; keeper said: ${lines.join(' | ')}`
    )
    expect(text).toBe('step 1\nstep 2\n')
    expect(store.refused).toEqual(['prod/migrate/uid-migrate/migrate-abc/migrate.log'])
    expect(lines.some((l) => l.includes('not saved, trying again') && l.includes('503 SlowDown'))).toBe(true)
    expect(fake.callsOf('saveLog').filter(([log]) => log === 'prod/migrate-abc/migrate')).toHaveLength(2)
    expect(fake.callsOf('saveLog').filter(([log]) => log === 'prod/other-abc/migrate')).toEqual([])
    expect(fake.job('prod', 'other')?.metadata?.finalizers).toEqual([LOGS_FINALIZER])
  } finally {
    stop.abort()
    expect(await ran).toBe(0)
  }
}, 30_000)

/** Resolves with `read()` once `ok` holds (checked every 50 ms). */
async function until<T>(read: () => T, ok: (value: T) => boolean): Promise<T> {
  for (;;) {
    const value = read()
    if (ok(value)) return value
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

test('a failed Job whose pod was gone before any archive: archived `incomplete` (job.json, the annotation, a LogsIncomplete Warning Event, the metric); one with its pod there: `complete`', async () => {
  const fake = new FakeJobsClient(realClock)
  const client = Object.assign(fake, { close: async () => undefined }) as KeeperClient
  const managed = { 'job-sweeper.io/managed': 'true' }
  const failed = (name: string): V1Job => {
    const shape = newJob({ name, status: 'failed', labels: managed, finalizers: [LOGS_FINALIZER] })
    return { ...shape, status: { ...shape.status, failed: 1 } }
  }
  // Its one failed pod is gone (deleted by hand, or by the garbage collector): no pod to list.
  fake.create(failed('lost'))
  // The positive control: its failed pod is there, its log read.
  const kept = fake.create(failed('kept'))
  const ended = running(30)
  fake.addPod(kept, { ...ended, metadata: { ...ended.metadata, name: 'kept-abc' }, status: { ...ended.status, phase: 'Failed' } }, { migrate: 'boom\n' })

  const store = memoryStore(() => undefined)
  const stop = new AbortController()
  let address = ''
  const lines: string[] = []
  const ran = runKeeper(settings, {
    log: (line) => lines.push(line),
    signal: stop.signal,
    mask: () => undefined,
    serving: (a) => (address = a),
    connect: () => ({ client, sink: store.sink })
  })
  try {
    const state = (name: string) => (): string | undefined => fake.job('prod', name)?.metadata?.annotations?.['job-sweeper.io/logs-state']
    const lost = await within(
      until(state('lost'), (s) => s !== undefined),
      15_000,
      () => `lost archived; keeper said: ${lines.join(' | ')}`
    )
    expect(lost).toBe('incomplete: 1 pod(s) gone before their logs were read')
    expect(
      await within(
        until(state('kept'), (s) => s !== undefined),
        15_000,
        () => 'kept archived'
      )
    ).toBe('complete')
    const lostFile = JSON.parse(await store.stored('prod/lost/uid-lost/job.json'))
    expect(lostFile).toMatchObject({
      state: 'incomplete',
      missing: [{ reason: 'pod-gone', what: '1 of its 1 ended pod(s): gone before their logs were read (deleted, or garbage-collected)' }],
      logs: []
    })
    expect(JSON.parse(await store.stored('prod/kept/uid-kept/job.json'))).toMatchObject({
      state: 'complete',
      missing: [],
      logs: [{ file: 'kept-abc/migrate.log' }]
    })
    expect(fake.events.filter((e) => e.includes('LogsIncomplete'))).toEqual([
      'prod/lost LogsIncomplete: job-sweeper keeper: its archive at /archive/prod/lost/uid-lost/ is incomplete: pod-gone: 1 of its 1 ended pod(s): gone before their logs were read (deleted, or garbage-collected)'
    ])
    const metrics = await (await fetch(`http://${address}/metrics`)).text()
    expect(metrics).toMatch(/^job_sweeper_keeper_archives_incomplete_total\{reason="pod_gone"\} 1$/m)
    expect(metrics).toMatch(/^job_sweeper_keeper_jobs_archived_total 2$/m)
  } finally {
    stop.abort()
    expect(await ran).toBe(0)
  }
}, 30_000)
