// The keeper's loop (src/keeper.ts runKeeper) over the fake JobsClient and an in-memory store:
// the real informer, Lease, queue and plan, with the client and the sink swapped (options.connect).
import type { V1Job } from '@kubernetes/client-node'
import { runKeeper, STORE_PROBE_KEY, type KeeperClient } from '../../src/keeper.ts'
import { KEEPER_LEASE } from '../../src/kube/lease.ts'
import { realClock } from '../../src/kube/clock.ts'
import { LOGS_FINALIZER } from '../../src/plan/keeper.ts'
import { SinkError, type LogSink } from '../../src/store/sink.ts'
import { FakeJobsClient } from '../fake/jobs-client.ts'
import { keeperSettings } from '../fake/keeper-settings.ts'
import { newJob } from './jobs.ts'
import { running } from './pods.ts'

const settings = keeperSettings()

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

test('a follow of a terminating pod whose log the store refuses once (503) is tried again, and the log is stored whole', async () => {
  const fake = new FakeJobsClient(realClock)
  const client = Object.assign(fake, { close: async () => undefined }) as KeeperClient
  const shape = newJob({ name: 'migrate', status: 'running', labels: { 'job-sweeper.io/managed': 'true' }, finalizers: [LOGS_FINALIZER] })
  // A held Job still running, one of its pods being deleted (an eviction): the keeper saves what it wrote so far.
  const job: V1Job = fake.create({ ...shape, status: { active: 1, terminating: 1 } })
  fake.addPod(
    job,
    { ...running(30), metadata: { ...running(30).metadata, name: 'migrate-abc', deletionTimestamp: new Date() } },
    { migrate: 'step 1\nstep 2\n' }
  )
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
    // Followed while the kubelet stops it: it writes its last line, then its container ends.
    await within(
      until(
        () => fake.openFollows,
        (n) => n === 1
      ),
      15_000,
      () => `the pod followed; keeper said: ${lines.join(' | ')}`
    )
    fake.appendLog('prod', 'migrate-abc', 'migrate', 'step 3: interrupted\n')
    fake.endLog('prod', 'migrate-abc', 'migrate')
    const text = await within(
      store.stored('prod/migrate/uid-migrate/migrate-abc/migrate.log'),
      15_000,
      () => `the log stored after its refusal; keeper said: ${lines.join(' | ')}`
    )
    expect(text).toBe('step 1\nstep 2\nstep 3: interrupted\n')
    expect(store.refused).toEqual(['prod/migrate/uid-migrate/migrate-abc/migrate.log'])
    expect(
      lines.some((l) => l.includes('cannot follow the log of migrate-abc/migrate to its end') && l.includes('503 SlowDown') && l.endsWith('trying again'))
    ).toBe(true)
    expect(fake.callsOf('followLog').filter(([log]) => log === 'prod/migrate-abc/migrate')).toHaveLength(2)
    expect(fake.callsOf('followLog').filter(([log]) => log === 'prod/other-abc/migrate')).toEqual([])
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
    // The work queue's, as client-go's: each Job added, waited, worked on (2 holds… at least the 2 archives).
    const count = (name: string): number => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(metrics)?.[1] ?? -1)
    expect(count('job_sweeper_keeper_workqueue_adds_total')).toBeGreaterThanOrEqual(2)
    expect(count('job_sweeper_keeper_workqueue_queue_duration_seconds_count')).toBe(count('job_sweeper_keeper_workqueue_adds_total'))
    expect(count('job_sweeper_keeper_workqueue_work_duration_seconds_count')).toBe(count('job_sweeper_keeper_workqueue_adds_total'))
    expect(metrics).toMatch(/^job_sweeper_keeper_workqueue_work_duration_seconds_bucket\{le="1000"\} \d+$/m)
    expect(count('job_sweeper_keeper_workqueue_depth')).toBe(0)
    expect(count('job_sweeper_keeper_workqueue_retries_total')).toBe(0)
  } finally {
    stop.abort()
    expect(await ran).toBe(0)
  }
}, 30_000)

/** A failed, held Job with one failed pod whose log is `log`. */
function failedWithPod(fake: FakeJobsClient, name: string, log: string, labels: Record<string, string> = { 'job-sweeper.io/managed': 'true' }): V1Job {
  const shape = newJob({ name, status: 'failed', labels, finalizers: [LOGS_FINALIZER] })
  const job = fake.create({ ...shape, status: { ...shape.status, failed: 1 } })
  const ended = running(30)
  fake.addPod(job, { ...ended, metadata: { ...ended.metadata, name: `${name}-abc` }, status: { ...ended.status, phase: 'Failed' } }, { migrate: log })
  return job
}

test('SIGTERM: no new work, an archive in progress finishes, one that cannot is left after --shutdown-grace; the Lease is released, exit 0', async () => {
  const fake = new FakeJobsClient(realClock)
  const client = Object.assign(fake, { close: async () => undefined }) as KeeperClient
  failedWithPod(fake, 'slow', 'slow\n')
  failedWithPod(fake, 'stuck', 'stuck\n')
  // A decoy outside the selector: never worked on.
  failedWithPod(fake, 'other', 'other\n', { app: 'other' })
  const store = memoryStore(() => undefined)
  // The two logs' writes wait: slow's until the test lets it go (after SIGTERM), stuck's past the
  // keeper's stop (then let go, so that the fake's log stream ends).
  const started = new Set<string>()
  let finishSlow: () => void = () => undefined
  const slowGate = new Promise<void>((resolve) => (finishSlow = resolve))
  let finishStuck: () => void = () => undefined
  const stuckGate = new Promise<void>((resolve) => (finishStuck = resolve))
  const sink: LogSink = {
    ...store.sink,
    open: async (key, type) => {
      const object = await store.sink.open(key, type)
      if (!key.endsWith('/migrate.log')) return object
      return {
        ...object,
        write: async (body) => {
          started.add(key)
          await (key.includes('/slow/') ? slowGate : stuckGate)
          await object.write(body)
        }
      }
    }
  }
  const lines: string[] = []
  const stop = new AbortController()
  const ran = runKeeper(
    { ...settings, shutdownGraceSeconds: 2 },
    { log: (line) => lines.push(line), signal: stop.signal, mask: () => undefined, connect: () => ({ client, sink }) }
  )
  await within(
    until(
      () => started.size,
      (n) => n === 2
    ),
    15_000,
    () => `both archives started; keeper said: ${lines.join(' | ')}`
  )
  expect(fake.lease('prod', KEEPER_LEASE)?.spec?.holderIdentity).toBeTruthy()
  const sigterm = Date.now()
  stop.abort()
  setTimeout(finishSlow, 300)
  expect(await within(ran, 8_000, () => `the keeper to stop; it said: ${lines.join(' | ')}`)).toBe(0)
  const took = Date.now() - sigterm
  expect(took).toBeGreaterThanOrEqual(2_000 - 50)
  expect(took).toBeLessThan(4_000)
  const state = (name: string): string | undefined => fake.job('prod', name)?.metadata?.annotations?.['job-sweeper.io/logs-state']
  expect(state('slow')).toBe('complete')
  expect(JSON.parse(await store.stored('prod/slow/uid-slow/job.json'))).toMatchObject({ state: 'complete' })
  expect(state('stuck')).toBeUndefined()
  expect(fake.job('prod', 'stuck')?.metadata?.finalizers).toEqual([LOGS_FINALIZER])
  expect(lines).toContain('keeper: stopping: 2 Job(s) being worked on, waiting up to --shutdown-grace 2s')
  expect(lines).toContain('keeper: stopping: 1 Job(s) still being worked on after --shutdown-grace 2s, left to the next leader')
  expect(fake.lease('prod', KEEPER_LEASE)).toBeUndefined()
  expect(fake.job('prod', 'other')?.metadata?.finalizers).toEqual([LOGS_FINALIZER])
  expect(fake.callsOf('saveLog').filter(([log]) => String(log).startsWith('prod/other-'))).toEqual([])
  finishStuck()
}, 30_000)

test('/readyz: 503 naming the store while it refuses the probe write, 200 once it takes it (tried again every 10 s)', async () => {
  const fake = new FakeJobsClient(realClock)
  const client = Object.assign(fake, { close: async () => undefined }) as KeeperClient
  // A decoy: a held Job still running: not archived, kept held.
  fake.create(newJob({ name: 'running', status: 'running', labels: { 'job-sweeper.io/managed': 'true' }, finalizers: [LOGS_FINALIZER] }))
  let refusing = true
  const store = memoryStore((key) => (key === STORE_PROBE_KEY && refusing ? '403 AccessDenied: not allowed on bucket logs' : undefined))
  const lines: string[] = []
  let address = ''
  const stop = new AbortController()
  const ran = runKeeper(settings, {
    log: (line) => lines.push(line),
    signal: stop.signal,
    mask: () => undefined,
    serving: (a) => (address = a),
    connect: () => ({ client, sink: store.sink })
  })
  const readyz = async (): Promise<string> => {
    const res = await fetch(`http://${address}/readyz`)
    return `${res.status} ${await res.text()}`
  }
  try {
    await within(
      until(
        () => store.refused.length,
        (n) => n > 0
      ),
      15_000,
      () => `the probe refused; keeper said: ${lines.join(' | ')}`
    )
    // Leading and synced, the store still refusing: not ready, saying why.
    await within(
      until(
        () => fake.lease('prod', KEEPER_LEASE),
        (l) => l !== undefined
      ),
      15_000,
      () => 'the Lease taken'
    )
    expect(await readyz()).toBe(`503 logs-dir /archive: cannot be written: cannot write ${STORE_PROBE_KEY}: 403 AccessDenied: not allowed on bucket logs\n`)
    expect(lines).toContain(
      `keeper: not ready: logs-dir /archive cannot be written: cannot write ${STORE_PROBE_KEY}: 403 AccessDenied: not allowed on bucket logs (${STORE_PROBE_KEY}); trying again every 10s`
    )
    refusing = false
    expect(JSON.parse(await within(store.stored(STORE_PROBE_KEY), 15_000, () => 'the probe taken on its retry'))).toMatchObject({ keeper: expect.any(String) })
    // Ready at the next answer (the probe's write was the last thing it waited for).
    expect(await readyz()).toBe('200 ok: leader\n')
    expect(lines).toContain('keeper: logs-dir /archive takes writes now')
    expect(fake.job('prod', 'running')?.metadata?.finalizers).toEqual([LOGS_FINALIZER])
    expect(fake.job('prod', 'running')?.metadata?.annotations?.['job-sweeper.io/logs-state']).toBeUndefined()
  } finally {
    stop.abort()
    expect(await ran).toBe(0)
  }
}, 40_000)

/** A held Job running (one pod active), as post and the keeper leave it. */
const heldRunning = (fake: FakeJobsClient, name: string): V1Job =>
  fake.create({ ...newJob({ name, status: 'running', labels: { 'job-sweeper.io/managed': 'true' }, finalizers: [LOGS_FINALIZER] }), status: { active: 1 } })

/** Starts the keeper's loop over `fake` and an in-memory store; resolves once it leads. `stop()` stops it and resolves with its exit code. */
async function leadingKeeper(
  fake: FakeJobsClient
): Promise<{ store: ReturnType<typeof memoryStore>; lines: string[]; said: () => string; stop: () => Promise<number> }> {
  const client = Object.assign(fake, { close: async () => undefined }) as KeeperClient
  const store = memoryStore(() => undefined)
  const signal = new AbortController()
  const lines: string[] = []
  const ran = runKeeper(settings, {
    log: (line) => lines.push(line),
    signal: signal.signal,
    mask: () => undefined,
    connect: () => ({ client, sink: store.sink })
  })
  const said = (): string => `keeper said: ${lines.join(' | ')}`
  await within(
    until(
      () => lines.join('\n'),
      (l) => l.includes('keeper: leading')
    ),
    15_000,
    said
  )
  return {
    store,
    lines,
    said,
    stop: () => {
      signal.abort()
      return ran
    }
  }
}

test('a retried Job (backoffLimit 2): each failed attempt is saved as it ends, so attempts deleted by hand before the Job ends are in its archive, `complete`; each log read once', async () => {
  const fake = new FakeJobsClient(realClock)
  const job = heldRunning(fake, 'migrate')
  const attempt = (name: string): void =>
    fake.addPod(job, { ...running(30), metadata: { ...running(30).metadata, name } }, { migrate: `${name}: applying 0042\n` })
  /** The attempt's pod fails, as the kubelet writes it; the Job controller counts it and starts the next one (or marks the Job failed). */
  const fails = (name: string, failed: number, next?: string): void => {
    fake.updatePod('prod', name, (pod) => (pod.status = { ...pod.status, phase: 'Failed' }))
    if (next) attempt(next)
    fake.update('prod', 'migrate', (j) => (j.status = { ...j.status, failed, active: next ? 1 : 0 }))
  }
  attempt('migrate-a1')
  // A decoy: held, running, its pod running: nothing of it is read before it ends.
  const decoy = heldRunning(fake, 'other')
  fake.addPod(decoy, { ...running(30), metadata: { ...running(30).metadata, name: 'other-a1' } }, { migrate: 'other\n' })

  const { store, said, stop } = await leadingKeeper(fake)
  try {
    fails('migrate-a1', 1, 'migrate-a2')
    expect(await within(store.stored('prod/migrate/uid-migrate/migrate-a1/migrate.log'), 15_000, said)).toBe('migrate-a1: applying 0042\n')
    fake.removePod('prod', 'migrate-a1') // kubectl delete pod, once it was saved
    fails('migrate-a2', 2, 'migrate-a3')
    expect(await within(store.stored('prod/migrate/uid-migrate/migrate-a2/migrate.log'), 15_000, said)).toBe('migrate-a2: applying 0042\n')
    fake.removePod('prod', 'migrate-a2')
    fails('migrate-a3', 3)
    fake.finish('prod', 'migrate', 'Failed')
    fake.update('prod', 'migrate', (j) => (j.status = { ...j.status, failed: 3 }))
    const state = await within(
      until(
        () => fake.job('prod', 'migrate')?.metadata?.annotations?.['job-sweeper.io/logs-state'],
        (s) => s !== undefined
      ),
      15_000,
      said
    )
    expect(state).toBe('complete')
    const file = JSON.parse(await store.stored('prod/migrate/uid-migrate/job.json')) as { state: string; logs: { file: string }[] }
    expect([file.state, file.logs.map((l) => l.file).sort()]).toEqual([
      'complete',
      ['migrate-a1/migrate.log', 'migrate-a2/migrate.log', 'migrate-a3/migrate.log']
    ])
    // Each attempt's log read once: an ended pod saved whole is not read again at the Job's end.
    expect(
      fake
        .callsOf('saveLog')
        .filter(([log]) => String(log).startsWith('prod/migrate-'))
        .map(([log]) => log)
    ).toEqual(['prod/migrate-a1/migrate', 'prod/migrate-a2/migrate', 'prod/migrate-a3/migrate'])
    expect(fake.callsOf('saveLog').filter(([log]) => String(log).startsWith('prod/other-'))).toEqual([])
    expect(fake.job('prod', 'other')?.metadata?.finalizers).toEqual([LOGS_FINALIZER])
  } finally {
    expect(await stop()).toBe(0)
  }
}, 60_000)

test('kubectl delete (background) of a held Job still running: the keeper deletes its pod (nothing else would while it is held), follows its log to its end, and archives the lines written after SIGTERM before it lets go', async () => {
  const fake = new FakeJobsClient(realClock)
  const job = heldRunning(fake, 'migrate')
  fake.addPod(job, { ...running(30), metadata: { ...running(30).metadata, name: 'migrate-a1', uid: 'uid-pod-a1' } }, { migrate: 'migrate: applying 0042\n' })
  // A decoy: held, running, not deleted: its pod is neither deleted nor followed.
  const decoy = heldRunning(fake, 'other')
  fake.addPod(decoy, { ...running(30), metadata: { ...running(30).metadata, name: 'other-a1', uid: 'uid-pod-o1' } }, { migrate: 'other\n' })

  const { store, lines, said, stop } = await leadingKeeper(fake)
  try {
    fake.remove('prod', 'migrate') // kubectl delete job migrate: held, so it stays, being deleted
    await within(
      until(
        () => fake.openFollows,
        (n) => n === 1
      ),
      15_000,
      said
    )
    expect(fake.callsOf('deletePod')).toEqual([['prod/migrate-a1', 'uid-pod-a1']])
    expect(lines.some((l) => l.startsWith("stopping prod/migrate's pods (its deletion was asked while they ran; deleted migrate-a1)"))).toBe(true)
    expect(fake.job('prod', 'migrate')?.metadata?.finalizers).toEqual([LOGS_FINALIZER]) // held while its pod stops
    // The container, stopped by the kubelet: it rolls back, then ends.
    fake.appendLog('prod', 'migrate-a1', 'migrate', 'migrate: interrupted, rolling back\n')
    fake.endLog('prod', 'migrate-a1', 'migrate')
    fake.updatePod('prod', 'migrate-a1', (pod) => (pod.status = { ...pod.status, phase: 'Failed' }))
    const file = JSON.parse(await within(store.stored('prod/migrate/uid-migrate/job.json'), 15_000, said)) as { state: string; logs: { file: string }[] }
    expect([file.state, file.logs.map((l) => l.file)]).toEqual(['complete', ['migrate-a1/migrate.log']])
    expect(await store.stored('prod/migrate/uid-migrate/migrate-a1/migrate.log')).toBe('migrate: applying 0042\nmigrate: interrupted, rolling back\n')
    await within(
      until(
        () => fake.job('prod', 'migrate'),
        (j) => j === undefined
      ),
      15_000,
      said
    ) // let go: the deletion completes
    expect(lines.some((l) => l === "followed prod/migrate's migrate-a1/migrate to its end: 58 bytes")).toBe(true)
    expect(fake.callsOf('deletePod').filter(([pod]) => String(pod).startsWith('prod/other-'))).toEqual([])
    expect(fake.callsOf('followLog').filter(([pod]) => String(pod).startsWith('prod/other-'))).toEqual([])
    expect(fake.job('prod', 'other')?.metadata?.finalizers).toEqual([LOGS_FINALIZER])
  } finally {
    expect(await stop()).toBe(0)
  }
}, 60_000)

test('a pod stopped by the keeper that is gone while its log stream stays open (a lost node; kwok): the follow ends 5 s later keeping what came, and the archive says `incomplete`, its end not seen', async () => {
  const fake = new FakeJobsClient(realClock)
  const job = heldRunning(fake, 'migrate')
  fake.addPod(job, { ...running(30), metadata: { ...running(30).metadata, name: 'migrate-a1', uid: 'uid-pod-a1' } }, { migrate: 'migrate: applying 0042\n' })
  const { store, said, stop } = await leadingKeeper(fake)
  try {
    fake.remove('prod', 'migrate')
    await within(
      until(
        () => fake.openFollows,
        (n) => n === 1
      ),
      15_000,
      said
    )
    const gone = Date.now()
    fake.removePod('prod', 'migrate-a1') // gone, its stream still open
    const file = JSON.parse(await within(store.stored('prod/migrate/uid-migrate/job.json'), 30_000, said)) as {
      state: string
      missing: { reason: string; what: string }[]
    }
    expect(Date.now() - gone).toBeGreaterThanOrEqual(5_000)
    expect(file.state).toBe('incomplete')
    expect(file.missing).toEqual([
      { reason: 'read-failed', what: 'migrate-a1/migrate.log: followed until its pod was gone or its grace period passed, its end not seen' }
    ])
    expect(await store.stored('prod/migrate/uid-migrate/migrate-a1/migrate.log')).toBe('migrate: applying 0042\n')
    await within(
      until(
        () => fake.job('prod', 'migrate'),
        (j) => j === undefined
      ),
      15_000,
      said
    )
    expect(fake.openFollows).toBe(0)
  } finally {
    expect(await stop()).toBe(0)
  }
}, 60_000)

/** A held, running Job whose pod's container restarts in place (restartPolicy OnFailure), its first run `id(1)` writing `run 1`. */
function restartingJob(fake: FakeJobsClient, name: string): V1Job {
  const shape = newJob({ name, status: 'running', labels: { 'job-sweeper.io/managed': 'true' }, finalizers: [LOGS_FINALIZER] })
  const job = fake.create({ ...shape, spec: { template: { spec: { restartPolicy: 'OnFailure', containers: [{ name: 'migrate', image: 'x' }] } } } })
  const pod = running(30)
  const [status] = pod.status?.containerStatuses ?? []
  fake.addPod(
    job,
    {
      ...pod,
      metadata: { ...pod.metadata, name: `${name}-abc` },
      status: { ...pod.status, containerStatuses: [{ ...status, containerID: `containerd://${runOf(1)}` }] }
    },
    { migrate: 'run 1\n' }
  )
  return job
}
/** The container ID of run `n`: its first 12 characters are its run file's (run1000000000…). */
const runOf = (n: number): string => `run${n}`.padEnd(64, '0')

/** The Job's pod ended (Succeeded, its last run `n`) and the Job completed. */
function succeed(fake: FakeJobsClient, name: string, n: number): void {
  fake.updatePod('prod', `${name}-abc`, (p) => {
    const [status] = p.status?.containerStatuses ?? []
    status.state = { terminated: { exitCode: 0, reason: 'Completed', containerID: `containerd://${runOf(n)}` } }
    p.status = { ...p.status, phase: 'Succeeded' }
  })
  fake.update('prod', name, (job) => {
    job.status = { succeeded: 1, conditions: [{ type: 'Complete', status: 'True', lastTransitionTime: new Date() }], completionTime: new Date() }
  })
}

test('a Job whose container restarts in place (OnFailure) three times: each run saved as it ended, confirmed by a second list, and its archive `complete` with all four runs', async () => {
  const fake = new FakeJobsClient(realClock)
  const client = Object.assign(fake, { close: async () => undefined }) as KeeperClient
  restartingJob(fake, 'migrate')
  // A decoy: a held Job running whose pods restart by being replaced (restartPolicy Never): never looked at.
  const decoy = fake.create(newJob({ name: 'other', status: 'running', labels: { 'job-sweeper.io/managed': 'true' }, finalizers: [LOGS_FINALIZER] }))
  fake.addPod(decoy, { ...running(30), metadata: { ...running(30).metadata, name: 'other-abc' } }, { migrate: 'other\n' })
  const store = memoryStore(() => undefined)
  const lines: string[] = []
  const stop = new AbortController()
  const ran = runKeeper(settings, {
    log: (line) => lines.push(line),
    signal: stop.signal,
    mask: () => undefined,
    connect: () => ({ client, sink: store.sink })
  })
  const said = (): string => `keeper said: ${lines.join(' | ')}`
  const file = (n: number): string => `prod/migrate/uid-migrate/migrate-abc/migrate.run-${runOf(n).slice(0, 12)}.log`
  try {
    for (const n of [1, 2, 3]) {
      fake.restartContainer('prod', 'migrate-abc', 'migrate', runOf(n), runOf(n + 1), `run ${n + 1}\n`)
      // Saved while it is the previous run, and counted once a second list confirms no other run ended meanwhile.
      expect(await within(store.stored(file(n)), 15_000, said)).toBe(`run ${n}\n`)
      await within(
        until(
          () => lines,
          (l) => l.some((line) => line.startsWith(`saved prod/migrate's migrate-abc/migrate run ${runOf(n).slice(0, 12)} as it ended`))
        ),
        15_000,
        said
      )
    }
    succeed(fake, 'migrate', 4)
    const job = JSON.parse(await within(store.stored('prod/migrate/uid-migrate/job.json'), 20_000, said)) as {
      state: string
      logs: { file: string }[]
    }
    expect(job.state).toBe('complete')
    expect(job.logs.map((l) => l.file).sort()).toEqual(
      ['migrate-abc/migrate.log', ...[1, 2, 3].map((n) => `migrate-abc/migrate.run-${runOf(n).slice(0, 12)}.log`)].sort()
    )
    expect(await store.stored('prod/migrate/uid-migrate/migrate-abc/migrate.log')).toBe('run 4\n')
    // The previous run (3) was saved as it ended: the archive does not read it again.
    expect(fake.callsOf('saveLog').filter(([log, previous]) => log === 'prod/migrate-abc/migrate' && previous === true)).toHaveLength(3)
    expect(fake.job('prod', 'migrate')?.metadata?.annotations?.['job-sweeper.io/logs-state']).toBe('complete')
    // The decoy: its pod never listed by the look, nothing read, still held.
    expect(fake.callsOf('listPodsOfJobs').some(([, uids]) => (uids as string[]).includes('uid-other'))).toBe(false)
    expect(fake.callsOf('saveLog').filter(([log]) => log === 'prod/other-abc/migrate')).toEqual([])
    expect(fake.job('prod', 'other')?.metadata?.finalizers).toEqual([LOGS_FINALIZER])
  } finally {
    stop.abort()
    expect(await ran).toBe(0)
  }
}, 90_000)

test('a run read as the previous one while the next run ended too is not counted: the archive says `incomplete` (run-gone), never `complete`', async () => {
  const fake = new FakeJobsClient(realClock)
  const client = Object.assign(fake, { close: async () => undefined }) as KeeperClient
  restartingJob(fake, 'migrate')
  const store = memoryStore(() => undefined)
  const lines: string[] = []
  const stop = new AbortController()
  // The next run ends while the keeper reads run 1 (the kubelet then serves run 2 as the previous run).
  let once = true
  fake.every('saveLog', async (proceed) => {
    if (once) {
      once = false
      fake.restartContainer('prod', 'migrate-abc', 'migrate', runOf(2), runOf(3), 'run 3\n')
    }
    return proceed()
  })
  const ran = runKeeper(settings, {
    log: (line) => lines.push(line),
    signal: stop.signal,
    mask: () => undefined,
    connect: () => ({ client, sink: store.sink })
  })
  const said = (): string => `keeper said: ${lines.join(' | ')}`
  try {
    fake.restartContainer('prod', 'migrate-abc', 'migrate', runOf(1), runOf(2), 'run 2\n')
    await within(
      until(
        () => lines,
        (l) => l.some((line) => line.includes(`migrate-abc/migrate run ${runOf(1).slice(0, 12)}: another run ended while it was read`))
      ),
      20_000,
      said
    )
    // Run 2, now the previous run, is saved as it ended and confirmed: the positive control.
    await within(
      until(
        () => lines,
        (l) => l.some((line) => line.startsWith(`saved prod/migrate's migrate-abc/migrate run ${runOf(2).slice(0, 12)} as it ended`))
      ),
      20_000,
      said
    )
    succeed(fake, 'migrate', 3)
    await within(
      until(
        () => fake.job('prod', 'migrate')?.metadata?.annotations?.['job-sweeper.io/logs-state'],
        (s) => s !== undefined
      ),
      20_000,
      said
    )
    expect(fake.job('prod', 'migrate')?.metadata?.annotations?.['job-sweeper.io/logs-state']).toBe('incomplete: 1 container run(s) the node no longer kept')
    expect(fake.events.filter((e) => e.includes('LogsIncomplete'))).toHaveLength(1)
  } finally {
    stop.abort()
    expect(await ran).toBe(0)
  }
}, 90_000)
