// Whether a keeper runs, decided by post on its own clock, never on the keeper's: a Lease
// job-sweeper-keeper written by the test with a renewTime off by a minute, on the real API server,
// and post run in this process from src/ (run.ts phaseOnCluster). A keeper whose clock runs a minute
// ahead and that died is no keeper: post watches its Lease for 30 s, sees no change, and holds
// nothing. A live keeper whose clock runs a minute behind (its Lease renewed every 3 s, each
// renewTime a minute old) is one: post sees the renewal and holds the Job for it. The unit side
// is test/unit/lease-liveness.test.ts.
import { mkdtempSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CoordinationV1Api, V1MicroTime, type V1Lease } from '@kubernetes/client-node'
import { KEEPER_LEASE, KEEPER_SCOPE_ANNOTATION } from '../src/kube/lease.ts'
import { LOGS_FINALIZER } from '../src/plan/keeper.ts'
import { MANAGED_LABEL } from '../src/plan/retention.ts'
import type { Console } from '../src/report/console.ts'
import { phaseOnCluster } from '../src/run.ts'
import { parseSettings } from '../src/settings/settings.ts'
import { createJob, getJob, kubeConfig, kubectl, testCluster, waitForJobCondition } from './cluster/testenv.ts'
import { useScenario } from './scenario.ts'

const scenario = useScenario('keeper-clock', async (decoys) => {
  // post's selector takes none of them: none held, none labelled.
  for (const d of decoys) expect((await getJob(d.namespace, d.name))?.metadata?.finalizers ?? []).not.toContain(LOGS_FINALIZER)
})
const coordination = (): CoordinationV1Api => kubeConfig().makeApiClient(CoordinationV1Api)
const SELECTOR = 'app=clock-post'

/** The keeper's Lease in the scenario's other namespace, as a keeper of `ns` writes it, its renewTime `skewSeconds` off. */
function keeperLease(ns: string, holder: string, skewSeconds: number, resourceVersion?: string): V1Lease {
  return {
    metadata: {
      name: KEEPER_LEASE,
      resourceVersion,
      annotations: { [KEEPER_SCOPE_ANNOTATION.namespaces]: ns, [KEEPER_SCOPE_ANNOTATION.selector]: `${MANAGED_LABEL}=true` }
    },
    spec: { holderIdentity: holder, leaseDurationSeconds: 30, renewTime: new V1MicroTime(Date.now() + skewSeconds * 1000) }
  }
}

/** `phase` over the scenario's Jobs, in this process; what it printed, and how long it took. */
async function phaseRun(phase: 'post' | 'pre', ns: string, keeperNs: string, more: Record<string, string> = {}): Promise<{ output: string; seconds: number }> {
  const inputs: Record<string, string> = {
    phase,
    namespace: ns,
    selector: SELECTOR,
    'harvest-logs': 'none',
    'keeper-namespace': keeperNs,
    kubeconfig: testCluster().kubeconfig,
    ...more
  }
  const settings = parseSettings((n) => inputs[n] ?? '', {})
  const lines: string[] = []
  const console: Console = { info: (m) => lines.push(m), warning: (m) => lines.push(`warning: ${m}`), group: (_, fn) => fn() }
  const started = Date.now()
  const result = await phaseOnCluster(phase, settings, { console, mask: () => undefined })
  expect(result.errors).toEqual([])
  return { output: lines.join('\n'), seconds: (Date.now() - started) / 1000 }
}
const post = (ns: string, keeperNs: string): ReturnType<typeof phaseRun> => phaseRun('post', ns, keeperNs)

/** The Job post works on, running; its hold removed at the end, so that its namespace can go. */
async function runningJob(ns: string): Promise<void> {
  await createJob({ namespace: ns, name: 'app-migrate', behaviour: 'hold', labels: { app: 'clock-post' } })
}
function letGo(ns: string): void {
  expect(kubectl('patch', 'job', 'app-migrate', '-n', ns, '--type=merge', '-p', '{"metadata":{"finalizers":null}}').code).toBe(0)
}

test('a keeper that died, its clock a minute ahead (renewTime 60 s in the future, never renewed): post watches its Lease 30 s, holds nothing, and says why', async () => {
  const { ns, otherNs } = scenario
  await coordination().createNamespacedLease({ namespace: otherNs, body: keeperLease(ns, 'keeper-fast-clock', 60) })
  await runningJob(ns)
  const { output, seconds } = await post(ns, otherNs)
  expect(output).toContain(`keeper-namespace '${otherNs}': watching the keeper's Lease ${KEEPER_LEASE} for a renewal (up to 30s)…`)
  expect(output).toContain(
    `keeper-namespace '${otherNs}': no keeper running: its Lease ${KEEPER_LEASE} was not renewed in the 30s this run watched it: no Job is held for one`
  )
  expect(seconds).toBeGreaterThanOrEqual(30)
  const job = await getJob(ns, 'app-migrate')
  expect(job?.metadata?.finalizers ?? []).not.toContain(LOGS_FINALIZER)
  expect(job?.spec?.ttlSecondsAfterFinished).toBe(86400) // positive control: post did patch it, its TTL alone (running: failure-grace)
  expect((await coordination().readNamespacedLease({ namespace: otherNs, name: KEEPER_LEASE })).spec?.holderIdentity).toBe('keeper-fast-clock')
}, 90_000)

test('positive control: a live keeper, its clock a minute behind (renewed every 3 s, each renewTime 60 s in the past): post sees it renewed and holds the Job for it', async () => {
  const { ns, otherNs } = scenario
  const created = await coordination().createNamespacedLease({ namespace: otherNs, body: keeperLease(ns, 'keeper-slow-clock', -60) })
  let version = created.metadata?.resourceVersion
  const renewing = setInterval(() => {
    void coordination()
      .replaceNamespacedLease({ namespace: otherNs, name: KEEPER_LEASE, body: keeperLease(ns, 'keeper-slow-clock', -60, version) })
      .then((l) => (version = l.metadata?.resourceVersion))
  }, 3_000)
  await runningJob(ns)
  try {
    const { output, seconds } = await post(ns, otherNs)
    expect(output).toMatch(new RegExp(`keeper-namespace '${otherNs}': a keeper runs \\(keeper-slow-clock, its Lease seen renewed after \\d+s\\)`))
    expect(output).toContain(`held for the keeper (${LOGS_FINALIZER})`)
    expect(seconds).toBeLessThan(30) // the watch stops at the first renewal seen
    const job = await getJob(ns, 'app-migrate')
    expect(job?.metadata?.finalizers).toContain(LOGS_FINALIZER)
    expect(job?.spec?.ttlSecondsAfterFinished).toBeUndefined() // the TTL waits for the keeper's archive
  } finally {
    clearInterval(renewing)
    letGo(ns)
  }
}, 90_000)

test('pre: a held Job, its keeper dead with its clock a minute ahead: pre watches the Lease 30 s, saves the Job’s logs itself, lets go of the hold and deletes it', async () => {
  const { ns, otherNs } = scenario
  await coordination().createNamespacedLease({ namespace: otherNs, body: keeperLease(ns, 'keeper-fast-clock', 60) })
  await createJob({ namespace: ns, name: 'app-migrate', labels: { app: 'clock-post' } })
  await waitForJobCondition(ns, 'app-migrate', 'Complete')
  expect(kubectl('patch', 'job', 'app-migrate', '-n', ns, '--type=merge', '-p', JSON.stringify({ metadata: { finalizers: [LOGS_FINALIZER] } })).code).toBe(0)
  const logsDir = mkdtempSync(join(tmpdir(), 'keeper-clock-'))
  const { output, seconds } = await phaseRun('pre', ns, otherNs, { 'logs-dir': logsDir })
  expect(output).toContain(`keeper-namespace '${otherNs}': watching the keeper's Lease ${KEEPER_LEASE} for a renewal (up to 30s)…`)
  expect(output).toContain(`no keeper: its Lease ${KEEPER_LEASE} was not renewed in the 30s this run watched it`)
  expect(seconds).toBeGreaterThanOrEqual(30)
  expect(await getJob(ns, 'app-migrate')).toBeUndefined() // let go and deleted, seen gone
  const saved = readdirSync(join(logsDir, ns, 'app-migrate'), { recursive: true }).map(String)
  expect(saved.some((f) => f.endsWith('job.json'))).toBe(true) // its logs saved by pre, the hold having asked for them
}, 90_000)
