// A Job the keeper archived (its job-sweeper.io/logs annotation): pre and sweep save nothing of it,
// so no job.json of theirs goes over or beside the keeper's; its row says where its logs are. A Job
// not archived beside it still has its logs saved (the positive control). Over the fake client.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { V1Job, V1Pod } from '@kubernetes/client-node'
import { ARCHIVE_ANNOTATION, keeperArchive } from '../../src/plan/keeper.ts'
import { executorOf, outcomesOf } from '../fake/executor.ts'
import { newJob } from './jobs.ts'

const failedPod = (name: string): V1Pod => ({
  metadata: { name, creationTimestamp: new Date() },
  spec: { containers: [{ name: 'migrate', image: 'x' }] },
  status: {
    phase: 'Failed',
    containerStatuses: [{ name: 'migrate', image: 'x', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 1 } } }]
  }
})

const where = 's3://logs/keeper/prod/app-migrate/uid-app-migrate/'
const archived = { [ARCHIVE_ANNOTATION.where]: where, [ARCHIVE_ANNOTATION.state]: 'complete', [ARCHIVE_ANNOTATION.at]: '2026-12-05T12:00:00.000Z' }

test.each([
  ['pre', { release: 'app', 'harvest-logs': 'all' }],
  ['sweep', { phase: 'sweep', release: 'app', 'harvest-logs': 'all', ttl: '0s', 'failure-grace': '0s' }]
])('%s: the keeper’s archive is not saved over; a Job it did not archive is saved', async (_phase, inputs) => {
  const jobs: V1Job[] = [
    newJob({ name: 'app-migrate', release: 'app', status: 'failed', finishedAgo: 60, annotations: archived }),
    newJob({ name: 'app-seed', release: 'app', status: 'failed', finishedAgo: 60 })
  ]
  const ex = executorOf(inputs, jobs)
  ex.client.addPod(ex.client.job('prod', 'app-migrate')!, failedPod('app-migrate-x'), { migrate: 'migrate failed\n' })
  ex.client.addPod(ex.client.job('prod', 'app-seed')!, failedPod('app-seed-x'), { migrate: 'seed failed\n' })
  const plan = await ex.plan()
  const planned = Object.fromEntries(plan.jobs.map((j) => [j.name, [j.action, j.harvest]]))
  expect(planned).toEqual({ 'app-migrate': ['delete', false], 'app-seed': ['delete', true] })
  const result = await ex.execute(plan)
  expect(result.errors).toEqual([])
  const outcomes = outcomesOf(result)
  expect(outcomes['app-migrate'][0]).toBe('pruned')
  expect(outcomes['app-migrate'][1]).toContain(`its logs archived by the keeper at ${where} (complete): nothing saved over them`)
  expect(outcomes['app-seed'][0]).toBe('pruned')
  // Only the Job the keeper did not archive had its logs read and saved.
  expect(ex.client.savedLogs).toEqual(['prod/app-seed-x/migrate'])
})

// The trust rule (#34): pre, sweep and post believe a note as the keeper does (isArchived), only
// when it names the Job's uid last. One the Job was created with (a template's, a planted one)
// cannot: believed, it would keep the Job's logs from ever being saved.
describe('a note that does not name the Job’s uid is not the keeper’s archive', () => {
  const noted = (where: string, name = 'app-migrate'): V1Job =>
    newJob({ name, release: 'app', status: 'failed', finishedAgo: 60, annotations: { ...archived, [ARCHIVE_ANNOTATION.where]: where } })

  test.each([
    ['planted elsewhere', 's3://elsewhere/x/', undefined],
    ['an older keeper’s, without the uid', 's3://logs/keeper/prod/app-migrate/', undefined],
    ['another Job’s uid', 's3://logs/keeper/prod/app-migrate/uid-other/', undefined],
    ['the uid, not last', 's3://logs/keeper/prod/app-migrate/uid-app-migrate/x/', undefined],
    ['its own uid last (positive control)', where, { where, state: 'complete' }]
  ])('keeperArchive: %s', (_name, note, expected) => {
    expect(keeperArchive(noted(note))).toEqual(expected)
  })

  test.each([
    ['pre', { release: 'app', 'harvest-logs': 'all' }],
    ['sweep', { phase: 'sweep', release: 'app', 'harvest-logs': 'all', ttl: '0s', 'failure-grace': '0s' }]
  ])('%s: a planted note, and an older keeper’s uid-less one, are harvested into the uid’s folder', async (_phase, inputs) => {
    const dir = mkdtempSync(join(tmpdir(), 'keeper-archived-'))
    try {
      const jobs = [noted('s3://elsewhere/x/'), noted('s3://logs/keeper/prod/app-seed/', 'app-seed')]
      const ex = executorOf({ ...inputs, 'logs-dir': dir }, jobs)
      ex.client.addPod(ex.client.job('prod', 'app-migrate')!, failedPod('app-migrate-x'), { migrate: 'migrate failed\n' })
      ex.client.addPod(ex.client.job('prod', 'app-seed')!, failedPod('app-seed-x'), { migrate: 'seed failed\n' })
      const plan = await ex.plan()
      expect(Object.fromEntries(plan.jobs.map((j) => [j.name, [j.action, j.harvest, j.reason.includes('archived by the keeper')]]))).toEqual({
        'app-migrate': ['delete', true, false],
        'app-seed': ['delete', true, false]
      })
      const result = await ex.execute(plan)
      expect(result.errors).toEqual([])
      expect(ex.client.savedLogs.sort()).toEqual(['prod/app-migrate-x/migrate', 'prod/app-seed-x/migrate'])
      expect(readFileSync(join(dir, 'prod/app-migrate/uid-app-migrate/app-migrate-x/migrate.log'), 'utf8')).toBe('migrate failed\n')
      expect(JSON.parse(readFileSync(join(dir, 'prod/app-seed/uid-app-seed/job.json'), 'utf8'))).toMatchObject({ name: 'app-seed', uid: 'uid-app-seed' })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
