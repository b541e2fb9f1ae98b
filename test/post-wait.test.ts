// Post with wait-for-jobs, where the wait ends badly: a TTL that could not be set after the wait
// keeps the failure's words in its row (not "deleted ttl … after it finished"), in post's own
// words; and keep-last's newest Job, still running when the wait times out, keeps no TTL.
import { setTimeout as sleep } from 'node:timers/promises'
import { outputNames, runAction } from './action.ts'
import { createJob, getJob, testCluster, waitForJobCondition } from './cluster/testenv.ts'
import { startFaultProxy, type FaultProxy } from './faults/proxy.ts'
import { expectNoStackTrace, heldReleaseJob, runThrough } from './faults/product.ts'
import { escapeMarkdown } from '../src/report/markdown.ts'
import { release, releaseAnnotations, useScenario } from './scenario.ts'

const scenario = useScenario('postwait')
let ns: string
let proxy: FaultProxy | undefined
beforeEach(() => {
  ns = scenario.ns
})
afterEach(async () => {
  await proxy?.close()
  proxy = undefined
})

const errorLines = (stdout: string): string[] =>
  stdout
    .split('\n')
    .filter((l) => l.startsWith('::error::'))
    .flatMap((l) => l.slice('::error::'.length).split('%0A'))
type Row = { name: string; reason: string }
const rowOf = (output: string, name: string): Row | undefined => (JSON.parse(output) as Row[]).find((r) => r.name === name)

test('a log save that fails after the wait: the row keeps the failure and the TTL it had, not the TTL it would have got; post words it for post', async () => {
  const [unsaved, saved] = [`${release}-migrate`, `${release}-seed`]
  const jobs = [await heldReleaseJob(ns, unsaved), await heldReleaseJob(ns, saved)]
  proxy = await startFaultProxy(testCluster())
  // The log reads of one Job's pods are refused; the other Job is the positive control.
  proxy.addRule({
    method: 'GET',
    path: new RegExp(`/pods/${unsaved}-[^/]+/log$`),
    fault: { kind: 'status', code: 403 }
  })
  const inputs = { phase: 'post', release, namespace: ns, 'wait-for-jobs': '5m', ttl: '1h', 'failure-grace': '2h', 'harvest-logs': 'all' }
  const pending = runThrough(proxy, inputs)
  await proxy.requests.waitFor({ method: 'GET', path: `/apis/batch/v1/namespaces/${ns}/jobs`, query: { watch: 'true' } }, 1, 120_000)
  for (const job of jobs) await job.release()
  const run = await pending
  expectNoStackTrace(run)
  expect(run.code).toBe(1)

  const failed = rowOf(run.outputs.kept, unsaved)
  expect(failed?.reason).toMatch(
    /^succeeded after waiting; TTL not set: its logs could not all be saved \(cannot save the log of \S+\/main: 403 Forbidden: injected by the fault proxy: HTTP 403 \(the credentials lack 'get' on pods\/log\)\); it keeps what it was given before the wait \(TTL: 2h after it finishes\)$/
  )
  expect(failed?.reason).not.toContain('after it finished')
  // The outcome says how long the wait took, as every waited row does (report/summary.ts).
  expect(run.summary).toMatch(new RegExp(`\\| ${unsaved} \\| succeeded \\| ❌ failed to set TTL \\(waited (under 1s|\\d+[smh][\\dsm]*)\\) \\| `))
  expect(run.summary).toContain(`| 2h after it finishes | `)
  const errors = errorLines(run.stdout)
  expect(errors).toHaveLength(1)
  expect(errors[0]).toMatch(
    new RegExp(
      `^Job ${ns}/${unsaved}: its TTL was not set, because its logs could not all be saved \\(.*\\); the Job stays as it is until a later post phase or sweep can save them$`
    )
  )
  expect(run.stdout).not.toContain('on-log-failure')
  expect((await getJob(ns, unsaved))?.spec?.ttlSecondsAfterFinished).toBe(7200) // the upper bound, set before the wait

  // Positive control: the Job whose logs were saved got the TTL of its outcome, and its row says so.
  expect(outputNames(run, 'ttl-set')).toEqual([saved])
  expect(rowOf(run.outputs['ttl-set'], saved)?.reason).toBe('succeeded after waiting; deleted ttl 1h after it finished')
  expect(run.summary).toContain(escapeMarkdown('succeeded after waiting; deleted ttl 1h after it finished'))
  expect((await getJob(ns, saved))?.spec?.ttlSecondsAfterFinished).toBe(3600)
})

test('keep-last 1 with a wait-for-jobs timeout: the newest Job, still running, keeps no TTL (not the upper bound); the older one gets its ttl', async () => {
  const annotations = releaseAnnotations(ns)
  const [older, newest] = [`${release}-migrate-1`, `${release}-migrate-2`]
  await createJob({ namespace: ns, name: older, annotations })
  await waitForJobCondition(ns, older, 'Complete')
  await sleep(1000) // keep-last ranks by creation time
  await createJob({ namespace: ns, name: newest, annotations, behaviour: 'hold' })
  const run = await runAction({ phase: 'post', release, namespace: ns, 'keep-last': '1', 'wait-for-jobs': '3s', ttl: '1h', 'failure-grace': '2h' })
  expectNoStackTrace(run)
  expect(run.code).toBe(0)
  expect(run.stdout).toContain(
    `::warning::Job ${ns}/${newest} was still running after wait-for-jobs 3s; it keeps no TTL (keep-last keeps it among the newest of its group)`
  )
  expect(outputNames(run, 'waited')).toEqual([newest])
  expect(rowOf(run.outputs['ttl-set'], newest)?.reason).toMatch(
    /^the newest of group \S+-migrate \(keep-last 1\): no TTL while it runs; waiting up to 3s for its outcome \(a failure gets failure-grace 2h\); still running after 3s$/
  )
  expect(run.summary).toContain('| none while among the newest |')
  const live = await getJob(ns, newest)
  expect(live?.status?.active).toBe(1) // it was still running
  expect(live?.spec?.ttlSecondsAfterFinished).toBeUndefined()
  expect(live?.metadata?.labels?.['job-sweeper.io/managed']).toBe('true') // post did act on it
  // Positive control: the older revision, pushed out of keep-last, has its ttl.
  expect((await getJob(ns, older))?.spec?.ttlSecondsAfterFinished).toBe(3600)
})
