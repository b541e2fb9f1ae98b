// The fake client (test/fake/jobs-client.ts) keeps the promises its header makes, as the API server
// does: a merge patch with a stale resourceVersion is a 409 ('conflict'), the Job unchanged; and
// the keeper's finalizer writes, which carry the version they read, re-read the Job on that conflict
// so that another controller's finalizer added meanwhile is not dropped.
import { setHold } from '../../src/execute/keep.ts'
import { toJobRecord } from '../../src/kube/job-record.ts'
import { LOGS_FINALIZER } from '../../src/plan/keeper.ts'
import { FakeClock } from '../fake/clock.ts'
import { FakeJobsClient } from '../fake/jobs-client.ts'
import { newJob, NOW } from './jobs.ts'

const fresh = (): { client: FakeJobsClient; uid: string; version: string } => {
  const client = new FakeJobsClient(new FakeClock(NOW))
  const job = client.create(newJob({ name: 'app-migrate', status: 'failed' }))
  return { client, uid: job.metadata?.uid ?? '', version: job.metadata?.resourceVersion ?? '' }
}

test('patchJob: the current resourceVersion applies; a stale one is a conflict and changes nothing; none given is not checked', async () => {
  const { client, uid, version } = fresh()
  const patched = await client.patchJob('prod', 'app-migrate', { uid, resourceVersion: version }, { metadata: { annotations: { a: '1' } } })
  expect(patched).not.toBe('conflict')
  const now = client.job('prod', 'app-migrate')
  expect(now?.metadata?.annotations).toMatchObject({ a: '1' })
  expect(now?.metadata?.resourceVersion).not.toBe(version)

  expect(await client.patchJob('prod', 'app-migrate', { uid, resourceVersion: version }, { metadata: { annotations: { a: '2' } } })).toBe('conflict')
  expect(client.job('prod', 'app-migrate')).toEqual(now) // nothing written, the version as it was

  expect(await client.patchJob('prod', 'app-migrate', { uid }, { metadata: { annotations: { a: '3' } } })).not.toBe('conflict')
  expect(client.job('prod', 'app-migrate')?.metadata?.annotations).toMatchObject({ a: '3' })
  // The uid precondition as before: another Job of the name is a conflict whatever the version.
  expect(await client.patchJob('prod', 'app-migrate', { uid: 'another' }, { metadata: { annotations: { a: '4' } } })).toBe('conflict')
  expect(await client.patchJob('prod', 'gone', { uid }, {})).toBe('gone')
})

test('a strategic patch with a stale resourceVersion is a conflict too', async () => {
  const { client, uid, version } = fresh()
  client.update('prod', 'app-migrate', (j) => (j.metadata = { ...j.metadata, labels: { moved: 'on' } }))
  expect(await client.patchJob('prod', 'app-migrate', { uid, resourceVersion: version }, { metadata: { finalizers: [LOGS_FINALIZER] } }, 'strategic')).toBe(
    'conflict'
  )
  expect(client.job('prod', 'app-migrate')?.metadata?.finalizers ?? []).toEqual([])
})

test('the keeper’s hold, written over a Job read before another controller added its finalizer: re-read on the conflict, both finalizers kept', async () => {
  const { client } = fresh()
  const read = toJobRecord(client.job('prod', 'app-migrate')!)
  client.update('prod', 'app-migrate', (j) => (j.metadata = { ...j.metadata, finalizers: ['example.com/other'] }))
  const held = await setHold(client, read, true)
  expect(held.done).toBe(true)
  expect(client.job('prod', 'app-migrate')?.metadata?.finalizers).toEqual(['example.com/other', LOGS_FINALIZER])
  // Two patches: the stale one refused, then one on the Job re-read (getJob between them).
  expect(client.callsOf('patchJob')).toHaveLength(2)
  expect(client.callsOf('getJob')).toHaveLength(1)
})
