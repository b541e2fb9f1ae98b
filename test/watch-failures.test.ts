// Watches that fail, through the fault proxy in front of the real API server. A server that
// accepts connections and never answers (the proxy's `hang` and `unanswered`) is not a quiet watch: a pre wait
// fails with "cluster unreachable" within the retry budget instead of running its whole
// wait-timeout, and post reports it and fails instead of "still running". A watch refused (403)
// while pre waits for a deleted Job to be gone says what failed, and not that time ran out.
import { outputNames } from './action.ts'
import { batchApi, createJob, getJob, testCluster, waitForJobCondition } from './cluster/testenv.ts'
import { startFaultProxy, type FaultProxy, type PauseMode } from './faults/proxy.ts'
import { expectNoStackTrace, heldReleaseJob, runThrough } from './faults/product.ts'
import { finishedReleaseJob, release, releaseAnnotations, useScenario } from './scenario.ts'

const scenario = useScenario('watchfail')
let ns: string
let proxy: FaultProxy
beforeEach(async () => {
  ns = scenario.ns
  proxy = await startFaultProxy(testCluster())
})
afterEach(async () => {
  await proxy.close()
})

const watch = (): { method: string; path: string; query: { watch: string } } => ({
  method: 'GET',
  path: `/apis/batch/v1/namespaces/${ns}/jobs`,
  query: { watch: 'true' }
})
/** The step's errors: core.setFailed joins them into one ::error:: command, newlines as %0A. */
const errorLines = (stdout: string): string[] =>
  stdout
    .split('\n')
    .filter((l) => l.startsWith('::error::'))
    .flatMap((l) => l.slice('::error::'.length).split('%0A'))

// The retry budget is 60 s; a watch attempt that gets no answer takes 30 s (client-node's
// deadline), and the Lease's last renewal may still be retrying. Far under the 10m waits below.
const BOUND_MS = 120_000

describe('the API server stops answering while a watch waits', () => {
  // hang: connections accepted, TLS never completes (the client's connect timeout fires);
  // unanswered: TLS completes and requests are read, never answered (only the answer's deadline
  // fires, which client-node's Watch also uses for a quiet stream).
  test.each<[PauseMode, RegExp]>([
    ['unanswered', /\(last: no answer to the watch of Jobs in namespace \S+ within 30s\)/],
    ['hang', /\(last: .*(UND_ERR_CONNECT_TIMEOUT|no answer to the watch)/]
  ])(
    'pre (%s): the wait fails with "cluster unreachable" within the retry budget, not after its wait-timeout, and nothing is deleted',
    async (mode, last) => {
      const name = `${release}-migrate`
      const held = await heldReleaseJob(ns, name)
      await finishedReleaseJob(ns, `${release}-old`)
      const pending = runThrough(proxy, { release, namespace: ns, 'on-running': 'wait', 'wait-timeout': '10m' })
      await proxy.requests.waitFor(watch(), 1, 120_000)
      await proxy.pause(mode)
      const downAt = Date.now()
      const run = await pending
      const failedAfterMs = Date.now() - downAt
      console.log(`pre (${mode}): the step failed ${(failedAfterMs / 1000).toFixed(1)} s after the API server stopped answering`)
      expectNoStackTrace(run)
      expect(run.code).toBe(1)
      expect(failedAfterMs).toBeLessThan(BOUND_MS)
      const errors = errorLines(run.stdout).join('\n')
      expect(errors).toMatch(/cluster unreachable: the watch of Jobs in namespace \S+ kept failing for \d+s/)
      expect(errors).toMatch(last)
      expect(errors).not.toContain('did not finish within wait-timeout')
      expect(errors).toContain('nothing was deleted')
      expect(JSON.parse(run.outputs.kept)).toContainEqual(expect.objectContaining({ name, reason: expect.stringContaining('not seen finished') }))
      expect(outputNames(run, 'pruned')).toEqual([])
      await proxy.resume()
      expect(await getJob(ns, name)).toBeDefined()
      expect(await getJob(ns, `${release}-old`)).toBeDefined() // all or nothing: the finished one waits too
      await held.release()
    },
    240_000
  )

  test('post with wait-for-jobs (unanswered): it reports the cluster unreachable and fails, instead of "still running" and success', async () => {
    const name = `${release}-migrate`
    const held = await heldReleaseJob(ns, name)
    const pending = runThrough(proxy, { phase: 'post', release, namespace: ns, 'wait-for-jobs': '10m', ttl: '1h', 'failure-grace': '2h' })
    await proxy.requests.waitFor(watch(), 1, 120_000)
    await proxy.pause('unanswered')
    const downAt = Date.now()
    const run = await pending
    const failedAfterMs = Date.now() - downAt
    console.log(`post (unanswered): the step failed ${(failedAfterMs / 1000).toFixed(1)} s after the API server stopped answering`)
    expectNoStackTrace(run)
    expect(run.code).toBe(1)
    expect(failedAfterMs).toBeLessThan(BOUND_MS)
    expect(errorLines(run.stdout).join('\n')).toMatch(/cluster unreachable: the watch of Jobs in namespace \S+ kept failing/)
    expect(run.stdout).not.toContain('was still running after wait-for-jobs')
    expect(run.summary).toMatch(/cluster unreachable/)
    await proxy.resume()
    // The TTL set before the wait stands: the upper bound, 2h.
    expect((await getJob(ns, name))?.spec?.ttlSecondsAfterFinished).toBe(7200)
    await held.release()
  }, 240_000)
})

test('a watch refused (403) while pre waits for a deleted Job to be gone: it says what failed and that whether it is gone is unknown, not that time ran out', async () => {
  const [held, plain] = [`${release}-held`, `${release}-plain`]
  // A finalizer not Kubernetes' own keeps the deleted Job present; the other goes at once.
  await createJob({ namespace: ns, name: held, annotations: releaseAnnotations(ns) })
  await waitForJobCondition(ns, held, 'Complete')
  await batchApi().patchNamespacedJob({ name: held, namespace: ns, body: [{ op: 'add', path: '/metadata/finalizers', value: ['example.com/hold'] }] })
  await finishedReleaseJob(ns, plain)
  const forbidden = proxy.addRule({ ...watch(), fault: { kind: 'status', code: 403 } })
  try {
    const started = Date.now()
    const run = await runThrough(proxy, { release, namespace: ns, 'wait-timeout': '10m' })
    expectNoStackTrace(run)
    expect(run.code).toBe(1)
    expect(forbidden.fired).toBe(1)
    expect(Date.now() - started).toBeLessThan(60_000) // no time ran out
    const errors = errorLines(run.stdout)
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatch(
      new RegExp(
        `^Job ${ns}/${held} was deleted, but whether it is gone is unknown: cannot watch Jobs in namespace ${ns}: 403 .*\\(the credentials lack 'watch' on jobs\\.batch\\); it was still there when read right after$`
      )
    )
    expect(errors[0]).not.toContain('not gone after')
    const row = JSON.parse(run.outputs.kept).find((j: { name: string }) => j.name === held)
    expect(row.reason).toMatch(
      /^deleted, but not seen gone: the watch failed \(cannot watch Jobs .* 403 .*\); it was still there when read right after, so whether it is gone is unknown$/
    )
    // Positive control: the Job without a finalizer was read once, found gone, and counts as pruned.
    expect(outputNames(run, 'pruned')).toEqual([plain])
    expect(await getJob(ns, plain)).toBeUndefined()
    expect((await getJob(ns, held))?.metadata?.deletionTimestamp).toBeDefined()
  } finally {
    await batchApi().patchNamespacedJob({ name: held, namespace: ns, body: [{ op: 'remove', path: '/metadata/finalizers' }] })
  }
})
