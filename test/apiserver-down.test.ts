/** @cluster whole: it stops kube-apiserver, which every other suite needs */
// The API server lost in the middle of a pre phase: killed and started again (the real process,
// SIGKILL), and gone for good (the fault proxy refusing, or accepting and never answering). A run
// either finishes or fails within the documented 60 s retry budget with 'cluster unreachable' in
// words; it never deletes a decoy nor prints a stack trace, and a re-run finishes the work.
import { runAction, outputNames } from './action.ts'
import { runCli } from './bin.ts'
import { apiServerPid, restartApiServer, startApiServerAgain } from './cluster/apiserver.ts'
import { restartControllers } from './cluster/controllers.ts'
import { isAlive } from './cluster/processes.ts'
import { createNamespace, deleteNamespace, testCluster } from './cluster/testenv.ts'
import { createDecoys, missingDecoys, type Decoy } from './decoys.ts'
import { startFaultProxy, type FaultProxy, type PauseMode } from './faults/proxy.ts'
import { expectNoStackTrace, jobNames, releaseJobs, sweptEvents } from './faults/product.ts'
import { release } from './scenario.ts'

let ns: string
let otherNs: string
let decoys: Decoy[] = []
let proxy: FaultProxy | undefined

beforeEach(async () => {
  ns = await createNamespace('down')
  otherNs = await createNamespace('down-other')
  decoys = await createDecoys(ns, otherNs, release)
})
afterEach(async () => {
  // A failed test must not leave the cluster without its API server, nor the proxy paused.
  const pid = apiServerPid(testCluster().dir)
  if (!pid || !isAlive(pid)) await startApiServerAgain(testCluster())
  await proxy?.close()
  proxy = undefined
  expect(await missingDecoys(decoys)).toEqual([])
  console.log(`${decoys.length} decoys kept`)
  await Promise.all([deleteNamespace(ns), deleteNamespace(otherNs)])
})
// The restart grew the controllers' reconnect backoff: later test files need a cluster that acts at once.
afterAll(async () => {
  await restartControllers(testCluster())
})

const DELETE = { method: 'DELETE', path: /\/jobs\/[^/]+$/ }
const inScope = (names: string[], left: string[]): string[] => names.filter((n) => left.includes(n))
/** The CLI's --json result. */
const json = (stdout: string): { pruned: { name: string }[]; errors: string[]; 'pruned-count': number } => JSON.parse(stdout)

test('killed after ~30 of 150 deletes and started again 4 s later: the run finishes or fails clearly; a re-run finishes the work; a third has nothing to do', async () => {
  const names = await releaseJobs(ns, `${release}-job`, 150)
  proxy = await startFaultProxy(testCluster())
  const pending = runCli(['pre', '--release', release, '--namespace', ns, '--json'], proxy.env())
  await proxy.requests.waitFor(DELETE, 30, 120_000)
  const deletesBefore = proxy.requests.count(DELETE)
  const restart = await restartApiServer(testCluster(), 4000)
  const first = await pending
  console.log(
    `killed after ${deletesBefore} deletes, down ${restart.downMs} ms, unavailable ${restart.unavailableMs} ms; first run exit ${first.code}, ${json(first.stdout)['pruned-count']} pruned`
  )
  expect(deletesBefore).toBeLessThan(names.length) // mid-run
  expectNoStackTrace(first)
  if (first.code !== 0) expect(json(first.stdout).errors.join('\n')).toMatch(/cluster unreachable/)
  else expect(inScope(names, await jobNames(ns))).toEqual([])

  const second = await runCli(['pre', '--release', release, '--namespace', ns, '--json'])
  expectNoStackTrace(second)
  expect(second.code).toBe(0)
  expect(inScope(names, await jobNames(ns))).toEqual([])
  // Every Job pruned by one of the runs has one Event; one whose delete's answer died with the
  // server may have none (the re-run found it gone), but none has two.
  const events = await sweptEvents(ns)
  expect(new Set(events).size).toBe(events.length)
  expect(events.length).toBeGreaterThanOrEqual(names.length - 8)

  const third = await runCli(['pre', '--release', release, '--namespace', ns, '--json'])
  expect(third.code).toBe(0)
  expect(json(third.stdout)['pruned-count']).toBe(0)
})

/** Runs a pre phase on `n` Jobs through the proxy and makes the API server unreachable after 20 deletes. */
async function goneForGood(mode: PauseMode, n: number): Promise<{ names: string[]; failedAfterMs: number; run: Awaited<ReturnType<typeof runAction>> }> {
  const names = await releaseJobs(ns, `${release}-job`, n)
  proxy = await startFaultProxy(testCluster())
  const pending = runAction({ release, namespace: ns }, { env: proxy.env() })
  await proxy.requests.waitFor(DELETE, 20, 120_000)
  await proxy.pause(mode)
  const downAt = Date.now()
  const run = await pending
  const failedAfterMs = Date.now() - downAt
  console.log(`unreachable (${mode}) after 20 of ${n} deletes: the step failed ${(failedAfterMs / 1000).toFixed(1)} s later`)
  return { names, failedAfterMs, run }
}

test.each<[PauseMode, number]>([
  ['refuse', 90_000],
  // Each attempt waits for its connect timeout: up to one more attempt's worth.
  ['hang', 120_000]
])(
  'unreachable for good (%s) mid-run: the step fails within the 60 s budget, says "cluster unreachable" once, and reports what it did',
  async (mode, bound) => {
    const { names, failedAfterMs, run } = await goneForGood(mode, 100)
    expectNoStackTrace(run)
    // The action: a failed step exits 1 whatever failed (the CLI's exit 3 is its own, see cli.test.ts).
    expect(run.code).toBe(1)
    expect(failedAfterMs).toBeLessThan(bound)
    const errors = run.stdout.split('\n').filter((l) => l.startsWith('::error::'))
    console.log(errors[0])
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatch(/cluster unreachable/)
    // The output does not grow with the Jobs left undone.
    expect(errors[0].split('%0A').length).toBeLessThanOrEqual(3)
    expect(run.summary).toMatch(/cluster unreachable/)
    const pruned = outputNames(run, 'pruned')
    expect(pruned.length).toBeGreaterThanOrEqual(20 - 8)
    for (const name of pruned) expect(await jobNames(ns)).not.toContain(name)

    await proxy?.resume()
    const again = await runAction({ release, namespace: ns })
    expect(again.code).toBe(0)
    expect(inScope(names, await jobNames(ns))).toEqual([])
  }
)
