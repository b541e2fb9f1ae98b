// The pre phase end to end: the bundled action (node dist/index.js, run as the runner runs it)
// against the real cluster, with the real helm, and decoys that must survive every scenario.
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expectSucceeded, outputNames, runAction, WORKFLOW_RUN_ENV, WORKFLOW_RUN_URL, type ActionRun } from './action.ts'
import {
  batchApi,
  coreApi,
  createJob,
  escapeRegExp,
  eventually,
  getJob,
  jobCondition,
  kubectl,
  missingImage,
  testOnRealNode,
  waitForJobCondition,
  type CommandResult
} from './cluster/testenv.ts'
import { pinnedKubernetesVersion } from './cluster/cluster.ts'
import type { V1Pod } from '@kubernetes/client-node'
import type { Decoy } from './decoys.ts'
import { finishedReleaseJob, helmChart, immutableJobError, release, releaseAnnotations, useScenario } from './scenario.ts'
import { savedFolder } from './saved-folder.ts'

const scenario = useScenario('pre')
let ns: string
beforeEach(() => {
  ns = scenario.ns
})

function install(values: Record<string, string>): void {
  const result = helmChart('install', ns, values, '--wait', '--wait-for-jobs')
  if (result.code !== 0) throw new Error(`helm install failed: ${result.stderr}`)
}

const upgrade = (values: Record<string, string>): CommandResult => helmChart('upgrade', ns, values)

/** A Job of the release as Helm would have left it, whose pod is held Running. */
async function runningReleaseJob(name: string): Promise<string> {
  const job = await createJob({ namespace: ns, name, behaviour: 'hold', annotations: releaseAnnotations(ns) })
  await eventually(
    `${name} running`,
    () => getJob(ns, name),
    (j) => j?.status?.active === 1
  )
  return job.metadata?.uid ?? ''
}

const releaseHold = (name: string): void => {
  expect(kubectl('label', 'pod', '-n', ns, '-l', `job-name=${name}`, 'job-sweeper.test/hold-').code).toBe(0)
}

describe('release scope', () => {
  test('the upgrade that fails on the changed migration Job succeeds right after the pre phase', async () => {
    install({ migrationVersion: '1' })
    const before = await getJob(ns, `${release}-migrate`)
    expect(upgrade({ migrationVersion: '2' }).stderr).toMatch(immutableJobError(ns, `${release}-migrate`))

    const run = await runAction({ release, namespace: ns }, { env: WORKFLOW_RUN_ENV })
    expectSucceeded(run)
    expect(outputNames(run, 'pruned')).toEqual([`${release}-migrate`])
    // The hook decoy is of the same release: in scope, kept, and the summary says why.
    expect(outputNames(run, 'kept')).toEqual([`${release}-pre-upgrade-hook`])
    expect(JSON.parse(run.outputs.kept)[0].reason).toContain('hook Job (helm.sh/hook: pre-upgrade)')
    expect(run.summary).toContain('**✅ 1 pruned · 1 kept**')
    expect(await getJob(ns, `${release}-migrate`)).toBeUndefined()
    expect((await coreApi().listNamespacedPod({ namespace: ns, labelSelector: `batch.kubernetes.io/controller-uid=${before?.metadata?.uid}` })).items).toEqual(
      []
    )

    const events = await coreApi().listNamespacedEvent({ namespace: ns, fieldSelector: 'reason=JobSwept' })
    expect(events.items.map((e) => e.involvedObject.name)).toEqual([`${release}-migrate`])
    expect(events.items[0].message).toContain(`(workflow run ${WORKFLOW_RUN_URL})`)

    const upgraded = upgrade({ migrationVersion: '2' })
    expect(upgraded.stderr).toBe('')
    expect(upgraded.code).toBe(0)
  })

  test('include-hooks sweeps the hook Job of the release too', async () => {
    install({ migrationVersion: '1' })
    const hook = scenario.decoys.find((d) => d.why === 'a Helm hook Job') as Decoy
    scenario.decoys = scenario.decoys.filter((d) => d !== hook)
    await waitForJobCondition(ns, hook.name, 'Complete')
    const run = await runAction({ release, namespace: ns, 'include-hooks': 'true' })
    expectSucceeded(run)
    expect(outputNames(run, 'pruned')).toEqual([`${release}-migrate`, hook.name])
    expect(await getJob(ns, hook.name)).toBeUndefined()
  })
})

describe('manifest scope', () => {
  function template(values: Record<string, string>): string {
    const rendered = helmChart('template', ns, values, '--kube-version', pinnedKubernetesVersion())
    expect(rendered.stderr).toBe('')
    const file = join(mkdtempSync(join(tmpdir(), 'rendered-')), 'rendered.yaml')
    writeFileSync(file, rendered.stdout)
    return file
  }

  test('a Job whose rendered template changed is pruned, and the upgrade succeeds', async () => {
    install({ migrationVersion: '1' })
    const run = await runAction({ manifest: template({ migrationVersion: '2' }), namespace: ns })
    expectSucceeded(run)
    expect(outputNames(run, 'pruned')).toEqual([`${release}-migrate`])
    expect(JSON.parse(run.outputs.pruned)[0].reason).toContain('differs from the rendered manifest')
    expect(upgrade({ migrationVersion: '2' }).code).toBe(0)
  })

  test('an unchanged Job is kept, and the upgrade still succeeds', async () => {
    install({ migrationVersion: '1' })
    const before = await getJob(ns, `${release}-migrate`)
    const run = await runAction({ manifest: template({ migrationVersion: '1' }), namespace: ns })
    expectSucceeded(run)
    expect(outputNames(run, 'pruned')).toEqual([])
    const kept = JSON.parse(run.outputs.kept) as { name: string; reason: string }[]
    expect(kept.find((k) => k.name === `${release}-migrate`)?.reason).toBe('unchanged — the upgrade will not touch it')
    expect((await getJob(ns, `${release}-migrate`))?.metadata?.uid).toBe(before?.metadata?.uid)
    expect(upgrade({ migrationVersion: '1' }).code).toBe(0)
  })
})

describe('a conflicting Job still running', () => {
  test('wait: proceeds once it completes, then deletes it', async () => {
    const name = `${release}-migrate`
    await runningReleaseJob(name)
    const pending = runAction({ release, namespace: ns, 'on-running': 'wait', 'wait-timeout': '2m' })
    await new Promise((r) => setTimeout(r, 3000))
    expect(jobCondition(await getJob(ns, name))).toBeUndefined() // still running, still there
    releaseHold(name)
    const run = await pending
    expectSucceeded(run)
    expect(outputNames(run, 'waited')).toEqual([name])
    expect(outputNames(run, 'pruned')).toEqual([name])
    expect(run.stdout).toContain(`Job ${ns}/${name} finished: succeeded`)
    expect(await getJob(ns, name)).toBeUndefined()
    // The row tells what happened, and when the Job really finished: as re-read after the wait.
    expect(run.summary).toMatch(new RegExp(`^\\| ${name} \\| succeeded \\| waited [^|]+, then pruned \\| \\d\\d:\\d\\d:\\d\\d UTC \\(\\d+s ago\\) \\|`, 'm'))
  })

  test("wait: its pod's log lines appear in the step's log while it runs (the hold is released only once they did), each prefixed namespace/job/pod/container", async () => {
    const name = `${release}-migrate`
    await runningReleaseJob(name)
    let live = ''
    const pending = runAction({ release, namespace: ns, 'on-running': 'wait', 'wait-timeout': '2m' }, { onOutput: (t) => (live += t) })
    const streamed = new RegExp(`^${ns}/${name}/${name}-[a-z0-9]+/main \\| (.* )?migrate: connecting to database$`, 'm')
    // The Job is still held Running: only the live follow can have printed its log by now.
    await eventually(
      'the live log line',
      async () => live,
      (out) => streamed.test(out),
      60_000
    )
    expect(jobCondition(await getJob(ns, name))).toBeUndefined()
    releaseHold(name)
    const run = await pending
    expectSucceeded(run)
    expect(run.stdout).toMatch(new RegExp(`^${ns}/${name}/${name}-[a-z0-9]+/main \\| (.* )?migrate: ERROR: relation "tuples" already exists$`, 'm'))
    expect(run.stdout.indexOf('migrate: connecting to database')).toBeLessThan(run.stdout.indexOf(`Job ${ns}/${name} finished: succeeded`))
    expect(outputNames(run, 'pruned')).toEqual([name])
  })

  test('wait with stream-logs: false: no log line in the step (the run above, streaming on, is the control)', async () => {
    const name = `${release}-migrate`
    await runningReleaseJob(name)
    const pending = runAction({ release, namespace: ns, 'on-running': 'wait', 'wait-timeout': '2m', 'stream-logs': 'false' })
    // Longer than the pods' 5 s poll that starts the follows, so a follow would have printed.
    await new Promise((r) => setTimeout(r, 12_000))
    releaseHold(name)
    const run = await pending
    expectSucceeded(run)
    expect(run.stdout).toContain(`Job ${ns}/${name} finished: succeeded`)
    expect(run.stdout).not.toContain('migrate: connecting to database')
    expect(outputNames(run, 'pruned')).toEqual([name])
  })

  test('fail: fails naming it and deletes nothing', async () => {
    const name = `${release}-migrate`
    const uid = await runningReleaseJob(name)
    await finishedReleaseJob(ns, `${release}-old-finished`)
    const run = await runAction({ release, namespace: ns, 'on-running': 'fail' })
    expect(run.code).toBe(1)
    expect(run.stdout).toContain(`::error::Job ${ns}/${name} is still running`)
    expect(run.stdout).toContain('on-running is fail; nothing was deleted')
    expect(run.summary).toContain(`**❌ blocked: ${name} still running (on-running: fail); nothing was deleted**`)
    expect((await getJob(ns, name))?.metadata?.uid).toBe(uid)
    expect(await getJob(ns, `${release}-old-finished`)).toBeDefined()
    expect(outputNames(run, 'pruned')).toEqual([])
  })

  test('delete: deletes it while it runs', async () => {
    const name = `${release}-migrate`
    await runningReleaseJob(name)
    const run = await runAction({ release, namespace: ns, 'on-running': 'delete' })
    expectSucceeded(run)
    expect(outputNames(run, 'pruned')).toEqual([name])
    expect(JSON.parse(run.outputs.pruned)[0].status).toBe('running')
    expect(await getJob(ns, name)).toBeUndefined()
  })

  test('wait with a short timeout: fails naming it and deletes nothing', async () => {
    const name = `${release}-migrate`
    const uid = await runningReleaseJob(name)
    await finishedReleaseJob(ns, `${release}-old-finished`)
    const run = await runAction({ release, namespace: ns, 'on-running': 'wait', 'wait-timeout': '3s' })
    expect(run.code).toBe(1)
    expect(run.stdout).toMatch(new RegExp(`::error::Job ${ns}/${name} did not finish within wait-timeout 3s \\(running for \\d+s\\); nothing was deleted`))
    // The row and the error give the same age: the Job's when the wait gave up.
    const age = new RegExp(`Job ${ns}/${name} did not finish within wait-timeout 3s \\(running for (\\d+s)\\)`).exec(run.stdout)?.[1]
    expect(run.summary).toMatch(new RegExp(`^\\| ${name} \\| running \\| ❌ blocked \\| still running \\(${age}\\) \\|`, 'm'))
    expect((await getJob(ns, name))?.metadata?.uid).toBe(uid)
    expect(await getJob(ns, `${release}-old-finished`)).toBeDefined()
    expect(outputNames(run, 'pruned')).toEqual([])
  })
})

test('a failed prior Job: its logs are saved before it is deleted, and its tail is in the summary', async () => {
  const result = helmChart('install', ns, { failMigration: true, hookJob: false })
  expect(result.code).toBe(0)
  const failed = await waitForJobCondition(ns, `${release}-migrate`, 'Failed')
  const logsDir = mkdtempSync(join(tmpdir(), 'logs-'))
  const run = await runAction({ release, namespace: ns, 'logs-dir': logsDir })
  expectSucceeded(run)
  expect(outputNames(run, 'pruned')).toEqual([`${release}-migrate`])
  expect(run.outputs['logs-dir']).toBe(logsDir)
  const pods = await coreApi().listNamespacedPod({ namespace: ns, labelSelector: `batch.kubernetes.io/controller-uid=${failed.metadata?.uid}` })
  expect(pods.items).toEqual([]) // the pod is gone: its log could only have been read before
  const jobDir = savedFolder(logsDir, ns, `${release}-migrate`, failed.metadata?.uid)
  const [podDir] = readdirSync(jobDir).map((d) => join(jobDir, d))
  const log = readFileSync(join(podDir, 'migrate.log'), 'utf8')
  expect(log).toContain('migrate: ERROR: relation "tuples" already exists')
  expect(run.summary).toContain(`Last lines of failed Job ${release}-migrate`)
  expect(run.summary).toContain('migrate: ERROR: relation &quot;tuples&quot; already exists')
  // The other release's failed Job (a decoy) was neither deleted nor harvested.
  expect(existsSync(join(logsDir, ns, 'other-release-migrate'))).toBe(false)
})

test('two Jobs of one name, one after the other (pre, then a sweep): both archives stay, each in its uid’s folder; a planted job-sweeper.io/logs note is harvested anyway, a note naming the Job’s uid is not (#34)', async () => {
  const name = `${release}-migrate`
  const seed = `${release}-seed`
  const logsDir = mkdtempSync(join(tmpdir(), 'logs-'))
  const failedJob = async (jobName: string, annotations: Record<string, string> = {}): Promise<string> => {
    const job = await createJob({ namespace: ns, name: jobName, behaviour: 'fail', annotations: { ...releaseAnnotations(ns), ...annotations } })
    await waitForJobCondition(ns, jobName, 'Failed')
    return job.metadata?.uid ?? ''
  }
  // A note the Job was created with (a template's, or planted so its logs are never saved).
  const first = await failedJob(name, { 'job-sweeper.io/logs': 's3://elsewhere/x/', 'job-sweeper.io/logs-state': 'complete' })
  // The positive control: a note as the keeper writes it, naming the Job's uid last.
  const seedUid = await failedJob(seed)
  const where = `s3://keeper-bucket/logs/${ns}/${seed}/${seedUid}/`
  expect(kubectl('annotate', 'job', seed, '-n', ns, `job-sweeper.io/logs=${where}`, 'job-sweeper.io/logs-state=complete').code).toBe(0)

  const pre = await runAction({ release, namespace: ns, 'logs-dir': logsDir })
  expectSucceeded(pre)
  expect(outputNames(pre, 'pruned').sort()).toEqual([name, seed].sort())
  const reasons = Object.fromEntries((JSON.parse(pre.outputs.pruned) as { name: string; reason: string }[]).map((j) => [j.name, j.reason]))
  expect(reasons[name]).not.toContain('archived by the keeper')
  expect(reasons[seed]).toContain(`its logs archived by the keeper at ${where} (complete): nothing saved over them`)
  expect(existsSync(join(logsDir, ns, seed))).toBe(false)

  // The next release's Job of the same name, deleted by the next sweep.
  const second = await failedJob(name)
  expect(second).not.toBe(first)
  const sweep = await runAction({ phase: 'sweep', release, namespace: ns, 'failure-grace': '0s', 'logs-dir': logsDir })
  expectSucceeded(sweep)
  expect(outputNames(sweep, 'pruned')).toEqual([name])
  expect(readdirSync(join(logsDir, ns, name)).sort()).toEqual([first, second].sort())
  for (const [uid, phase] of [
    [first, 'pre'],
    [second, 'sweep']
  ]) {
    const folder = savedFolder(logsDir, ns, name, uid)
    const file = JSON.parse(readFileSync(join(folder, 'job.json'), 'utf8')) as { uid: string; savedBy: { phase: string }; logs: { file: string }[] }
    expect([file.uid, file.savedBy.phase]).toEqual([uid, phase])
    expect(file.logs).toHaveLength(1)
    expect(readFileSync(join(folder, file.logs[0].file), 'utf8')).toContain('migrate: ERROR: relation "tuples" already exists')
  }
  // Neither phase harvested a decoy (another release's failed Job among them).
  expect(readdirSync(join(logsDir, ns))).toEqual([name])
})

test('dry-run changes nothing', async () => {
  install({ migrationVersion: '1' })
  await runningReleaseJob(`${release}-second`)
  // Every Job of this suite's namespaces (useScenario's `pre-<hex>`, `pre-other-<hex>`), the decoys'
  // included, but for those earlier tests are deleting; other suites run beside this one.
  const ours = /^pre-(other-)?[0-9a-f]+$/
  const snapshot = async (): Promise<string[]> => {
    const active = new Set(
      (await coreApi().listNamespace()).items.filter((n) => n.status?.phase === 'Active' && ours.test(n.metadata?.name ?? '')).map((n) => n.metadata?.name)
    )
    const all = await batchApi().listJobForAllNamespaces()
    return all.items
      .filter((j) => active.has(j.metadata?.namespace))
      .map((j) => `${j.metadata?.namespace}/${j.metadata?.name}/${j.metadata?.uid}/${j.metadata?.deletionTimestamp ?? 'live'}`)
      .sort()
  }
  const before = await snapshot()
  expect(before.filter((j) => j.startsWith(`${ns}/`)).length).toBeGreaterThan(0) // positive control: the snapshot sees this test's Jobs
  const run = await runAction({ release, namespace: ns, 'dry-run': 'true', 'on-running': 'delete' })
  expectSucceeded(run)
  expect(await snapshot()).toEqual(before)
  expect(run.summary).toContain('DRY RUN — nothing was changed')
  expect(run.summary).toContain('2 would be pruned')
  expect(outputNames(run, 'pruned')).toEqual([`${release}-migrate`, `${release}-second`])
  const events = await coreApi().listNamespacedEvent({ namespace: ns, fieldSelector: 'reason=JobSwept' })
  expect(events.items).toEqual([])
})

describe('Jobs that never started', () => {
  const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))
  /** Waits until the Job's pod shows what the scheduler or the kubelet says of it. */
  async function podShows(name: string, what: (pod: V1Pod) => boolean): Promise<void> {
    await eventually(
      `a pod of ${name} never starting`,
      async () => (await coreApi().listNamespacedPod({ namespace: ns, labelSelector: `job-name=${name}` })).items,
      (pods) => pods.length === 1 && what(pods[0])
    )
  }
  const unschedulable = (pod: V1Pod): boolean => pod.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.reason === 'Unschedulable') === true
  const waitingAs = (reason: string) => (pod: V1Pod) =>
    [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])].some((s) => s.state?.waiting?.reason === reason)
  // Not waitingAs('CrashLoopBackOff'): a 1.37 kubelet shows an init container in back-off as
  // terminated, and writes CrashLoopBackOff only in the sync that ends the back-off, a second before
  // it starts the container again: a poll can miss it for a minute.
  const initFailed = (pod: V1Pod): boolean =>
    (pod.status?.initContainerStatuses ?? []).some((s) => (s.restartCount ?? 0) > 0 || (s.state?.terminated?.exitCode ?? 0) !== 0)
  // Logs are not what these tests are about (a container that never ran, and the kubelet's 400 for
  // it, is test/real-node.test.ts's). Harvesting a stuck Job as a failed one is the planner's
  // (test/unit/plan.test.ts).
  const NO_LOGS = { 'harvest-logs': 'none' }
  const reasonOf = (run: ActionRun, name: string): string =>
    (JSON.parse(run.outputs.pruned) as { name: string; reason: string }[]).find((j) => j.name === name)?.reason ?? ''

  // The pull fails on the real node: a tag its registry does not have.
  testOnRealNode(
    "pre (on-running: wait, wait-timeout 3m) deletes the prior release's migrations that never started (unschedulable, ImagePullBackOff) without waiting; a running Job is still waited on",
    async () => {
      const annotations = releaseAnnotations(ns)
      await createJob({ namespace: ns, name: `${release}-migrate`, annotations, behaviour: 'unschedulable' })
      await createJob({ namespace: ns, name: `${release}-seed`, annotations, behaviour: 'image-pull-backoff', image: missingImage('app:1.2.3') })
      const worker = `${release}-worker`
      await runningReleaseJob(worker) // its container runs: the positive control, waited on
      await podShows(`${release}-migrate`, unschedulable)
      await podShows(`${release}-seed`, waitingAs('ImagePullBackOff'))
      await sleep(5000) // the pods are older than stuck-after

      const started = Date.now()
      const pending = runAction({ release, namespace: ns, 'wait-timeout': '3m', 'stuck-after': '5s', ...NO_LOGS })
      await sleep(8000)
      expect(jobCondition(await getJob(ns, worker))).toBeUndefined() // still waited on
      releaseHold(worker)
      const run = await pending
      expectSucceeded(run)
      expect(Date.now() - started).toBeLessThan(60_000) // well under wait-timeout 3m
      expect(outputNames(run, 'pruned')).toEqual([`${release}-migrate`, `${release}-seed`, worker])
      expect(outputNames(run, 'waited')).toEqual([worker])
      expect(reasonOf(run, `${release}-migrate`)).toMatch(
        /^never started: 0\/\d nodes are available: 1 node\(s\) didn't match Pod's node affinity\/selector(, 1 node\(s\) had untolerated taint\(s\))?[.;]/
      )
      // The real kubelet goes from ErrImagePull (a pull) to ImagePullBackOff (the wait before the next).
      expect(reasonOf(run, `${release}-seed`)).toMatch(
        new RegExp(`^never started: (ImagePullBackOff|ErrImagePull) \\(${escapeRegExp(missingImage('app:1.2.3'))}(: not found)?\\)`)
      )
      expect(JSON.parse(run.outputs.pruned).map((j: { name: string; status: string }) => [j.name, j.status])).toEqual([
        [`${release}-migrate`, 'stuck'],
        [`${release}-seed`, 'stuck'],
        [worker, 'succeeded']
      ])
      expect(run.summary).toMatch(
        new RegExp(`^\\| ${release}-seed \\| stuck \\| pruned \\| never started \\(\\d+s\\) \\| .* \\| never started: (ImagePullBackOff|ErrImagePull)`, 'm')
      )
      expect(run.summary).toMatch(/never started: 0\/\d nodes are available: 1 node\(s\) didn&#39;t match Pod&#39;s node affinity\/selector/)
      for (const name of [`${release}-migrate`, `${release}-seed`, worker]) expect(await getJob(ns, name)).toBeUndefined()
    }
  )

  test('an unschedulable migration for which the cluster autoscaler is adding a node (its TriggeredScaleUp Event) is waited for, not deleted; the same with NotTriggerScaleUp is deleted', async () => {
    // The Events the cluster autoscaler records on a pod it scales up for (or cannot), written
    // here as it writes them: the autoscaler itself does not run in this cluster.
    const scaleUpEvent = async (name: string, reason: 'TriggeredScaleUp' | 'NotTriggerScaleUp'): Promise<void> => {
      const [pod] = (await coreApi().listNamespacedPod({ namespace: ns, labelSelector: `job-name=${name}` })).items
      const at = new Date()
      await coreApi().createNamespacedEvent({
        namespace: ns,
        body: {
          metadata: { name: `${pod.metadata?.name}.scale-up`, namespace: ns },
          involvedObject: { kind: 'Pod', name: pod.metadata?.name, namespace: ns, uid: pod.metadata?.uid, apiVersion: 'v1' },
          reason,
          message:
            reason === 'TriggeredScaleUp'
              ? 'pod triggered scale-up: [{pool-a 0->1 (max: 3)}]'
              : "pod didn't trigger scale-up: 1 node(s) didn't match Pod's node affinity/selector",
          type: 'Normal',
          source: { component: 'cluster-autoscaler' },
          firstTimestamp: at,
          lastTimestamp: at,
          count: 1
        }
      })
    }
    const annotations = releaseAnnotations(ns)
    await createJob({ namespace: ns, name: `${release}-migrate`, annotations, behaviour: 'unschedulable' })
    await createJob({ namespace: ns, name: `${release}-seed`, annotations, behaviour: 'unschedulable' })
    await podShows(`${release}-migrate`, unschedulable)
    await podShows(`${release}-seed`, unschedulable)
    await scaleUpEvent(`${release}-migrate`, 'TriggeredScaleUp')
    await scaleUpEvent(`${release}-seed`, 'NotTriggerScaleUp')
    await sleep(3000) // the pods are older than stuck-after

    // on-running fail: a Job counted as running fails the step and nothing is deleted.
    const run = await runAction({ release, namespace: ns, 'on-running': 'fail', 'stuck-after': '2s', ...NO_LOGS })
    expect(run.code).toBe(1)
    expect(run.stdout).toContain(`::error::Job ${ns}/${release}-migrate is still running`)
    expect(run.stdout).not.toContain(`Job ${ns}/${release}-seed is still running`)
    expect(await getJob(ns, `${release}-migrate`)).toBeDefined()
    // With a node coming for neither (the migration's scale-up said no), both are stuck and deleted.
    await coreApi().deleteNamespacedEvent({
      namespace: ns,
      name: `${(await coreApi().listNamespacedPod({ namespace: ns, labelSelector: `job-name=${release}-migrate` })).items[0].metadata?.name}.scale-up`
    })
    await scaleUpEvent(`${release}-migrate`, 'NotTriggerScaleUp')
    const again = await runAction({ release, namespace: ns, 'on-running': 'fail', 'stuck-after': '2s', ...NO_LOGS })
    expectSucceeded(again)
    expect(outputNames(again, 'pruned')).toEqual([`${release}-migrate`, `${release}-seed`])
  })

  // On the real node: its kubelet misses the Secret and restarts the init container, with its real back-off.
  testOnRealNode(
    'Jobs that become stuck while pre waits on them (a missing Secret, a failing init container) are deleted then, not at wait-timeout',
    async () => {
      const annotations = releaseAnnotations(ns)
      await createJob({ namespace: ns, name: `${release}-migrate`, annotations, behaviour: 'create-container-config-error' })
      await createJob({ namespace: ns, name: `${release}-seed`, annotations, behaviour: 'init-crash-loop' })
      await podShows(`${release}-migrate`, waitingAs('CreateContainerConfigError'))
      await podShows(`${release}-seed`, initFailed)

      // At the plan the pods are younger than stuck-after (the init container's second failure comes
      // after the kubelet's 10s back-off): running, waited on; at 60s they are stuck.
      const started = Date.now()
      const run = await runAction({ release, namespace: ns, 'wait-timeout': '3m', 'stuck-after': '60s', ...NO_LOGS })
      expectSucceeded(run)
      expect(Date.now() - started).toBeLessThan(120_000) // well under wait-timeout 3m
      expect(outputNames(run, 'waited')).toEqual([`${release}-migrate`, `${release}-seed`])
      expect(outputNames(run, 'pruned')).toEqual([`${release}-migrate`, `${release}-seed`])
      expect(run.stdout).toContain(
        `Job ${ns}/${release}-migrate never started: CreateContainerConfigError (secret "db-credentials" not found): no longer waited for`
      )
      expect(reasonOf(run, `${release}-seed`)).toMatch(/^never started: init container wait-for-db failed \d+ times \(exit code 1\); nothing ran/)
      expect(run.summary).toMatch(new RegExp(`\\| ${release}-seed \\| stuck \\| waited [^|]+, then pruned \\|`))
      for (const name of [`${release}-migrate`, `${release}-seed`]) expect(await getJob(ns, name)).toBeUndefined()
    }
  )
})
