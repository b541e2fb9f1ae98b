// Lossless first: nothing is deleted (nor given a TTL) until the logs the policy asks for are on
// disk, completely. A log that cannot be read — forbidden, or its stream cut again and again —
// keeps the Job and fails the step, saying why (or, with on-log-failure: delete, warns); a log
// longer than max-log-bytes keeps its start and its end with a marker between, and the summary says so.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cutMarker } from '../src/kube/log-cut.ts'
import { outputNames, runAction } from './action.ts'
import { coreApi, createJob, getJob, waitForJobCondition } from './cluster/testenv.ts'
import { useFaultProxy } from './faults/fixture.ts'
import type { FaultProxy } from './faults/proxy.ts'
import { expectNoStackTrace, expectPrunedOnce, heldReleaseJob, runThrough } from './faults/product.ts'
import { release, releaseAnnotations, useScenario } from './scenario.ts'
import { createServiceAccount, exampleRbac, tokenKubeconfig } from './service-account.ts'
import { savedFolder } from './saved-folder.ts'

const scenario = useScenario('lossless')
const faults = useFaultProxy()
let ns: string
let proxy: FaultProxy
beforeEach(() => {
  ns = scenario.ns
  proxy = faults.proxy
})

const logsDir = (): string => mkdtempSync(join(tmpdir(), 'lossless-logs-'))
const errorText = (stdout: string): string =>
  stdout
    .split('\n')
    .filter((l) => l.startsWith('::error::'))
    .join('\n')

/** A failed Job of the release, run to its end; returns the log its pod wrote, as the API server serves it. */
async function failedReleaseJob(name: string): Promise<{ pod: string; log: string }> {
  const job = await createJob({ namespace: ns, name, behaviour: 'fail', annotations: releaseAnnotations(ns) })
  await waitForJobCondition(ns, name, 'Failed')
  const pods = await coreApi().listNamespacedPod({ namespace: ns, labelSelector: `batch.kubernetes.io/controller-uid=${job.metadata?.uid}` })
  const pod = pods.items[0].metadata?.name ?? ''
  return { pod, log: await coreApi().readNamespacedPodLog({ name: pod, namespace: ns, container: 'main' }) }
}

/** A kubeconfig for a ServiceAccount with the README's Role minus pods/log. */
async function withoutPodsLog(): Promise<string> {
  const rbac = exampleRbac(ns).replace(/ {2}- apiGroups: \[''\]\n {4}resources: \[pods\/log\]\n {4}verbs: \[get\]\n/, '')
  expect(rbac).not.toContain('pods/log')
  await createServiceAccount(ns, 'deployer', { yaml: rbac })
  return tokenKubeconfig(ns, 'deployer').kubeconfig
}

describe('a log that cannot be read', () => {
  test('forbidden (no pods/log): the failed Job is kept, the step fails saying why; with on-log-failure: delete it is deleted, with a warning', async () => {
    const name = `${release}-migrate`
    const { pod } = await failedReleaseJob(name)
    const kubeconfig = await withoutPodsLog()
    const kept = await runAction({ release, namespace: ns, kubeconfig }, { env: { KUBECONFIG: '/nonexistent' } })
    expectNoStackTrace(kept)
    expect(kept.code).toBe(1)
    // The API server's own message, and which right is missing.
    const forbidden = `pods "${pod}" is forbidden: User "system:serviceaccount:${ns}:deployer" cannot get resource "pods/log" in API group "" in the namespace "${ns}"`
    const why = `cannot save the log of ${pod}/main: 403 Forbidden: ${forbidden} (the credentials lack 'get' on pods/log)`
    expect(errorText(kept.stdout)).toBe(
      `::error::Job ${ns}/${name} was kept: its logs could not all be saved (${why}); set on-log-failure: delete to delete it anyway`
    )
    expect(JSON.parse(kept.outputs.kept)).toContainEqual(expect.objectContaining({ name, reason: `kept: its logs could not all be saved (${why})` }))
    expect(kept.summary).toContain('cannot save the log of')
    expect(await getJob(ns, name)).toBeDefined()

    const deleted = await runAction({ release, namespace: ns, kubeconfig, 'on-log-failure': 'delete' }, { env: { KUBECONFIG: '/nonexistent' } })
    expectNoStackTrace(deleted)
    expect(deleted.code).toBe(0)
    expect(deleted.stdout).toContain(`::warning::logs of Job ${ns}/${name} could not all be saved (on-log-failure: delete, so it goes on): ${why}`)
    expect(outputNames(deleted, 'pruned')).toEqual([name])
    await expectPrunedOnce(ns, [name])
  })

  test('its stream cut mid-body every time: a failed read, not a crash; the Job is kept, and the summary and outputs are written', async () => {
    const name = `${release}-migrate`
    const { pod, log } = await failedReleaseJob(name)
    const cut = proxy.addRule({ method: 'GET', path: /\/log$/, fault: { kind: 'cut', afterBytes: Math.floor(log.length / 2) } })
    const dir = logsDir()
    const run = await runThrough(proxy, { release, namespace: ns, 'logs-dir': dir })
    expectNoStackTrace(run)
    expect(run.code).toBe(1)
    expect(cut.fired).toBeGreaterThan(1) // retried within the budget, each read cut again
    expect(errorText(run.stdout)).toContain(`Job ${ns}/${name} was kept: its logs could not all be saved (cannot save the log of ${pod}/main: read the log of`)
    expect(errorText(run.stdout)).not.toContain('cluster unreachable') // the API server answered every time
    expect(JSON.parse(run.outputs.kept)).toContainEqual(
      expect.objectContaining({ name, reason: expect.stringContaining('kept: its logs could not all be saved') })
    )
    expect(run.summary).toContain(`| ${name} |`)
    expect(await getJob(ns, name)).toBeDefined()
  })

  test('its stream cut mid-body once: read again from the start, saved whole, and the Job is pruned', async () => {
    const name = `${release}-migrate`
    const { pod, log } = await failedReleaseJob(name)
    const cut = proxy.addRule({ method: 'GET', path: /\/log$/, times: 1, fault: { kind: 'cut', afterBytes: Math.floor(log.length / 2) } })
    const dir = logsDir()
    const run = await runThrough(proxy, { release, namespace: ns, 'logs-dir': dir })
    expectNoStackTrace(run)
    expect(run.code).toBe(0)
    expect(cut.fired).toBe(1)
    expect(readFileSync(join(savedFolder(dir, ns, name), pod, 'main.log'), 'utf8')).toBe(log) // not half of it twice
    await expectPrunedOnce(ns, [name])
  })
})

test('on-running: delete saves the running Job’s logs so far (harvest-logs failed counts it interrupted), then deletes it', async () => {
  const name = `${release}-migrate`
  await heldReleaseJob(ns, name)
  const dir = logsDir()
  const run = await runThrough(proxy, { release, namespace: ns, 'on-running': 'delete', 'logs-dir': dir })
  expectNoStackTrace(run)
  expect(run.code).toBe(0)
  const [pod] = readdirSync(savedFolder(dir, ns, name)).filter((f) => f !== 'job.json')
  expect(readFileSync(join(savedFolder(dir, ns, name), pod, 'main.log'), 'utf8')).toContain('migrate: applying 0042_add_tuples_index')
  // The log was read before the Job was deleted.
  const order = proxy.requests.all.map((r) => `${r.method} ${r.path}`)
  expect(order.findIndex((r) => r.endsWith(`/pods/${pod}/log`))).toBeLessThan(order.findIndex((r) => r.startsWith('DELETE')))
  await expectPrunedOnce(ns, [name])
})

test('a log longer than max-log-bytes keeps its start and its end, with a marker saying how much was cut between; the summary’s last lines are the real end; the Job is pruned', async () => {
  const name = `${release}-migrate`
  const { pod, log } = await failedReleaseJob(name)
  expect(log.length).toBeGreaterThan(100)
  const dir = logsDir()
  const run = await runAction({ release, namespace: ns, 'logs-dir': dir, 'max-log-bytes': '100' })
  expectNoStackTrace(run)
  expect(run.code).toBe(0)
  // A quarter of 100 bytes from the start (it ends mid-line), then the marker on its own line,
  // then the end: the last line whole (the partial line before it is counted as cut).
  const last = log.trimEnd().split('\n').at(-1) ?? ''
  const cut = log.length - 25 - (last.length + 1)
  expect(readFileSync(join(savedFolder(dir, ns, name), pod, 'main.log'), 'utf8')).toBe(`${log.slice(0, 25)}\n${cutMarker(cut)}\n${last}\n`)
  expect(run.summary).toContain(`logs of Job ${ns}/${name}: 1 log(s) longer than max-log-bytes (100 bytes): their start and end are saved, the middle is cut`)
  // The failed Job's last lines in the summary end with the log's last line, where its error is.
  const tail = /<summary>Last lines of failed Job [^<]*<\/summary>\n\n<pre>([^<]*)<\/pre>/.exec(run.summary)?.[1] ?? ''
  expect(tail.split('\n').at(-1)).toBe(last.replaceAll('"', '&quot;'))
  await expectPrunedOnce(ns, [name])
})

test('a log of exactly max-log-bytes is saved whole, without a marker (beside the cut one above)', async () => {
  const name = `${release}-migrate`
  const { pod, log } = await failedReleaseJob(name)
  const size = Buffer.byteLength(log)
  const dir = logsDir()
  const run = await runAction({ release, namespace: ns, 'logs-dir': dir, 'max-log-bytes': String(size) })
  expectNoStackTrace(run)
  expect(run.code).toBe(0)
  expect(readFileSync(join(savedFolder(dir, ns, name), pod, 'main.log'), 'utf8')).toBe(log)
  expect(run.summary).not.toContain('longer than max-log-bytes')
  await expectPrunedOnce(ns, [name])
})

test('post, failure-grace 0: a failed Job’s logs are on disk before its TTL is set', async () => {
  const name = `${release}-migrate`
  const { pod, log } = await failedReleaseJob(name)
  const dir = logsDir()
  const run = await runThrough(proxy, { phase: 'post', release, namespace: ns, 'failure-grace': '0s', 'logs-dir': dir })
  expectNoStackTrace(run)
  expect(run.code).toBe(0)
  expect(outputNames(run, 'ttl-set')).toEqual([name])
  expect(readFileSync(join(savedFolder(dir, ns, name), pod, 'main.log'), 'utf8')).toBe(log)
  const order = proxy.requests.all.map((r) => `${r.method} ${r.path}`)
  expect(order.findIndex((r) => r.endsWith(`/pods/${pod}/log`))).toBeLessThan(order.findIndex((r) => r.startsWith('PATCH')))
})
