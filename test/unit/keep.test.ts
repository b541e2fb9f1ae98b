// The keeper's actions on one Job (src/execute/keep.ts), over a scripted fake of the JobsClient
// methods they use: the finalizer is written on the Job's current version, re-read after a
// conflict, never dropping another controller's finalizer; a give-up records its Event first.
import type { V1Job } from '@kubernetes/client-node'
import type { JobEvent, JobsClient, Precondition } from '../../src/kube/client.ts'
import { toJobRecord, type JobRecord } from '../../src/kube/job-record.ts'
import { archiveJob, giveUp, setHold } from '../../src/execute/keep.ts'
import { SinkError, type LogSink } from '../../src/store/sink.ts'
import { ARCHIVE_ANNOTATION, LOGS_FINALIZER } from '../../src/plan/keeper.ts'
import { newJob } from './jobs.ts'

interface Patch {
  precondition: Precondition
  patch: { metadata?: { finalizers?: string[] } }
}

/** A Job that another controller changes once (adds its finalizer) before the first patch lands. */
function fakeClient(start: V1Job, changeFirst?: (job: V1Job) => V1Job): { client: JobsClient; patches: Patch[]; events: JobEvent[]; job: () => V1Job } {
  let live: V1Job = { ...start, metadata: { ...start.metadata, resourceVersion: '1' } }
  let changed = false
  const patches: Patch[] = []
  const events: JobEvent[] = []
  const client = {
    getJob: async (): Promise<V1Job | undefined> => live,
    patchJob: async (_ns: string, _name: string, precondition: Precondition, patch: Patch['patch']): Promise<JobRecord | 'gone' | 'conflict'> => {
      patches.push({ precondition, patch })
      if (changeFirst && !changed) {
        changed = true
        live = changeFirst(live)
        live = { ...live, metadata: { ...live.metadata, resourceVersion: '2' } }
      }
      if (precondition.resourceVersion !== live.metadata?.resourceVersion) return 'conflict'
      live = {
        ...live,
        metadata: { ...live.metadata, ...patch.metadata, resourceVersion: String(Number(live.metadata?.resourceVersion) + 1) }
      }
      return toJobRecord(live)
    },
    recordEvent: async (_job: JobRecord, event: JobEvent): Promise<void> => void events.push(event)
  } as unknown as JobsClient
  return { client, patches, events, job: () => live }
}

const withVersion = (job: V1Job, resourceVersion: string): JobRecord => toJobRecord({ ...job, metadata: { ...job.metadata, resourceVersion } })

test('hold: the finalizer is added on the version read, after the Job’s own', async () => {
  const job = newJob({ name: 'j', status: 'running', finalizers: ['batch.kubernetes.io/job-tracking'] })
  const { client, patches, job: live } = fakeClient(job)
  expect(await setHold(client, withVersion(job, '1'), true)).toMatchObject({ done: true, changed: true })
  expect(patches).toHaveLength(1)
  expect(patches[0].precondition).toEqual({ uid: 'uid-j', resourceVersion: '1' })
  expect(live().metadata?.finalizers).toEqual(['batch.kubernetes.io/job-tracking', LOGS_FINALIZER])
})

test('release after a conflict: the Job is read again, and the finalizer another controller added meanwhile is kept', async () => {
  const job = newJob({ name: 'j', status: 'failed', finalizers: [LOGS_FINALIZER] })
  const {
    client,
    patches,
    job: live
  } = fakeClient(job, (j) => ({ ...j, metadata: { ...j.metadata, finalizers: [...(j.metadata?.finalizers ?? []), 'example.com/other'] } }))
  expect(await setHold(client, withVersion(job, '1'), false)).toMatchObject({ done: true, changed: true })
  expect(patches.map((p) => [p.precondition.resourceVersion, p.patch.metadata?.finalizers])).toEqual([
    ['1', []],
    ['2', ['example.com/other']]
  ])
  expect(live().metadata?.finalizers).toEqual(['example.com/other'])
})

test('a Job already as wanted is not patched', async () => {
  const job = newJob({ name: 'j', status: 'running', finalizers: [LOGS_FINALIZER] })
  const { client, patches } = fakeClient(job)
  expect(await setHold(client, withVersion(job, '1'), true)).toMatchObject({ done: true, changed: false })
  expect(patches).toEqual([])
})

test('give-up: a Warning Event says what was not saved, then the finalizer goes', async () => {
  const job = newJob({ name: 'j', status: 'terminating', finalizers: [LOGS_FINALIZER] })
  const { client, events, job: live } = fakeClient(job)
  await giveUp(client, withVersion(job, '1'), { action: 'give-up', reason: 'its deletion was asked more than 3600s ago (hold-deadline)' }, 's3://logs/k', [
    "cannot save the log of j-x/main: logs-dir 's3://logs/k': … refused: 403 AccessDenied"
  ])
  expect(events).toEqual([
    {
      type: 'Warning',
      reason: 'LogsNotArchived',
      message:
        "job-sweeper keeper: its logs were not archived to s3://logs/k: cannot save the log of j-x/main: logs-dir 's3://logs/k': … refused: 403 AccessDenied. Released unarchived: its deletion was asked more than 3600s ago (hold-deadline)."
    }
  ])
  expect(live().metadata?.finalizers).toEqual([])
})

/** A sink in memory: what was stored, by key. */
function memorySink(initial: Record<string, string> = {}): { sink: LogSink; objects: Map<string, string>; stored: string[] } {
  const objects = new Map(Object.entries(initial))
  const stored: string[] = []
  const sink: LogSink = {
    where: 's3://logs/k',
    open: async (key) => ({
      write: async (body) => {
        objects.set(key, Buffer.concat((await body.toArray()) as Buffer[]).toString())
        stored.push(key)
      },
      discard: async () => undefined
    }),
    close: async () => undefined
  }
  return { sink, objects, stored }
}

const noPods = (client: JobsClient, lists: unknown[][] = []): void =>
  void Object.assign(client, {
    listPodsOfJob: async (...args: unknown[]) => {
      lists.push(args)
      return []
    }
  })

const at = (): Date => new Date('2026-12-04T12:00:00Z')

const by = { keeper: 'keeper-7f9-1' }
test('archive: the pods are listed no older than the Job as the keeper saw it (from the API server’s cache), job.json is the one object written beside the logs (no record of the attempt), and the finalizer goes with the annotations', async () => {
  const job = newJob({ name: 'j', status: 'succeeded', finalizers: [LOGS_FINALIZER] })
  const { client, job: live } = fakeClient(job)
  const podLists: unknown[][] = []
  noPods(client, podLists)
  const { sink, objects, stored } = memorySink()
  const outcome = await archiveJob(client, sink, withVersion(job, '1'), { maxBytes: 1024, lastLines: 0 }, at, by)
  expect(outcome).toMatchObject({ done: true, changed: true, attempt: 1 })
  expect(podLists).toEqual([['prod', 'uid-j', '1']])
  expect(stored).toEqual(['prod/j/uid-j/job.json'])
  expect(JSON.parse(objects.get('prod/j/uid-j/job.json') ?? '').savedBy).toEqual({
    phase: 'keeper',
    at: '2026-12-04T12:00:00.000Z',
    keeper: 'keeper-7f9-1',
    attempt: 1
  })
  expect(live().metadata?.finalizers).toEqual([])
  expect(live().metadata?.annotations).toMatchObject({ [ARCHIVE_ANNOTATION.where]: 's3://logs/k/prod/j/uid-j/', [ARCHIVE_ANNOTATION.state]: 'complete' })
})

test('archive under the documented policy (put only): the sink is never read, and what an earlier keeper left in the folder stays as it is', async () => {
  const job = newJob({ name: 'j', status: 'failed', finalizers: [LOGS_FINALIZER] })
  const { client } = fakeClient(job)
  noPods(client)
  Object.assign(client, { listWarningEvents: async () => [] })
  const earlier = 'prod/j/uid-j/attempts/2026-12-04T11:00:00.000Z.json'
  const { sink, objects } = memorySink({ [earlier]: '{"uid":"uid-j","keeper":"keeper-killed","attempt":1}' })
  // A store that refuses every read (AWS: 403 for a GET without s3:GetObject, a missing key included): nothing asks it.
  const refusing = Object.assign(sink, {
    read: async () => {
      throw new SinkError("logs-dir 's3://logs/k': cannot read: 403 AccessDenied")
    }
  })
  expect(await archiveJob(client, refusing, withVersion(job, '1'), { maxBytes: 1024, lastLines: 0 }, at, by)).toMatchObject({ done: true, attempt: 1 })
  expect([...objects.keys()].sort()).toEqual([earlier, 'prod/j/uid-j/job.json'])
  expect(JSON.parse(objects.get(earlier) ?? '').keeper).toBe('keeper-killed')
})

test('archive again in the same keeper: job.json names the attempt after its own last one', async () => {
  const job = newJob({ name: 'j', status: 'succeeded', finalizers: [LOGS_FINALIZER] })
  const { client } = fakeClient(job)
  noPods(client)
  const { sink, objects } = memorySink()
  expect(await archiveJob(client, sink, withVersion(job, '1'), { maxBytes: 1024, lastLines: 0 }, at, { ...by, previousAttempt: 1 })).toMatchObject({
    done: true,
    attempt: 2
  })
  expect(JSON.parse(objects.get('prod/j/uid-j/job.json') ?? '').savedBy.attempt).toBe(2)
})

test('archive: a store that refuses job.json fails the attempt (the Job stays held, tried again), saying why', async () => {
  const job = newJob({ name: 'j', status: 'succeeded', finalizers: [LOGS_FINALIZER] })
  const { client, patches } = fakeClient(job)
  noPods(client)
  const { sink } = memorySink()
  const refusing: LogSink = {
    ...sink,
    open: async () => {
      throw new SinkError("logs-dir 's3://logs/k': cannot upload k/prod/j/uid-j/job.json to bucket 'logs': 503 ServiceUnavailable")
    }
  }
  const outcome = await archiveJob(client, refusing, withVersion(job, '1'), { maxBytes: 1024, lastLines: 0 }, at, by)
  expect(outcome).toMatchObject({ done: false, bytes: 0 })
  expect(outcome.failures?.join('\n')).toContain('503 ServiceUnavailable')
  expect(patches).toEqual([])
})

test('archive after logs were saved while their pods were being deleted: job.json lists those of pods gone since beside what it saves now', async () => {
  const job = newJob({ name: 'j', status: 'failed', finalizers: [LOGS_FINALIZER] })
  const { client } = fakeClient(job)
  noPods(client) // the pod that was being deleted is gone: the kubelet removed it once it stopped
  Object.assign(client, { listWarningEvents: async () => [] })
  const { sink, objects } = memorySink()
  const earlier = [{ file: 'prod/j/uid-j/j-x1/main.log', bytes: 24, truncated: false }]
  expect(await archiveJob(client, sink, withVersion(job, '1'), { maxBytes: 1024, lastLines: 0 }, at, by, { files: earlier })).toMatchObject({ done: true })
  const logs = (JSON.parse(objects.get('prod/j/uid-j/job.json') ?? '') as { logs: { file: string }[] }).logs
  expect(logs.map((l) => l.file)).toEqual(['j-x1/main.log']) // relative to the Job's folder
  // Positive control: without them, job.json lists no log.
  const again = memorySink()
  expect(await archiveJob(client, again.sink, withVersion(job, '1'), { maxBytes: 1024, lastLines: 0 }, at, by)).toMatchObject({ done: true })
  expect((JSON.parse(again.objects.get('prod/j/uid-j/job.json') ?? '') as { logs: unknown[] }).logs).toEqual([])
})
