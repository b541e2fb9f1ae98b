// Final answers through the fault proxy: a 403 on the watch, a 400 on a delete, a 422 on a patch.
// None is retried (the proxy counts each request), none turns into polling, and each fails the
// step with a message naming the Job or the namespace, the code and what it means.
import { outputNames } from './action.ts'
import { getJob } from './cluster/testenv.ts'
import { useFaultProxy } from './faults/fixture.ts'
import type { FaultProxy, FaultRule, RuleHandle } from './faults/proxy.ts'
import { expectNoStackTrace, expectPrunedOnce, heldReleaseJob, releaseJobs, runThrough } from './faults/product.ts'
import { release, useScenario } from './scenario.ts'

const scenario = useScenario('refused')
const faults = useFaultProxy({ tally: { file: 'faults-refused', decoys: () => scenario.decoys.length } })
let ns: string
let proxy: FaultProxy
beforeEach(() => {
  ns = scenario.ns
  proxy = faults.proxy
})

/** Adds one rule, for this test only. */
const inject = (rule: FaultRule): RuleHandle => faults.inject(rule)[0]
const jobsPath = (): string => `/apis/batch/v1/namespaces/${ns}/jobs`
const watch = (): { path: string; query: { watch: string } } => ({ path: jobsPath(), query: { watch: 'true' } })
/** The step's errors: core.setFailed joins them into one ::error:: command, newlines as %0A. */
const errorLines = (stdout: string): string[] =>
  stdout
    .split('\n')
    .filter((l) => l.startsWith('::error::'))
    .flatMap((l) => l.slice('::error::'.length).split('%0A'))

test('403 on the watch while on-running: wait waits: the step fails at once, saying so, with no retries and no polling', async () => {
  const name = `${release}-migrate`
  await heldReleaseJob(ns, name)
  const forbidden = inject({ ...watch(), fault: { kind: 'status', code: 403 } })
  const started = Date.now()
  const run = await runThrough(proxy, { release, namespace: ns, 'on-running': 'wait', 'wait-timeout': '10m' })
  expectNoStackTrace(run)
  expect(run.code).toBe(1)
  expect(errorLines(run.stdout).join('\n')).toContain(
    `Job ${ns}/${name} could not be watched: cannot watch Jobs in namespace ${ns}: 403 Forbidden (the credentials lack 'watch' on jobs.batch); nothing was deleted`
  )
  expect(forbidden.fired).toBe(1)
  expect(proxy.requests.count(watch())).toBe(1)
  // The plan's list, and nothing after it: no relists, no reads of the Job in a loop. (The
  // namespace and the Lease are read too, once each, on their own paths.)
  const jobReads = new RegExp(`^${jobsPath()}(/|$)`)
  expect(proxy.requests.count({ method: 'GET', path: jobReads }) - proxy.requests.count(watch())).toBe(1)
  expect(Date.now() - started).toBeLessThan(60_000) // not the 10m wait-timeout
  expect((await getJob(ns, name))?.metadata?.deletionTimestamp).toBeUndefined()
})

test('403 on the watch during wait-for-jobs: the step fails, and the Job keeps the upper-bound TTL', async () => {
  const name = `${release}-migrate`
  await heldReleaseJob(ns, name)
  const forbidden = inject({ ...watch(), fault: { kind: 'status', code: 403 } })
  const run = await runThrough(proxy, { phase: 'post', release, namespace: ns, 'wait-for-jobs': '10m', ttl: '1h', 'failure-grace': '2h' })
  expectNoStackTrace(run)
  expect(run.code).toBe(1)
  expect(errorLines(run.stdout).join('\n')).toContain(`Job ${ns}/${name} could not be watched: cannot watch Jobs in namespace ${ns}: 403 Forbidden`)
  expect(forbidden.fired).toBe(1)
  expect(proxy.requests.count(watch())).toBe(1)
  expect((await getJob(ns, name))?.spec?.ttlSecondsAfterFinished).toBe(7200)
})

test('400 on one delete is not retried: that Job is kept with the reason, the others are pruned once', async () => {
  const names = await releaseJobs(ns, `${release}-job`, 3)
  const path = `${jobsPath()}/${names[1]}`
  const bad = inject({ method: 'DELETE', path, fault: { kind: 'status', code: 400, message: 'injected: the delete options are invalid' } })
  const run = await runThrough(proxy, { release, namespace: ns })
  expectNoStackTrace(run)
  expect(run.code).toBe(1)
  expect(bad.fired).toBe(1)
  expect(proxy.requests.count({ method: 'DELETE', path })).toBe(1)
  expect(errorLines(run.stdout)).toEqual([`Job ${ns}/${names[1]}: injected: the delete options are invalid`])
  expect(outputNames(run, 'pruned')).toEqual([names[0], names[2]])
  expect(JSON.parse(run.outputs.kept)).toContainEqual(expect.objectContaining({ name: names[1], reason: expect.stringContaining('failed: injected') }))
  expect(await getJob(ns, names[1])).toBeDefined()
  await expectPrunedOnce(ns, [names[0], names[2]])
})

test('403 on deletes is not retried either: one request per Job, and each Job is named', async () => {
  const names = await releaseJobs(ns, `${release}-job`, 2)
  const forbidden = inject({ method: 'DELETE', path: new RegExp(`^${jobsPath()}/`), fault: { kind: 'status', code: 403, message: 'injected: cannot delete' } })
  const run = await runThrough(proxy, { release, namespace: ns })
  expectNoStackTrace(run)
  expect(run.code).toBe(1)
  expect(forbidden.fired).toBe(2)
  expect(proxy.requests.count({ method: 'DELETE', path: new RegExp(`^${jobsPath()}/`) })).toBe(2) // not the Lease's
  expect(errorLines(run.stdout)).toEqual(names.map((n) => `Job ${ns}/${n}: injected: cannot delete`))
  for (const n of names) expect(await getJob(ns, n)).toBeDefined()
})

test('422 on a patch is not retried: the post step fails naming the Job, which gets no TTL', async () => {
  const names = await releaseJobs(ns, `${release}-job`, 2)
  const path = `${jobsPath()}/${names[0]}`
  const invalid = inject({ method: 'PATCH', path, fault: { kind: 'status', code: 422, message: 'injected: Job.batch is invalid' } })
  const run = await runThrough(proxy, { phase: 'post', release, namespace: ns, ttl: '1h' })
  expectNoStackTrace(run)
  expect(run.code).toBe(1)
  expect(invalid.fired).toBe(1)
  expect(proxy.requests.count({ method: 'PATCH', path })).toBe(1)
  expect(errorLines(run.stdout)).toEqual([`Job ${ns}/${names[0]}: could not set its TTL: injected: Job.batch is invalid`])
  expect(outputNames(run, 'ttl-set')).toEqual([names[1]])
  expect((await getJob(ns, names[0]))?.spec?.ttlSecondsAfterFinished).toBeUndefined()
  expect((await getJob(ns, names[1]))?.spec?.ttlSecondsAfterFinished).toBe(3600)
})
