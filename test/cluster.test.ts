// The local control plane is real: each test would fail against a mock or a half-started cluster.
import { join } from 'node:path'
import {
  createJob,
  createNamespace,
  deleteNamespace,
  eventually,
  getJob,
  helm,
  helmMajor,
  kubectl,
  podsOfJob,
  testCluster,
  waitForJobCondition,
  coreApi,
  batchApi
} from './cluster/testenv.ts'
import { pinnedKubernetesVersion } from './cluster/cluster.ts'
import { immutableJobError } from './scenario.ts'

const chart = join(import.meta.dirname, 'chart', 'migrate-demo')
let ns: string

beforeAll(async () => {
  ns = await createNamespace('cluster')
})
afterAll(async () => {
  await deleteNamespace(ns)
})

test('the API server reports the pinned Kubernetes version', () => {
  const result = kubectl('get', '--raw', '/version')
  expect(result.code).toBe(0)
  expect(JSON.parse(result.stdout).gitVersion).toBe(pinnedKubernetesVersion())
  expect(testCluster().server).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/)
})

test('a Job runs to Complete on the fake node, and a Job whose pod is marked to fail ends Failed', async () => {
  await createJob({ name: 'ok', namespace: ns })
  await createJob({ name: 'broken', namespace: ns, behaviour: 'fail' })
  const ok = await waitForJobCondition(ns, 'ok', 'Complete')
  const broken = await waitForJobCondition(ns, 'broken', 'Failed')
  expect(ok.status?.succeeded).toBe(1)
  expect(broken.status?.failed).toBe(1)
  const pods = await coreApi().listNamespacedPod({ namespace: ns, labelSelector: `batch.kubernetes.io/controller-uid=${broken.metadata?.uid}` })
  expect(pods.items[0]?.status?.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(1)
})

test('a held pod stays Running until the hold label is removed', async () => {
  await createJob({ name: 'held', namespace: ns, behaviour: 'hold' })
  await eventually(
    'held Job active',
    () => getJob(ns, 'held'),
    (j) => j?.status?.active === 1
  )
  await new Promise((r) => setTimeout(r, 2000))
  expect((await getJob(ns, 'held'))?.status?.conditions ?? []).toEqual([])
  expect(kubectl('label', 'pod', '-n', ns, '-l', 'job-name=held', 'job-sweeper.test/hold-').code).toBe(0)
  await waitForJobCondition(ns, 'held', 'Complete')
})

test('the real TTL-after-finished controller deletes a finished Job with ttlSecondsAfterFinished', async () => {
  await createJob({ name: 'short-lived', namespace: ns, ttlSecondsAfterFinished: 3 })
  await waitForJobCondition(ns, 'short-lived', 'Complete')
  expect(await getJob(ns, 'short-lived')).toBeDefined()
  await eventually(
    'TTL controller to delete the Job',
    () => getJob(ns, 'short-lived'),
    (j) => j === undefined,
    30_000
  )
})

test('deleting a Job with Background propagation removes its pods through the garbage collector', async () => {
  await createJob({ name: 'collected', namespace: ns })
  const job = await waitForJobCondition(ns, 'collected', 'Complete')
  expect(await podsOfJob(ns, job)).toHaveLength(1)
  await batchApi().deleteNamespacedJob({ name: 'collected', namespace: ns, propagationPolicy: 'Background' })
  await eventually(
    'pods of the deleted Job to be collected',
    () => podsOfJob(ns, job),
    (pods) => pods.length === 0,
    30_000
  )
})

test('kwok serves pod logs through the API server', async () => {
  await createJob({ name: 'logged', namespace: ns })
  await waitForJobCondition(ns, 'logged', 'Complete')
  const result = kubectl('logs', '-n', ns, 'job/logged')
  expect(result.stderr).toBe('')
  expect(result.stdout).toContain('migrate: applying 0042_add_tuples_index')
})

test('helm upgrade of a changed plain migration Job fails with the immutable-field error', async () => {
  const release = 'immut'
  const install = helm('install', release, chart, '-n', ns, '--set', 'migrationVersion=1', '--set', 'hookJob=false')
  expect(install.stderr).toBe('')
  expect(install.code).toBe(0)
  // Helm 4 installs with server-side apply (an Apply entry of its field manager), Helm 3 with a
  // client-side create.
  const managers = (await getJob(ns, `${release}-migrate`))?.metadata?.managedFields?.map((f) => `${f.manager}/${f.operation}`)
  expect(managers).toContain(helmMajor() === 4 ? 'helm/Apply' : 'helm/Update')
  const upgrade = helm('upgrade', release, chart, '-n', ns, '--set', 'migrationVersion=2', '--set', 'hookJob=false')
  expect(upgrade.code).not.toBe(0)
  expect(upgrade.stderr).toMatch(immutableJobError(ns, `${release}-migrate`))
  // The same values again: the template is unchanged, so the upgrade goes through.
  expect(helm('upgrade', release, chart, '-n', ns, '--set', 'migrationVersion=1', '--set', 'hookJob=false').code).toBe(0)
})
