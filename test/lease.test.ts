// Concurrent runs on one scope take turns through a Lease: two pre phases started at once on one
// release both succeed, the second waits for the first and plans on what it left, and every Job is
// deleted once, by the first. A dead run's expired Lease is taken over; a live one is waited for.
import { join } from 'node:path'
import { CoordinationV1Api, V1MicroTime } from '@kubernetes/client-node'
import { expectSucceeded, outputNames, runAction, WORKFLOW_RUN_ENV } from './action.ts'
import { createFinishedJobs } from './bench/finished-jobs.ts'
import { HOLD_LABEL } from './cluster/kwok.ts'
import { coreApi, createJob, getJob, kubeConfig, testCluster } from './cluster/testenv.ts'
import { runAsync } from './faults/observe.ts'
import { finishedReleaseJob, release, releaseAnnotations, useScenario } from './scenario.ts'
import { createServiceAccount, tokenKubeconfig } from './service-account.ts'
import { leaseName } from '../src/kube/lease.ts'

const scenario = useScenario('lease')
const coordination = (): CoordinationV1Api => kubeConfig().makeApiClient(CoordinationV1Api)
const name = leaseName({ release })
const runUrl = (id: string): string => `${WORKFLOW_RUN_ENV.GITHUB_SERVER_URL}/${WORKFLOW_RUN_ENV.GITHUB_REPOSITORY}/actions/runs/${id}`

async function leaseExists(namespace: string): Promise<boolean> {
  return coordination()
    .readNamespacedLease({ namespace, name })
    .then(() => true)
    .catch((e: { code?: number }) => (e.code === 404 ? false : Promise.reject(e)))
}

test('two pre phases at once on one release: the second waits for the first, re-plans, and no Job is deleted twice', async () => {
  const ns = scenario.ns
  const { names } = await createFinishedJobs(kubeConfig(), ns, 40, { prefix: `${release}-job`, annotations: releaseAnnotations(ns) })
  // A migration that runs until the winner has renewed its Lease (every 10 s) once: whichever run
  // wins waits for it, so the two overlap however slowly the machine starts them.
  await createJob({ namespace: ns, name: `${release}-migrate`, annotations: releaseAnnotations(ns), behaviour: 'hold' })
  const inputs = { release, namespace: ns, 'wait-timeout': '2m' }
  let running = true
  let held = true
  const renewals = new Set<string>() // holder → renewTime, as seen while the runs go on
  const watching = (async () => {
    while (running) {
      const lease = await coordination()
        .readNamespacedLease({ namespace: ns, name })
        .catch(() => undefined)
      if (lease?.spec?.renewTime && lease.spec.acquireTime && lease.spec.renewTime > lease.spec.acquireTime) renewals.add(lease.spec.holderIdentity ?? '')
      if (held && renewals.size > 0) {
        held = false
        // kubectl as a child process: the runs' API calls go on meanwhile.
        const done = await runAsync(join(testCluster().binDir, 'kubectl'), ['label', 'pod', '-n', ns, '-l', `job-name=${release}-migrate`, `${HOLD_LABEL}-`], {
          KUBECONFIG: testCluster().kubeconfig
        })
        if (done.code !== 0) throw new Error(`could not let the migration finish: ${done.stderr}`)
      }
      await new Promise((r) => setTimeout(r, 500))
    }
  })()
  const runs = await Promise.all(
    ['1001', '1002'].map((id) => runAction(inputs, { env: { ...WORKFLOW_RUN_ENV, GITHUB_RUN_ID: id } }).then((run) => ({ id, run })))
  ).finally(() => (running = false))
  await watching
  for (const { run } of runs) expectSucceeded(run)
  for (const { run } of runs) expect(run.stdout.split('\n').filter((l) => l.startsWith('::warning'))).toEqual([])
  const waiting = runs.filter(({ run }) => run.stdout.includes('waiting for another run on the same scope to finish'))
  expect(waiting).toHaveLength(1)
  const second = waiting[0]
  const first = runs.find((r) => r !== second) as (typeof runs)[number]
  // One short line says who holds the Lease: the first run, by its URL.
  const line = second.run.stdout.split('\n').find((l) => l.includes('waiting for another run')) ?? ''
  expect(line).toMatch(new RegExp(`^waiting for another run on the same scope to finish: ${runUrl(first.id)}#\\S+ holds Lease ${ns}/${name}$`))

  const all = [...names, `${release}-migrate`].sort()
  expect(outputNames(first.run, 'pruned')).toEqual(all)
  expect(outputNames(first.run, 'waited')).toEqual([`${release}-migrate`])
  // The second run observed after the first was done: nothing of the release was left but the hook.
  expect(outputNames(second.run, 'pruned')).toEqual([])
  expect(outputNames(second.run, 'kept')).toEqual([`${release}-pre-upgrade-hook`])

  // Exactly one JobSwept Event per Job, each naming the first run.
  const events = (await coreApi().listNamespacedEvent({ namespace: ns, fieldSelector: 'reason=JobSwept' })).items
  expect(events.map((e) => e.involvedObject.name).sort()).toEqual(all)
  expect(events.filter((e) => !e.message?.includes(`(workflow run ${runUrl(first.id)})`))).toEqual([])
  for (const job of all) expect(await getJob(ns, job)).toBeUndefined()
  expect(await leaseExists(ns)).toBe(false) // released at the end
  // The first run renewed its Lease while it waited for the migration.
  expect([...renewals].map((h) => h.split('#')[0])).toEqual([runUrl(first.id)])
})

describe('a Lease another run holds', () => {
  let ns: string
  beforeEach(async () => {
    ns = scenario.ns
    await finishedReleaseJob(ns, `${release}-migrate`)
  })

  const holdLease = (renewedSecondsAgo: number, holder: string): Promise<unknown> =>
    coordination().createNamespacedLease({
      namespace: ns,
      body: {
        metadata: { name },
        spec: { holderIdentity: holder, leaseDurationSeconds: 30, renewTime: new V1MicroTime(Date.now() - renewedSecondsAgo * 1000) }
      }
    })

  /** Renews the Lease every 3 s, as its holder would, until the returned function is called. */
  const keepRenewing = (): (() => Promise<void>) => {
    let renewing = Promise.resolve()
    const timer = setInterval(() => {
      renewing = renewing.then(async () => {
        const lease = await coordination().readNamespacedLease({ namespace: ns, name })
        lease.spec = { ...lease.spec, renewTime: new V1MicroTime(Date.now()) }
        await coordination().replaceNamespacedLease({ namespace: ns, name, body: lease })
      })
    }, 3000)
    return async () => {
      clearInterval(timer)
      await renewing
    }
  }

  test('alive (renewed every 3 s by its holder): the run waits up to wait-timeout, then fails naming the holder, and deletes nothing', async () => {
    await holdLease(0, `${runUrl('77')}#runner-7`)
    const stopRenewing = keepRenewing()
    const run = await runAction({ release, namespace: ns, 'wait-timeout': '3s' }).finally(stopRenewing)
    expect(run.code).toBe(1)
    expect(run.stdout).toContain(`waiting for another run on the same scope to finish: ${runUrl('77')}#runner-7 holds Lease ${ns}/${name}`)
    expect(run.stdout).toContain(
      `::error::Lease ${ns}/${name} is still held by ${runUrl('77')}#runner-7 (another job-sweeper run on the same scope) after wait-timeout 3s; nothing was changed`
    )
    expect(await getJob(ns, `${release}-migrate`)).toBeDefined()
    expect(await leaseExists(ns)).toBe(true) // not ours to delete
  })

  test('expired (its run died 5 minutes ago, by its renewTime): the run does not trust the holder’s clock, sees no renewal for 30 s by its own, takes it over (past its 3 s wait-timeout), prunes, and releases it', async () => {
    await holdLease(300, 'dead-runner-4242')
    const started = Date.now()
    const run = await runAction({ release, namespace: ns, 'wait-timeout': '3s' })
    expectSucceeded(run)
    expect(Date.now() - started).toBeGreaterThan(30_000)
    expect(run.stdout).toContain(`waiting for another run on the same scope to finish: dead-runner-4242 holds Lease ${ns}/${name}`)
    expect(run.stdout).toContain(`took over Lease ${ns}/${name} from dead-runner-4242: it expired`)
    expect(outputNames(run, 'pruned')).toEqual([`${release}-migrate`])
    expect(await leaseExists(ns)).toBe(false)
  })
})

test('credentials that may not use Leases (403): the run goes on without the lock and warns', async () => {
  const ns = scenario.ns
  await finishedReleaseJob(ns, `${release}-migrate`)
  // The README's Role as it was before Leases: Jobs, pods, logs and events only.
  const rules = [
    { apiGroups: ['batch'], resources: ['jobs'], verbs: ['get', 'list', 'watch', 'delete', 'patch', 'update'] },
    { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
    { apiGroups: [''], resources: ['pods/log'], verbs: ['get'] },
    { apiGroups: [''], resources: ['events'], verbs: ['create'] }
  ]
  await createServiceAccount(ns, 'old-role', { rules })
  const { kubeconfig } = tokenKubeconfig(ns, 'old-role')
  const run = await runAction({ kubeconfig, release }, { env: { KUBECONFIG: '/nonexistent' } })
  expectSucceeded(run)
  expect(outputNames(run, 'pruned')).toEqual([`${release}-migrate`])
  expect(run.stdout).toMatch(
    /::warning::no lock: the credentials may not use Leases \(.*forbidden.*\), so a concurrent job-sweeper run on the same scope is not kept out/
  )
  expect(await leaseExists(ns)).toBe(false)
})
