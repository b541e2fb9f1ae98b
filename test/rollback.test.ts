// What a Helm rollback does after a pre phase: the old revision's migration Job is re-created and
// the old migration runs again (docs/rollbacks.md).
import { outputNames, runAction } from './action.ts'
import { getJob, helm, helmMajor, waitForJobCondition } from './cluster/testenv.ts'
import { helmChart, release, useScenario } from './scenario.ts'

const scenario = useScenario('rollback')
let ns: string
beforeEach(() => {
  ns = scenario.ns
})

const migrate = `${release}-migrate`

/** The image and MIGRATION_VERSION of the migration Job's container: which migration it runs. */
async function migration(): Promise<{ uid: string; image: string; version: string } | undefined> {
  const job = await getJob(ns, migrate)
  const container = job?.spec?.template.spec?.containers[0]
  if (!job || !container) return undefined
  return { uid: job.metadata?.uid ?? '', image: container.image ?? '', version: container.env?.find((e) => e.name === 'MIGRATION_VERSION')?.value ?? '' }
}

/** Revision 1 runs migration 1; the pre phase deletes its Job, as before any upgrade. */
async function installAndPre(): Promise<string> {
  const install = helmChart('install', ns, { hookJob: false, migrationVersion: '1' }, '--wait', '--wait-for-jobs')
  expect(install.stderr).toBe('')
  const first = await migration()
  expect(first?.version).toBe('1')
  const pre = await runAction({ release, namespace: ns })
  expect(pre.code).toBe(0)
  expect(outputNames(pre, 'pruned')).toEqual([migrate])
  return first?.uid ?? ''
}

test('helm rollback: blocked by the new Job like an upgrade; after a pre phase it re-creates the old Job, which runs migration 1 again', async () => {
  const firstUid = await installAndPre()
  const upgrade = helmChart('upgrade', ns, { hookJob: false, migrationVersion: '2' }, '--wait', '--wait-for-jobs')
  expect(upgrade.code).toBe(0)
  expect((await migration())?.version).toBe('2')

  // Revision 1's Job template differs from the live Job (migration 2): the same immutable error.
  const blocked = helm('rollback', release, '1', '-n', ns)
  expect(blocked.code).not.toBe(0)
  expect(blocked.stderr).toContain('field is immutable')

  const pre = await runAction({ release, namespace: ns })
  expect(outputNames(pre, 'pruned')).toEqual([migrate])
  const rollback = helm('rollback', release, '1', '-n', ns, '--wait', '--wait-for-jobs')
  expect(rollback.stderr).toBe('')
  expect(rollback.code).toBe(0)

  const recreated = await migration()
  expect(recreated).toEqual({ uid: expect.any(String), image: 'example.invalid/migrate:1', version: '1' })
  expect(recreated?.uid).not.toBe(firstUid) // a new Job: the first one was deleted by the first pre phase
  const job = await waitForJobCondition(ns, migrate, 'Complete')
  expect(job.status?.succeeded).toBe(1) // migration 1 ran again, against a schema already at 2
})

describe('rollback on a failed upgrade', () => {
  // Helm 4 calls it --rollback-on-failure; Helm 3's --atomic is the same switch.
  const rollbackOnFailure = (): string => (helmMajor() === 4 ? '--rollback-on-failure' : '--atomic')
  const rolledBack = (): RegExp =>
    new RegExp(`release ${release} failed, and has been rolled back due to ${helmMajor() === 4 ? 'rollback-on-failure' : 'atomic'} being set`)

  test('with --cleanup-on-fail: the failed new Job is deleted and the old Job re-created, running migration 1 again', async () => {
    const firstUid = await installAndPre()
    const upgrade = helmChart(
      'upgrade',
      ns,
      { hookJob: false, migrationVersion: '2', failMigration: true },
      rollbackOnFailure(),
      '--cleanup-on-fail',
      '--wait-for-jobs',
      '--timeout',
      '20s'
    )
    expect(upgrade.code).not.toBe(0)
    expect(upgrade.stderr).toMatch(rolledBack())
    const recreated = await migration()
    expect(recreated).toEqual({ uid: expect.any(String), image: 'example.invalid/migrate:1', version: '1' })
    expect(recreated?.uid).not.toBe(firstUid)
    expect((await waitForJobCondition(ns, migrate, 'Complete')).status?.succeeded).toBe(1)
  })

  test('without --cleanup-on-fail: the rollback itself fails on the failed new Job, which stays', async () => {
    await installAndPre()
    const upgrade = helmChart(
      'upgrade',
      ns,
      { hookJob: false, migrationVersion: '2', failMigration: true },
      rollbackOnFailure(),
      '--wait-for-jobs',
      '--timeout',
      '20s'
    )
    expect(upgrade.code).not.toBe(0)
    expect(upgrade.stderr).toContain('an error occurred while rolling back the release')
    expect(upgrade.stderr).toMatch(new RegExp(`Job\\.batch "${migrate}" is invalid: spec\\.template: .*field is immutable`))
    expect(await migration()).toMatchObject({ version: '2' })
  })
})
