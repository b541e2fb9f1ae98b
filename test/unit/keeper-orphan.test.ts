// A hold no keeper runs to let go of (plan/keeper.ts orphanedHold): pre and sweep, given
// keeper-namespace, save the held Job's logs themselves (whatever harvest-logs says) and let go of
// the hold, so that its deletion, and its namespace's, completes; while a keeper runs for it, they
// leave it to the keeper. Over the fake client and clock; the cluster side is test/keeper.test.ts.
import type { V1Pod } from '@kubernetes/client-node'
import type { KeeperLease, KeeperPresence } from '../../src/observe/keeper-lease.ts'
import type { LeaseLiveness } from '../../src/plan/lease-liveness.ts'
import { LOGS_FINALIZER, orphanedHold } from '../../src/plan/keeper.ts'
import { planPrune } from '../../src/plan/plan.ts'
import { planPolicy } from '../../src/plan/policy.ts'
import { logsGoneWithRun, logsWhere } from '../../src/settings/logs-dir.ts'
import { executorOf, outcomesOf, settingsOf } from '../fake/executor.ts'
import { apiError, fail } from '../fake/jobs-client.ts'
import { newJob } from './jobs.ts'

/** A pod of the Job whose container `migrate` ran and failed. */
const failedPod = (name: string): V1Pod => ({
  metadata: { name, creationTimestamp: new Date() },
  spec: { containers: [{ name: 'migrate', image: 'x' }] },
  status: {
    phase: 'Failed',
    containerStatuses: [{ name: 'migrate', image: 'x', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 1 } } }]
  }
})

/** As this run watched the Lease (plan/lease-liveness.ts): seen renewed, or unchanged for its 30 s. */
const RENEWED: LeaseLiveness = { running: true, state: 'renewed', watchedSeconds: 4 }
const STALE: LeaseLiveness = { running: false, state: 'stale', watchedSeconds: 30 }
const lease = (liveness: LeaseLiveness | undefined, namespaces = ['prod']): KeeperLease => ({
  holder: 'keeper-0',
  liveness,
  durationSeconds: 30,
  namespaces,
  selector: 'job-sweeper.io/managed=true'
})
const at = (l: KeeperLease | undefined, unread = false): KeeperPresence => ({ namespace: 'job-sweeper', lease: l, unread: unread || undefined })
const held = newJob({ name: 'app-migrate', status: 'failed', finalizers: [LOGS_FINALIZER] })

test.each([
  ['not held: nothing to let go of', newJob({ name: 'app-migrate', status: 'failed' }), at(undefined), undefined],
  ['no keeper-namespace: nothing known, nothing taken from a keeper', held, undefined, undefined],
  ['the Lease could not be read: nothing known', held, at(undefined, true), undefined],
  ['no Lease', held, at(undefined), 'no keeper: no Lease job-sweeper-keeper in job-sweeper'],
  ['a Lease nobody holds', held, at({ ...lease(RENEWED), holder: undefined }), 'no keeper: its Lease job-sweeper-keeper is not held'],
  ['released while this run watched it', held, at(lease({ running: false, state: 'free' })), 'no keeper: its Lease job-sweeper-keeper is not held'],
  [
    'not renewed in the 30 s this run watched it: the keeper stopped',
    held,
    at(lease(STALE)),
    'no keeper: its Lease job-sweeper-keeper was not renewed in the 30s this run watched it'
  ],
  ['the watch ended before it could tell (cancelled): nothing known, nothing taken', held, at(lease(undefined)), undefined],
  ['seen renewed, keeping prod: the keeper lets go of it', held, at(lease(RENEWED)), undefined],
  ['seen renewed, keeping every namespace', held, at(lease(RENEWED, ['*'])), undefined],
  ['seen renewed, keeping another namespace', held, at(lease(RENEWED, ['staging'])), 'the keeper running does not keep namespace prod']
] as const)('%s', (_, job, keeper, expected) => {
  expect(orphanedHold(job, keeper)).toBe(expected)
})

describe('pre with keeper-namespace', () => {
  const inputs = { release: 'app', 'harvest-logs': 'none', 'keeper-namespace': 'job-sweeper' }
  const failed = (): ReturnType<typeof newJob> =>
    newJob({ name: 'app-migrate', release: 'app', status: 'failed', finalizers: ['example.com/other', LOGS_FINALIZER] })

  test('no keeper runs: the held Job’s logs are saved (harvest-logs none notwithstanding), the hold let go, then it is deleted and seen gone', async () => {
    const ex = executorOf(inputs, [failed()])
    const job = ex.client.job('prod', 'app-migrate')!
    ex.client.addPod(job, failedPod('app-migrate-x'), { migrate: 'relation "tuples" already exists\n' })
    ex.client.every('deleteJob', async (proceed) => {
      const result = await proceed()
      ex.client.removeFinalizers('prod', 'app-migrate') // the other finalizer's controller, done at once
      return result
    })
    const keeper = at(lease(STALE))
    const plan = await ex.plan(keeper)
    expect([plan.jobs[0].action, plan.jobs[0].harvest, plan.jobs[0].letGo]).toEqual([
      'delete',
      true,
      'no keeper: its Lease job-sweeper-keeper was not renewed in the 30s this run watched it'
    ])
    const result = await ex.execute(plan)
    expect(result.errors).toEqual([])
    expect(outcomesOf(result)['app-migrate'][0]).toBe('pruned')
    expect(outcomesOf(result)['app-migrate'][1]).toContain(`held with ${LOGS_FINALIZER} for a keeper, but no keeper`)
    expect(ex.client.savedLogs).toEqual(['prod/app-migrate-x/migrate'])
    // The hold goes first (the other finalizer stays), and the delete carries the version it left.
    const [patch] = ex.client.callsOf('patchJob')
    expect((patch[2] as { metadata: { finalizers: string[] } }).metadata.finalizers).toEqual(['example.com/other'])
    const [, precondition] = ex.client.callsOf('deleteJob')[0] as [string, { resourceVersion: string }]
    expect(ex.client.callsOf('deleteJob')).toHaveLength(1)
    expect(precondition.resourceVersion).not.toBe(plan.jobs[0].resourceVersion)
    expect(ex.client.job('prod', 'app-migrate')).toBeUndefined()
    expect(ex.log.join('\n')).toContain("let go of the keeper's hold on Job prod/app-migrate")
  })

  test('positive control: a keeper runs for it: no log saved here, the hold left to the keeper, and the wait for it to go says whose hold it is', async () => {
    const ex = executorOf({ ...inputs, 'wait-timeout': '60s' }, [failed()])
    const keeper = at(lease(RENEWED))
    const plan = await ex.plan(keeper)
    expect([plan.jobs[0].action, plan.jobs[0].harvest, plan.jobs[0].letGo]).toEqual(['delete', false, undefined])
    const result = await ex.execute(plan)
    expect(ex.client.callsOf('patchJob')).toEqual([])
    expect(ex.client.job('prod', 'app-migrate')?.metadata?.finalizers).toEqual(['example.com/other', LOGS_FINALIZER])
    expect(result.errors.join('\n')).toContain('deleted, but stuck on finalizer example.com/other')
  })

  test('held by the keeper’s finalizer alone, not let go: the wait’s error names the keeper and the input that lets go', async () => {
    const ex = executorOf({ release: 'app', 'harvest-logs': 'none', 'wait-timeout': '60s' }, [
      newJob({ name: 'app-migrate', release: 'app', status: 'failed', finalizers: [LOGS_FINALIZER] })
    ])
    const result = await ex.execute()
    expect(result.errors.join('\n')).toContain(
      `deleted, but held with ${LOGS_FINALIZER} for a job-sweeper keeper that has not archived its logs yet (give keeper-namespace, and pre lets go of a hold when no keeper runs; see docs/keeper.md)`
    )
  })

  test('its logs cannot be saved: the Job is kept, still held (lossless first), and the step fails saying why', async () => {
    const ex = executorOf(inputs, [failed()])
    ex.client.every('listPodsOfJob', fail(apiError(500, 'etcdserver: request timed out')))
    const plan = await ex.plan(at(undefined))
    const result = await ex.execute(plan)
    expect(outcomesOf(result)['app-migrate'][0]).toBe('error')
    expect(outcomesOf(result)['app-migrate'][1]).toMatch(/^kept, held: its logs could not all be saved/)
    expect(ex.client.callsOf('patchJob')).toEqual([])
    expect(ex.client.callsOf('deleteJob')).toEqual([])
    expect(ex.client.job('prod', 'app-migrate')?.metadata?.finalizers).toContain(LOGS_FINALIZER)
  })
})

describe('sweep with keeper-namespace', () => {
  const inputs = { phase: 'sweep', 'harvest-logs': 'none', 'keeper-namespace': 'job-sweeper', selector: 'job-sweeper.io/managed=true' }
  const labels = { 'job-sweeper.io/managed': 'true' }

  test('a held Job someone else deletes, no keeper: saved and let go, so its deletion completes; one not held, being deleted, is left alone', async () => {
    const ex = executorOf(inputs, [
      newJob({ name: 'app-migrate', status: 'failed', labels, finalizers: [LOGS_FINALIZER] }),
      newJob({ name: 'app-other', status: 'failed', labels, finalizers: ['example.com/other'] })
    ])
    ex.client.addPod(ex.client.job('prod', 'app-migrate')!, failedPod('app-migrate-x'), { migrate: 'boom\n' })
    // Deleted by someone else (kubectl delete, the TTL controller, a namespace's deletion): both wait on their finalizers.
    for (const name of ['app-migrate', 'app-other']) ex.client.remove('prod', name)
    expect(ex.client.job('prod', 'app-migrate')?.metadata?.deletionTimestamp).toBeDefined()
    const plan = await ex.plan(at(undefined))
    expect(plan.jobs.map((p) => [p.name, p.action])).toEqual([
      ['app-migrate', 'delete'],
      ['app-other', 'keep']
    ])
    const result = await ex.execute(plan)
    expect(result.errors).toEqual([])
    expect(outcomesOf(result)['app-migrate'][0]).toBe('gone')
    expect(ex.client.savedLogs).toEqual(['prod/app-migrate-x/migrate'])
    expect(ex.client.job('prod', 'app-migrate')).toBeUndefined()
    expect(ex.client.callsOf('deleteJob')).toEqual([]) // someone else's deletes: the sweep sent none
    expect(ex.client.job('prod', 'app-other')?.metadata?.finalizers).toEqual(['example.com/other'])
  })

  test('positive control: the keeper runs (its Lease seen renewed): the held Job being deleted is left to it', async () => {
    const ex = executorOf(inputs, [newJob({ name: 'app-migrate', status: 'failed', labels, finalizers: [LOGS_FINALIZER] })])
    ex.client.remove('prod', 'app-migrate')
    const plan = await ex.plan(at(lease(RENEWED)))
    expect(plan.jobs.map((p) => [p.name, p.action, p.reason])).toEqual([['app-migrate', 'keep', 'already being deleted']])
    await ex.execute(plan)
    expect(ex.client.job('prod', 'app-migrate')?.metadata?.finalizers).toEqual([LOGS_FINALIZER])
  })
})

describe('a hold is let go only into logs that outlive the run', () => {
  const onRunner = { GITHUB_ACTIONS: 'true', RUNNER_ENVIRONMENT: 'github-hosted', RUNNER_TEMP: '/home/runner/work/_temp' }
  const selfHosted = { ...onRunner, RUNNER_ENVIRONMENT: 'self-hosted', RUNNER_TEMP: '/srv/runner/_temp' }
  test.each([
    ['a bucket, on a runner', 's3://job-logs/ci', onRunner, undefined],
    [
      "the runner's temporary directory (the action's default)",
      '/home/runner/work/_temp/job-sweeper/logs',
      onRunner,
      "logs-dir '/home/runner/work/_temp/job-sweeper/logs' is in the runner's temporary directory, emptied when the job ends"
    ],
    [
      'a directory on a GitHub-hosted runner',
      '/home/runner/logs',
      onRunner,
      "logs-dir '/home/runner/logs' is on a GitHub-hosted runner, gone when the job ends"
    ],
    ['a directory of a self-hosted runner, outside its temporary directory', '/srv/job-logs', selfHosted, undefined],
    [
      "a self-hosted runner's temporary directory",
      '/srv/runner/_temp/logs',
      selfHosted,
      "logs-dir '/srv/runner/_temp/logs' is in the runner's temporary directory, emptied when the job ends"
    ],
    ['a directory given, outside a runner (the CLI on a machine of yours)', '/srv/job-logs', {}, undefined]
  ] as const)('%s', (_, dir, env, expected) => {
    expect(logsGoneWithRun(settingsOf({ release: 'app', 'logs-dir': dir }).logsTarget, env)).toBe(expected)
  })

  test('the default outside a runner, a temporary folder, does not', () => {
    const target = settingsOf({ release: 'app' }).logsTarget
    expect(logsGoneWithRun(target, {})).toBe(`logs-dir '${logsWhere(target)}' is the default, a temporary folder`)
  })

  const inputs = { release: 'app', 'harvest-logs': 'none', 'keeper-namespace': 'job-sweeper' }
  const failed = (): ReturnType<typeof newJob> => newJob({ name: 'app-migrate', release: 'app', status: 'failed', finalizers: [LOGS_FINALIZER] })
  const planned = async (logsDir: string, env: NodeJS.ProcessEnv) => {
    const ex = executorOf({ ...inputs, 'logs-dir': logsDir }, [failed()])
    ex.client.addPod(ex.client.job('prod', 'app-migrate')!, failedPod('app-migrate-x'), { migrate: 'relation "tuples" already exists\n' })
    const { jobs, resourceVersion } = await ex.client.listJobs('prod')
    const plan = planPrune(
      { namespace: 'prod', jobs, resourceVersions: { prod: resourceVersion }, keeper: at(undefined) },
      planPolicy(ex.settings, env),
      new Date(ex.clock.now())
    )
    return { ex, plan }
  }

  test('pre on a runner, logs in its temporary directory, no keeper: the Job is kept, still held, nothing saved, and the row says why and what lets it go', async () => {
    const { ex, plan } = await planned('/home/runner/work/_temp/job-sweeper/logs', onRunner)
    expect([plan.jobs[0].action, plan.jobs[0].harvest, plan.jobs[0].letGo]).toEqual(['keep', false, undefined])
    const result = await ex.execute(plan)
    const [outcome, reason] = outcomesOf(result)['app-migrate']
    expect(outcome).toBe('kept')
    expect(reason).toContain(
      `held with ${LOGS_FINALIZER} for a keeper, but no keeper: no Lease job-sweeper-keeper in job-sweeper; kept, still held: logs-dir '/home/runner/work/_temp/job-sweeper/logs' is in the runner's temporary directory, emptied when the job ends, and its logs saved there would be lost with the hold (give logs-dir s3://… on the run's own endpoint, such as the keeper's bucket, or a directory that stays, and the hold is let go)`
    )
    expect(ex.client.savedLogs).toEqual([])
    expect(ex.client.callsOf('patchJob')).toEqual([])
    expect(ex.client.callsOf('deleteJob')).toEqual([])
    expect(ex.client.job('prod', 'app-migrate')?.metadata?.finalizers).toEqual([LOGS_FINALIZER])
  })

  test('positive control: the run’s own bucket, or a directory that stays (a self-hosted runner’s): the logs are saved and the hold let go', async () => {
    for (const [dir, env] of [
      ['s3://job-logs/ci', onRunner],
      ['/srv/job-logs', selfHosted]
    ] as const) {
      const { plan } = await planned(dir, env)
      expect([dir, plan.jobs[0].action, plan.jobs[0].harvest, plan.jobs[0].letGo]).toEqual([
        dir,
        'delete',
        true,
        'no keeper: no Lease job-sweeper-keeper in job-sweeper'
      ])
    }
  })
})
