// Post with keeper-namespace: whether a keeper runs for a Job (plan/keeper.ts keeperTakes, from its
// Lease as observe/keeper-lease.ts reads it), and post's TTL patch carrying the keeper's finalizer
// only then, merged into the Job's own finalizers (a strategic merge), over the fake client.
import type { V1Lease } from '@kubernetes/client-node'
import { keeperLeaseOf, type KeeperLease } from '../../src/observe/keeper-lease.ts'
import { keeperLine, keeperTakes, LOGS_FINALIZER } from '../../src/plan/keeper.ts'
import type { LeaseLiveness } from '../../src/plan/lease-liveness.ts'
import { TTL_AFTER_ARCHIVE } from '../../src/plan/release-ttl.ts'
import { matchesSelector } from '../../src/settings/selector.ts'
import { executorOf, outcomesOf } from '../fake/executor.ts'
import { newJob } from './jobs.ts'

const now = new Date('2026-12-04T12:00:00Z')
const secondsAgo = (s: number): Date => new Date(now.getTime() - s * 1000)
/** The Lease as the keeper writes it (keeperLeaseOf), not watched yet. */
const written: KeeperLease = {
  holder: 'keeper-0',
  durationSeconds: 30,
  namespaces: ['prod', 'jobs'],
  selector: 'job-sweeper.io/managed=true'
}
/** As this run watched it (plan/lease-liveness.ts): seen renewed 4 s into the watch, or unchanged for its 30 s. */
const fresh: KeeperLease = { ...written, liveness: { running: true, state: 'renewed', watchedSeconds: 4 } }
const STALE: LeaseLiveness = { running: false, state: 'stale', watchedSeconds: 30 }
const managed = { 'job-sweeper.io/managed': 'true', app: 'x' }

test.each([
  ['a fresh Lease, its namespace and selector: held', fresh, 'prod', managed, { takes: true }],
  ['no Lease: not held', undefined, 'prod', managed, { takes: false, why: 'no keeper: no Lease job-sweeper-keeper' }],
  [
    'a Lease nobody holds: not held',
    { ...fresh, holder: undefined },
    'prod',
    managed,
    { takes: false, why: 'no keeper: its Lease job-sweeper-keeper is not held' }
  ],
  [
    'not renewed in the 30 s this run watched it (the keeper stopped): not held',
    { ...fresh, liveness: STALE },
    'prod',
    managed,
    { takes: false, why: 'no keeper: its Lease job-sweeper-keeper was not renewed in the 30s this run watched it' }
  ],
  [
    'the watch ended before it could tell (cancelled): not held, no promise made',
    written,
    'prod',
    managed,
    { takes: false, why: "the keeper's Lease job-sweeper-keeper was not watched long enough to tell whether a keeper renews it" }
  ],
  ['a keeper of every namespace (its Lease says *): held in any', { ...fresh, namespaces: ['*'] as string[] }, 'staging', managed, { takes: true }],
  ['another namespace: not held', fresh, 'staging', managed, { takes: false, why: 'the keeper does not keep namespace staging (it keeps prod, jobs)' }],
  [
    'labels its selector does not match: not held',
    { ...fresh, selector: 'team=db' },
    'prod',
    managed,
    { takes: false, why: 'the keeper keeps Jobs matching team=db' }
  ],
  [
    'a keeper that wrote no scope: not held',
    { ...fresh, selector: undefined },
    'prod',
    managed,
    { takes: false, why: "the keeper's Lease does not say which Jobs it keeps (a keeper older than post)" }
  ]
] as const)('%s', (_, lease, namespace, labels, expected) => {
  expect(keeperTakes(lease, namespace, labels, matchesSelector)).toEqual(expected)
})

test('the Lease as the keeper writes it: holder, renewal, duration and its scope annotations', () => {
  const lease: V1Lease = {
    metadata: {
      name: 'job-sweeper-keeper',
      annotations: { 'job-sweeper.io/keeper-namespaces': 'prod,jobs', 'job-sweeper.io/keeper-selector': 'job-sweeper.io/managed=true' }
    },
    spec: {
      holderIdentity: 'keeper-0',
      leaseDurationSeconds: 30,
      renewTime: secondsAgo(5) as never
    }
  }
  expect(keeperLeaseOf(lease)).toEqual(written)
  expect(keeperLeaseOf(undefined)).toBeUndefined()
  expect(keeperLine('job-sweeper', fresh)).toBe(
    "keeper-namespace 'job-sweeper': a keeper runs (keeper-0, its Lease seen renewed after 4s), keeping Jobs matching job-sweeper.io/managed=true in prod, jobs: the Jobs it takes are held with job-sweeper.io/logs until it archives their logs"
  )
  expect(keeperLine('job-sweeper', { ...fresh, liveness: STALE })).toBe(
    "keeper-namespace 'job-sweeper': no keeper running: its Lease job-sweeper-keeper was not renewed in the 30s this run watched it: no Job is held for one"
  )
})

describe('post with keeper-namespace', () => {
  const inputs = { phase: 'post', release: 'app', 'harvest-logs': 'none', 'keeper-namespace': 'job-sweeper' }
  const failed = newJob({ name: 'app-migrate', release: 'app', status: 'failed', finalizers: ['example.com/other'] })

  test('a keeper runs for the Job: its finalizer comes in the patch of its TTL’s policy, a strategic merge that keeps the Job’s own; no TTL until the archive', async () => {
    const ex = executorOf(inputs, [failed])
    const lease = fresh
    const result = await ex.execute(undefined, undefined, { keeper: { namespace: 'job-sweeper', lease } })
    expect(result.errors).toEqual([])
    expect(outcomesOf(result)['app-migrate'][0]).toBe('ttl-set')
    const [patch] = ex.client.callsOf('patchJob')
    expect(patch[3]).toBe('strategic')
    expect((patch[2] as { metadata: { finalizers: string[] } }).metadata.finalizers).toEqual([LOGS_FINALIZER])
    const job = ex.client.job('prod', 'app-migrate')
    expect(job?.metadata?.finalizers).toEqual(['example.com/other', LOGS_FINALIZER])
    // The TTL starts after the archive: the keeper writes the one of its outcome as it lets go.
    expect(job?.spec?.ttlSecondsAfterFinished).toBeUndefined()
    expect(job?.metadata?.annotations?.[TTL_AFTER_ARCHIVE]).toBe('ttl 1h, failure-grace 1d')
    expect(ex.log.join('\n')).toContain(
      `Job prod/app-migrate (failed): no ttlSecondsAfterFinished until the keeper archived its logs (${TTL_AFTER_ARCHIVE}: ttl 1h, failure-grace 1d, the one of its outcome written as its hold is let go); held for the keeper (job-sweeper.io/logs)`
    )
  })

  test('the chart’s own policy: a failure-grace annotation it applies is the one left to the release; a TTL it applies (Helm 4) stands, held or not, and the log says it runs meanwhile', async () => {
    const applied = (fields: Record<string, unknown>, annotations: Record<string, string>) => {
      const job = newJob({ name: 'app-migrate', release: 'app', status: 'failed', annotations })
      job.metadata!.managedFields = [{ manager: 'helm', operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: fields }]
      return job
    }
    const grace = applied({ 'f:metadata': { 'f:annotations': { 'f:job-sweeper.io/failure-grace': {} } } }, { 'job-sweeper.io/failure-grace': '7d' })
    const byGrace = executorOf(inputs, [grace])
    await byGrace.execute(undefined, undefined, { keeper: { namespace: 'job-sweeper', lease: fresh } })
    expect(byGrace.client.job('prod', 'app-migrate')?.metadata?.annotations?.[TTL_AFTER_ARCHIVE]).toBe('ttl 1h, failure-grace 7d')

    const ttl = applied({ 'f:spec': { 'f:ttlSecondsAfterFinished': {} } }, {})
    ttl.spec!.ttlSecondsAfterFinished = 600
    const byTtl = executorOf(inputs, [ttl])
    await byTtl.execute(undefined, undefined, { keeper: { namespace: 'job-sweeper', lease: fresh } })
    const job = byTtl.client.job('prod', 'app-migrate')
    expect([job?.spec?.ttlSecondsAfterFinished, job?.metadata?.annotations?.[TTL_AFTER_ARCHIVE], job?.metadata?.finalizers]).toEqual([
      600,
      undefined,
      [LOGS_FINALIZER]
    ])
    expect(byTtl.log.join('\n')).toContain(
      "the chart's ttlSecondsAfterFinished kept; held for the keeper (job-sweeper.io/logs): the chart's TTL runs meanwhile, and may delete its pods before their archive"
    )
  })

  test('positive control: no keeper running (its Lease not renewed while watched): the TTL alone, by merge patch, and the log says why', async () => {
    const ex = executorOf(inputs, [failed])
    const lease = { ...fresh, liveness: STALE }
    const result = await ex.execute(undefined, undefined, { keeper: { namespace: 'job-sweeper', lease } })
    expect(result.errors).toEqual([])
    const [patch] = ex.client.callsOf('patchJob')
    expect(patch).toHaveLength(3)
    expect((patch[2] as { metadata: { finalizers?: string[] } }).metadata.finalizers).toBeUndefined()
    const job = ex.client.job('prod', 'app-migrate')
    expect(job?.metadata?.finalizers).toEqual(['example.com/other'])
    expect(job?.spec?.ttlSecondsAfterFinished).toBe(86400)
    expect(job?.metadata?.annotations?.[TTL_AFTER_ARCHIVE]).toBeUndefined()
    expect(ex.log.join('\n')).toContain(
      'not held for the keeper: no keeper: its Lease job-sweeper-keeper was not renewed in the 30s this run watched it, so the TTL runs from its finish'
    )
  })
})
