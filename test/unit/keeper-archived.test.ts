// A Job the keeper archived (its job-sweeper.io/logs annotation): pre and sweep save nothing of it,
// so no job.json of theirs goes over or beside the keeper's; its row says where its logs are. A Job
// not archived beside it still has its logs saved (the positive control). Over the fake client.
import type { V1Job, V1Pod } from '@kubernetes/client-node'
import { ARCHIVE_ANNOTATION } from '../../src/plan/keeper.ts'
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
