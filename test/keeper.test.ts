// `job-sweeper keeper` (the bundled CLI, dist/cli) against the real cluster and the local S3
// server: it holds the Jobs of its scope with its finalizer while they run, archives each one's
// logs and job.json as soon as it finishes, notes where on the Job and lets it go; a Job deleted
// before it finished is archived as it is; a store that refuses keeps the Job held until
// hold-deadline after its deletion, then it is let go with a Warning Event. Decoys (Jobs out of
// its scope, other namespaces) are never held or annotated.
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3'
import { CoordinationV1Api, V1MicroTime, type V1Job } from '@kubernetes/client-node'
import { MANAGED_LABEL } from '../src/plan/retention.ts'
import { ARCHIVE_ANNOTATION, LOGS_FINALIZER } from '../src/plan/keeper.ts'
import { TTL_AFTER_ARCHIVE } from '../src/plan/release-ttl.ts'
import {
  batchApi,
  coreApi,
  createJob,
  createNamespace,
  deleteNamespace,
  eventually,
  getJob,
  helm,
  jobCondition,
  kubeConfig,
  kubectl,
  run,
  testCluster,
  waitForJobCondition,
  type CommandResult
} from './cluster/testenv.ts'
import { realNodePod } from './cluster/node.ts'
import { runCli, type CliRun } from './bin.ts'
import { createDecoys, missingDecoys, type Decoy } from './decoys.ts'
import { keysUnder, objectBytes, savedJob } from './s3-objects.ts'
import { leastPrivilegeWriter, s3As } from './s3-least-privilege.ts'
import { startStoreProxy } from './s3-store-proxy.ts'
import { startFaultProxy } from './faults/proxy.ts'

const cli = join(import.meta.dirname, '..', 'dist', 'cli', 'job-sweeper.mjs')
const bucket = process.env.JOB_SWEEPER_S3_BUCKET ?? ''
const endpoint = process.env.JOB_SWEEPER_S3_ENDPOINT ?? ''
const managed = { [MANAGED_LABEL]: 'true' }
const chart = join(import.meta.dirname, 'chart', 'migrate-demo')
const testImage = process.env.JOB_SWEEPER_TEST_IMAGE ?? ''
// The real node's tests (.ci/run requires it; elsewhere the cluster may have none).
const onRealNode = process.env.JOB_SWEEPER_REAL_NODE ? test : test.skip

interface Keeper {
  child: ChildProcess
  /** host:port of /healthz, /readyz, /metrics. */
  address: string
  output: () => string
  stop: () => Promise<number>
}

/** Starts the keeper on `namespace` ('': none, `flags` say) with `flags`; resolves once it serves. */
async function startKeeper(namespace: string, flags: string[], env: NodeJS.ProcessEnv = {}): Promise<Keeper> {
  const cluster = testCluster()
  const scope = namespace === '' ? [] : ['--namespace', namespace]
  const child = spawn(process.execPath, [cli, 'keeper', ...scope, '--lease-namespace', otherNs, '--listen', '127.0.0.1:0', ...flags], {
    env: { ...process.env, KUBECONFIG: cluster.kubeconfig, ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let output = ''
  child.stdout?.on('data', (c: Buffer) => (output += c.toString()))
  child.stderr?.on('data', (c: Buffer) => (output += c.toString()))
  const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)))
  const address = await eventually(
    'the keeper to serve',
    async () => /keeper: serving on (\S+)/.exec(output)?.[1],
    (a) => a !== undefined || child.exitCode !== null,
    30_000
  )
  if (address === undefined) throw new Error(`the keeper exited: ${output}`)
  return {
    child,
    address,
    output: () => output,
    stop: async () => {
      child.kill('SIGTERM')
      return exited
    }
  }
}

const get = async (keeper: Keeper, path: string): Promise<{ status: number; text: string }> => {
  const res = await fetch(`http://${keeper.address}${path}`)
  return { status: res.status, text: await res.text() }
}

const s3 = (): S3Client =>
  new S3Client({
    endpoint,
    forcePathStyle: true,
    region: process.env.AWS_REGION,
    credentials: { accessKeyId: process.env.AWS_ACCESS_KEY_ID ?? '', secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY ?? '' }
  })

/** What the bucket holds of the Job `namespace/job` under `prefix` (savedJob): the keeper's archive in its uid's folder (`uid`'s, or the one there). */
async function inBucket(prefix: string, namespace: string, job: string, container = 'main', uid?: string): ReturnType<typeof savedJob> {
  const client = s3()
  try {
    return await savedJob(client, bucket, `${prefix}/${namespace}/${job}/`, container, uid)
  } finally {
    client.destroy()
  }
}

/** This process's environment (the store's credentials) and the test cluster's kubeconfig, as `run` gives them. */
const withCluster = (): NodeJS.ProcessEnv => ({ ...process.env, KUBECONFIG: testCluster().kubeconfig })

/**
 * While the keeper is paused (SIGSTOP), its Lease renewed in its name every 3 s, as a live keeper's
 * is: post, pre and sweep judge a keeper by whether its Lease changes, on their own clock, so a
 * paused keeper is seen as none after 30 s. Returns the stop; the keeper, resumed, renews over it.
 */
function renewForPausedKeeper(leaseNamespace: string): () => void {
  const api = kubeConfig().makeApiClient(CoordinationV1Api)
  const timer = setInterval(() => {
    void api
      .readNamespacedLease({ namespace: leaseNamespace, name: 'job-sweeper-keeper' })
      .then((lease) =>
        api.replaceNamespacedLease({
          namespace: leaseNamespace,
          name: 'job-sweeper-keeper',
          body: { ...lease, spec: { ...lease.spec, renewTime: new V1MicroTime() } }
        })
      )
      .catch(() => undefined) // the keeper's own renewal won: the next one comes in 3 s
  }, 3_000)
  return () => clearInterval(timer)
}

/** A loopback port where nothing listens: a store that does not answer. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

let ns: string
let otherNs: string
let decoys: Decoy[]
let keeper: Keeper | undefined
/** Namespaces a test made besides ns and otherNs (it deletes them): the clean-up lets go of what is held there too. */
let moreNamespaces: string[] = []

beforeEach(async () => {
  ns = await createNamespace('keeper')
  otherNs = await createNamespace('keeper-other')
  moreNamespaces = []
  decoys = await createDecoys(ns, otherNs, 'app')
})

/**
 * docs/keeper.md's command that removes the keeper's finalizers by hand, as the page gives it; with
 * `namespaces`, in those only (`--all-namespaces` → `-n <namespace>`): a test's clean-up leaves the
 * Jobs other suites hold on the shared cluster alone, and is not slowed by all of theirs.
 */
function releaseByHand(namespaces?: string[]): CommandResult {
  const page = readFileSync(join(import.meta.dirname, '..', 'docs', 'keeper.md'), 'utf8')
  const command = /## Removing its finalizers by hand[\s\S]*?```sh\n([\s\S]*?)```/.exec(page)?.[1] ?? ''
  expect(command).toContain('job-sweeper.io/logs')
  expect(command).toContain('kubectl get jobs --all-namespaces ')
  const scoped =
    namespaces === undefined ? command : namespaces.map((n) => command.replace('kubectl get jobs --all-namespaces ', `kubectl get jobs -n ${n} `)).join('\n')
  return run('bash', ['-c', scoped])
}

afterEach(async () => {
  if (keeper && keeper.child.exitCode === null) await keeper.stop()
  keeper = undefined
  try {
    expect(await missingDecoys(decoys)).toEqual([])
    // No decoy was held or annotated: read before the finalizers are removed by hand below.
    for (const d of decoys) {
      const job = await getJob(d.namespace, d.name)
      expect([d.name, job?.metadata?.finalizers?.includes(LOGS_FINALIZER) ?? false, job?.metadata?.annotations?.[ARCHIVE_ANNOTATION.where]]).toEqual([
        d.name,
        false,
        undefined
      ])
    }
  } finally {
    // A test that failed half way leaves nothing held.
    expect(releaseByHand([ns, otherNs, ...moreNamespaces]).code).toBe(0)
    await Promise.all([deleteNamespace(ns), deleteNamespace(otherNs)])
  }
})

test('a Job of its scope is held while it runs and archived as soon as it finishes (its log and job.json in the bucket, where on the Job), then released; its TTL then deletes it; one deleted before it finished is archived as it is; /healthz, /readyz and /metrics answer; SIGTERM stops it', async () => {
  const prefix = `keeper-${ns}`
  keeper = await startKeeper(ns, ['--logs-dir', `s3://${bucket}/${prefix}`, '--s3-endpoint', endpoint])
  expect((await get(keeper, '/healthz')).status).toBe(200)
  await eventually(
    '/readyz',
    async () => (await get(keeper as Keeper, '/readyz')).status,
    (s) => s === 200
  )

  // A migration that fails after 4s, with the TTL post gives a failure (here 10s).
  const migration = await createJob({ namespace: ns, name: 'app-migrate', behaviour: 'fail', runFor: '4s', labels: managed, ttlSecondsAfterFinished: 10 })
  // A Job out of its scope (no label), the same way: never held, never archived.
  const unmanaged = await createJob({ namespace: ns, name: 'app-report', behaviour: 'fail', runFor: '4s' })
  decoys.push({ namespace: ns, name: 'app-report', uid: unmanaged.metadata?.uid ?? '', why: 'not in the keeper’s scope' })
  // Another, held while it runs, deleted before it finishes.
  await createJob({ namespace: ns, name: 'app-worker', behaviour: 'hold', labels: managed })

  const heldWhileRunning = await eventually(
    'the migration held while it runs',
    () => getJob(ns, 'app-migrate'),
    (j) => j?.metadata?.finalizers?.includes(LOGS_FINALIZER) === true
  )
  expect(heldWhileRunning?.status?.conditions?.some((c) => c.type === 'Failed' && c.status === 'True') ?? false).toBe(false)
  const archived = await eventually(
    'the migration archived and released',
    () => getJob(ns, 'app-migrate'),
    (j) => j?.metadata?.annotations?.[ARCHIVE_ANNOTATION.where] !== undefined && !j.metadata?.finalizers?.includes(LOGS_FINALIZER)
  )
  // Its folder carries its uid: the next Job of the name (the next release's migration) has its own.
  const migrationUid = migration.metadata?.uid ?? ''
  expect(archived?.metadata?.annotations?.[ARCHIVE_ANNOTATION.where]).toBe(`s3://${bucket}/${prefix}/${ns}/app-migrate/${migrationUid}/`)
  expect(archived?.metadata?.annotations?.[ARCHIVE_ANNOTATION.state]).toBe('complete')
  const saved = await inBucket(prefix, ns, 'app-migrate')
  expect(saved.keys).toContain(`${prefix}/${ns}/app-migrate/${migrationUid}/job.json`)
  expect(saved.log).toContain('migrate: ERROR: relation "tuples" already exists') // kwok's pod.log
  expect(saved.jobFile).toMatchObject({ savedBy: { phase: 'keeper' }, status: 'failed' })
  const client = s3()
  try {
    // Its TTL deletes it; nothing holds it now.
    await eventually(
      'the TTL controller to delete the archived Job',
      () => getJob(ns, 'app-migrate'),
      (j) => j === undefined
    )

    // Deleted while it runs (kubectl delete's background propagation): the hold keeps it and its
    // pods until the keeper archived what they wrote, then it goes.
    await eventually(
      'the worker held',
      () => getJob(ns, 'app-worker'),
      (j) => j?.metadata?.finalizers?.includes(LOGS_FINALIZER) === true
    )
    await batchApi().deleteNamespacedJob({ namespace: ns, name: 'app-worker', propagationPolicy: 'Background' })
    await eventually(
      'the deleted worker archived, then gone',
      () => getJob(ns, 'app-worker'),
      (j) => j === undefined
    )
    expect(await keysUnder(client, bucket, `${prefix}/${ns}/app-worker/`)).toContainEqual(
      expect.stringMatching(new RegExp(`^${prefix}/${ns}/app-worker/[\\w-]+/job\\.json$`))
    )
    expect(await keysUnder(client, bucket, `${prefix}/${ns}/app-report/`)).toEqual([])
  } finally {
    client.destroy()
  }

  const metrics = (await get(keeper, '/metrics')).text
  expect(metrics).toMatch(/^job_sweeper_keeper_jobs_archived_total 2$/m)
  expect(metrics).toMatch(/^job_sweeper_keeper_holds_total 2$/m)
  expect(metrics).toMatch(/^job_sweeper_keeper_archived_log_bytes_total [1-9]\d*$/m)
  expect(metrics).toMatch(/^job_sweeper_keeper_leader 1$/m)
  // Both archived: none waits, and one finished before its archive (the worker was deleted running).
  expect(metrics).toMatch(/^job_sweeper_keeper_oldest_unarchived_seconds 0$/m)
  expect(metrics).toMatch(/^job_sweeper_keeper_finish_to_archive_seconds_count 1$/m)
  // The process's metrics under their standard names.
  expect(metrics).toMatch(/^process_cpu_seconds_total \d/m)
  expect(await keeper.stop()).toBe(0)
  expect(keeper.output()).toContain('keeper: stopped')
}, 120_000)

test('a store that does not answer: the finished Job stays held (not archived, tried again); deleted, it is released at hold-deadline with a Warning Event saying why, and its namespace’s deletion completes', async () => {
  keeper = await startKeeper(ns, ['--logs-dir', 's3://nowhere/logs', '--s3-endpoint', `http://127.0.0.1:${await closedPort()}`, '--hold-deadline', '8s'])
  const job = await createJob({ namespace: ns, name: 'app-migrate', behaviour: 'fail', labels: managed })
  // Held though it finished before the keeper saw it, so that the failed archive can be tried again.
  await eventually(
    'an archive to fail',
    async () => keeper?.output() ?? '',
    (out) => out.includes(`not archived ${ns}/app-migrate, trying again`)
  )
  const held = await getJob(ns, 'app-migrate')
  expect(held?.metadata?.finalizers).toContain(LOGS_FINALIZER)
  expect(held?.metadata?.annotations?.[ARCHIVE_ANNOTATION.where]).toBeUndefined()

  const asked = Date.now()
  await batchApi().deleteNamespacedJob({ namespace: ns, name: 'app-migrate', propagationPolicy: 'Background' })
  // Still there while the hold lasts.
  await new Promise((r) => setTimeout(r, 3000))
  expect((await getJob(ns, 'app-migrate'))?.metadata?.deletionTimestamp).toBeDefined()
  await eventually(
    'the hold to end',
    () => getJob(ns, 'app-migrate'),
    (j) => j === undefined,
    60_000
  )
  expect(Date.now() - asked).toBeGreaterThanOrEqual(7000) // not before the deadline (8s; the deletionTimestamp has whole seconds)
  const events = await coreApi().listNamespacedEvent({ namespace: ns, fieldSelector: `involvedObject.uid=${job.metadata?.uid},reason=LogsNotArchived` })
  expect(events.items.map((e) => e.type)).toEqual(['Warning'])
  expect(events.items[0].message).toMatch(
    /^job-sweeper keeper: its logs were not archived to s3:\/\/nowhere\/logs: cannot save the log of app-migrate-\w+\/main: .*ECONNREFUSED.*\. Released unarchived: its deletion was asked more than 8s ago \(hold-deadline\)\.$/
  )

  // A namespace deletion completes: a held Job there is released at its deadline too.
  await createJob({ namespace: ns, name: 'app-seed', behaviour: 'fail', labels: managed })
  await eventually(
    'the seed held',
    () => getJob(ns, 'app-seed'),
    (j) => j?.metadata?.finalizers?.includes(LOGS_FINALIZER) === true
  )
  await coreApi().deleteNamespace({ name: ns })
  await eventually(
    'the namespace to be gone',
    async () => (await coreApi().listNamespace({ fieldSelector: `metadata.name=${ns}` })).items.length,
    (n) => n === 0,
    90_000
  )
  decoys = decoys.filter((d) => d.namespace !== ns) // its decoys went with it
  expect(await keeper.stop()).toBe(0)
}, 180_000)

test('two keepers: one leads (its Lease job-sweeper-keeper in its own namespace), the other stands by, ready and idle; when the leader stops, the standby takes over and archives', async () => {
  const prefix = `keeper-ha-${ns}`
  const flags = ['--logs-dir', `s3://${bucket}/${prefix}`, '--s3-endpoint', endpoint]
  keeper = await startKeeper(ns, flags)
  await eventually(
    'the first to lead',
    async () => keeper?.output() ?? '',
    (out) => out.includes('keeper: leading')
  )
  const standby = await startKeeper(ns, flags)
  try {
    await eventually(
      'the second to stand by',
      async () => standby.output(),
      (out) => out.includes('keeper: standby, waiting')
    )
    expect((await get(standby, '/readyz')).text).toBe('ok: standby\n')
    expect((await get(keeper, '/readyz')).text).toBe('ok: leader\n')
    const lease = await kubeConfig().makeApiClient(CoordinationV1Api).readNamespacedLease({ namespace: otherNs, name: 'job-sweeper-keeper' })
    expect(lease.spec?.holderIdentity).toMatch(new RegExp(`-${keeper.child.pid}$`))

    await createJob({ namespace: ns, name: 'app-migrate', behaviour: 'fail', runFor: '2s', labels: managed })
    await eventually(
      'the leader to archive it',
      () => getJob(ns, 'app-migrate'),
      (j) => j?.metadata?.annotations?.[ARCHIVE_ANNOTATION.where] !== undefined
    )
    // The annotation is the archive's last write; the keeper says so just after: awaited, not assumed.
    await eventually(
      'the leader to say it archived it',
      async () => keeper?.output() ?? '',
      (out) => out.includes(`archived ${ns}/app-migrate`)
    )
    expect(standby.output()).not.toContain('archived')

    expect(await keeper.stop()).toBe(0)
    await eventually(
      'the standby to take over',
      async () => standby.output(),
      (out) => out.includes('keeper: leading')
    )
    await createJob({ namespace: ns, name: 'app-seed', behaviour: 'fail', runFor: '2s', labels: managed })
    await eventually(
      'the new leader to archive the next',
      () => getJob(ns, 'app-seed'),
      (j) => j?.metadata?.annotations?.[ARCHIVE_ANNOTATION.where] !== undefined
    )
    await eventually(
      'the new leader to say it archived it',
      async () => standby.output(),
      (out) => out.includes(`archived ${ns}/app-seed`)
    )
  } finally {
    expect(await standby.stop()).toBe(0)
  }
}, 120_000)

test('post with keeper-namespace holds the Jobs it gives TTLs while a keeper runs (its Lease fresh), in the TTL’s patch: deleted while the keeper is paused, the Job and its pods wait, and the keeper archives them when it resumes; with no keeper running, post holds nothing and says why', async () => {
  const prefix = `keeper-post-${ns}`
  keeper = await startKeeper(ns, ['--logs-dir', `s3://${bucket}/${prefix}`, '--s3-endpoint', endpoint])
  await eventually(
    'the keeper to lead',
    async () => keeper?.output() ?? '',
    (out) => out.includes('keeper: leading')
  )
  // Not spawnSync: the Lease is renewed by this process while post runs (renewForPausedKeeper).
  const post = (...flags: string[]): Promise<CliRun> =>
    runCli(['post', '--namespace', ns, '--selector', 'app=keeper-post', '--harvest-logs', 'none', '--keeper-namespace', otherNs, ...flags], withCluster())
  // Not labelled managed: the keeper does not take it until post labels it.
  await createJob({ namespace: ns, name: 'app-migrate', behaviour: 'hold', labels: { app: 'keeper-post' } })
  await eventually(
    'its pod to run',
    async () => (await coreApi().listNamespacedPod({ namespace: ns, labelSelector: 'job-name=app-migrate' })).items[0]?.status?.phase,
    (phase) => phase === 'Running'
  )

  // The keeper paused (SIGSTOP): it sees nothing, and its Lease is renewed in its name.
  keeper.child.kill('SIGSTOP')
  let paused = true
  const stopRenewing = renewForPausedKeeper(otherNs)
  try {
    const held = await post()
    expect(held.code).toBe(0)
    expect(held.stderr + held.stdout).toContain(`keeper-namespace '${otherNs}': a keeper runs`)
    expect(held.stderr + held.stdout).toContain(`held for the keeper (${LOGS_FINALIZER})`)
    const job = await getJob(ns, 'app-migrate')
    expect(job?.metadata?.finalizers).toContain(LOGS_FINALIZER)
    expect(job?.metadata?.labels?.[MANAGED_LABEL]).toBe('true')
    // The TTL starts after the archive: none now, its policy by outcome for the keeper to write.
    expect(job?.spec?.ttlSecondsAfterFinished).toBeUndefined()
    expect(job?.metadata?.annotations?.[TTL_AFTER_ARCHIVE]).toBe('ttl 1h, failure-grace 1d')

    // kubectl delete (background): the hold keeps the Job, so the garbage collector keeps its pod.
    expect(kubectl('delete', 'job', 'app-migrate', '-n', ns, '--wait=false').code).toBe(0)
    await new Promise((r) => setTimeout(r, 3000))
    expect((await getJob(ns, 'app-migrate'))?.metadata?.deletionTimestamp).toBeDefined()
    expect((await coreApi().listNamespacedPod({ namespace: ns, labelSelector: 'job-name=app-migrate' })).items).toHaveLength(1)
    stopRenewing()
    keeper.child.kill('SIGCONT')
    paused = false
  } finally {
    stopRenewing()
    if (paused) keeper.child.kill('SIGCONT')
  }
  await eventually(
    'the resumed keeper to archive the deleted Job and let it go',
    () => getJob(ns, 'app-migrate'),
    (j) => j === undefined,
    60_000
  )
  const resumed = await inBucket(prefix, ns, 'app-migrate')
  expect(resumed.folder).toMatch(new RegExp(`^${prefix}/${ns}/app-migrate/[\\w-]+/$`))
  expect(resumed.keys).toContain(`${resumed.folder}job.json`)
  expect(resumed.log).toContain('migrate: connecting to database') // kwok's pod.log

  // A failed migration post gives a 5s failure-grace, the keeper running: held with its TTL's
  // policy, archived at once, its TTL written as it is let go, and deleted by the TTL controller.
  const failed = await createJob({ namespace: ns, name: 'app-fail', behaviour: 'fail', labels: { app: 'keeper-post' } })
  await waitForJobCondition(ns, 'app-fail', 'Failed')
  const ttlSet = await post('--failure-grace', '5s')
  expect({ code: ttlSet.code, stderr: ttlSet.stderr }).toMatchObject({ code: 0 })
  expect(ttlSet.stderr + ttlSet.stdout).toContain(
    `(${TTL_AFTER_ARCHIVE}: ttl 1h, failure-grace 5s, the one of its outcome written as its hold is let go); held for the keeper (${LOGS_FINALIZER})`
  )
  await eventually(
    'the TTL controller to delete the archived Job',
    () => getJob(ns, 'app-fail'),
    (j) => j === undefined,
    60_000
  )
  const graced = await inBucket(prefix, ns, 'app-fail')
  expect(graced.jobFile).toMatchObject({ uid: failed.metadata?.uid, status: 'failed' })
  expect(graced.log).toContain('migrate: ERROR: relation "tuples" already exists') // kwok's pod.log

  // No keeper running (stopped: its Lease released): post gives the TTL alone, and says why.
  expect(await keeper.stop()).toBe(0)
  await createJob({ namespace: ns, name: 'app-seed', behaviour: 'hold', labels: { app: 'keeper-post' } })
  const alone = await post()
  expect(alone.code).toBe(0)
  expect(alone.stderr + alone.stdout).toContain(`keeper-namespace '${otherNs}': no keeper (no Lease job-sweeper-keeper): no Job is held for one`)
  const seed = await getJob(ns, 'app-seed')
  expect(seed?.spec?.ttlSecondsAfterFinished).toBe(86400) // positive control: post did patch it
  expect(seed?.metadata?.annotations?.[TTL_AFTER_ARCHIVE]).toBeUndefined()
  expect(alone.stderr + alone.stdout).toContain('so the TTL runs from its finish')
  expect(seed?.metadata?.finalizers ?? []).not.toContain(LOGS_FINALIZER)
}, 120_000)

test('the TTL starts after the archive: a Job post gives failure-grace 1s while a keeper runs, the keeper paused for a minute from before the Job fails: the Job and its pod stay, and it is deleted only after its log and job.json are in the bucket, complete', async () => {
  const prefix = `keeper-ttl-${ns}`
  const flags = ['--logs-dir', `s3://${bucket}/${prefix}`, '--s3-endpoint', endpoint]
  keeper = await startKeeper(ns, flags)
  await eventually(
    'the keeper to lead',
    async () => keeper?.output() ?? '',
    (out) => out.includes('keeper: leading')
  )
  // Not labelled managed: the keeper takes it once post labels (and holds) it.
  const job = await createJob({ namespace: ns, name: 'app-migrate', behaviour: 'fail', runFor: '15s', labels: { app: 'keeper-ttl' } })
  await eventually(
    'its pod to run',
    async () => (await coreApi().listNamespacedPod({ namespace: ns, labelSelector: 'job-name=app-migrate' })).items[0]?.status?.phase,
    (phase) => phase === 'Running'
  )
  const post = run(process.execPath, [
    cli,
    'post',
    '--namespace',
    ns,
    '--selector',
    'app=keeper-ttl',
    '--harvest-logs',
    'none',
    '--keeper-namespace',
    otherNs,
    '--ttl',
    '1s',
    '--failure-grace',
    '1s'
  ])
  expect({ code: post.code, stderr: post.stderr }).toMatchObject({ code: 0 })
  const held = await getJob(ns, 'app-migrate')
  expect(held?.metadata?.finalizers).toEqual([LOGS_FINALIZER])

  // Paused (SIGSTOP) before the Job fails, for a minute: the keeper is down when the TTL would
  // have fired (1 s after the failure). Before this change the TTL controller's foreground
  // deletion took the pod (the finalizer holds the Job, not its pods) and the archive had no log.
  const paused = keeper
  const started = Date.now()
  paused.child.kill('SIGSTOP')
  try {
    await waitForJobCondition(ns, 'app-migrate', 'Failed')
    const pods = async (): Promise<number> => (await coreApi().listNamespacedPod({ namespace: ns, labelSelector: 'job-name=app-migrate' })).items.length
    // Every look through the minute finds the Job, not being deleted, with its pod.
    const seen = await eventually(
      'a minute of the keeper paused, the Job and its pod there all along',
      async () => ({ at: Date.now(), job: await getJob(ns, 'app-migrate'), pods: await pods() }),
      ({ at, job, pods }) => {
        if (job === undefined || job.metadata?.deletionTimestamp !== undefined || pods !== 1)
          throw new Error(`deleted while the keeper was paused: ${JSON.stringify({ job: job?.metadata, pods })}`)
        return at - started >= 60_000
      },
      90_000
    )
    // What kept it: no TTL, only its policy by outcome for the release.
    expect(seen.job?.spec?.ttlSecondsAfterFinished).toBeUndefined()
    expect(seen.job?.metadata?.annotations?.[TTL_AFTER_ARCHIVE]).toBe('ttl 1s, failure-grace 1s')
    expect(post.stderr + post.stdout).toContain(`no ttlSecondsAfterFinished until the keeper archived its logs (${TTL_AFTER_ARCHIVE}: ttl 1s, failure-grace 1s`)
  } finally {
    paused.child.kill('SIGCONT')
  }
  // Resumed past its renew deadline, the keeper stops (its Lease counted lost) and its pod would
  // restart it; or it archives first. Either way a keeper archives, then writes the TTL.
  const resumed = await eventually(
    'the resumed keeper to stop, or to archive',
    async () => ({ code: paused.child.exitCode, job: await getJob(ns, 'app-migrate') }),
    ({ code, job }) => code !== null || job === undefined || job.metadata?.annotations?.[ARCHIVE_ANNOTATION.where] !== undefined,
    60_000
  )
  if (resumed.code !== null) keeper = await startKeeper(ns, flags)
  await eventually(
    'the Job to be deleted by its TTL, once archived',
    () => getJob(ns, 'app-migrate'),
    (j) => j === undefined,
    90_000
  )
  const saved = await inBucket(prefix, ns, 'app-migrate', 'main', job.metadata?.uid)
  expect(saved.log).toContain('migrate: ERROR: relation "tuples" already exists') // kwok's pod.log: read while the pod was there
  expect(saved.jobFile).toMatchObject({ uid: job.metadata?.uid, status: 'failed', state: 'complete', savedBy: { phase: 'keeper' } })
  const output = `${paused.output()}${keeper === paused ? '' : (keeper?.output() ?? '')}`
  expect(output).toContain(`archived ${ns}/app-migrate`)
  expect(output).toContain('ttlSecondsAfterFinished 1 (failed: failure-grace 1s, expired: deleted at once)')
  console.log(`paused-keeper test: ${Math.round((Date.now() - started) / 1000)}s from the pause to the Job's deletion`)
}, 240_000)

test('two releases’ app-migrate, one after the other: each archived in its own uid’s folder, the first’s archive kept', async () => {
  const prefix = `keeper-uid-${ns}`
  keeper = await startKeeper(ns, ['--logs-dir', `s3://${bucket}/${prefix}`, '--s3-endpoint', endpoint])
  const uids: string[] = []
  for (const release of [1, 2]) {
    const job = await createJob({ namespace: ns, name: 'app-migrate', behaviour: release === 1 ? 'fail' : 'succeed', labels: managed })
    uids.push(job.metadata?.uid ?? '')
    await eventually(
      `release ${release}'s migration archived and released`,
      () => getJob(ns, 'app-migrate'),
      (j) => j?.metadata?.annotations?.[ARCHIVE_ANNOTATION.where] !== undefined && !j.metadata?.finalizers?.includes(LOGS_FINALIZER),
      60_000
    )
    // The next release replaces it (before-hook-creation, or Helm's delete of the old Job).
    await batchApi().deleteNamespacedJob({ namespace: ns, name: 'app-migrate', propagationPolicy: 'Background' })
    await eventually(
      `release ${release}'s migration gone`,
      () => getJob(ns, 'app-migrate'),
      (j) => j === undefined
    )
  }
  expect(uids[0]).not.toBe(uids[1])
  const [first, second] = [await inBucket(prefix, ns, 'app-migrate', 'main', uids[0]), await inBucket(prefix, ns, 'app-migrate', 'main', uids[1])]
  expect([first.folder, second.folder]).toEqual([`${prefix}/${ns}/app-migrate/${uids[0]}/`, `${prefix}/${ns}/app-migrate/${uids[1]}/`])
  expect(first.keys).toEqual(second.keys) // one listing of the name's folder: both archives in it
  expect(first.keys).toEqual(expect.arrayContaining([`${first.folder}job.json`, `${second.folder}job.json`]))
  expect(first.jobFile).toMatchObject({ uid: uids[0], status: 'failed' })
  expect(second.jobFile).toMatchObject({ uid: uids[1], status: 'succeeded' })
  expect(first.log).not.toBe('')
  expect(second.log).not.toBe('')
}, 150_000)

test('a keeper stopped for good holds nothing: with keeper-namespace, sweep and pre save a held Job’s logs and let go of the hold once its Lease is stale (left to the keeper while it is fresh), and a namespace’s deletion completes', async () => {
  const prefix = `keeper-stopped-${ns}`
  const doomed = await createNamespace('keeper-doomed')
  moreNamespaces.push(doomed)
  const selector = 'app=keeper-stopped'
  const mine = { ...managed, app: 'keeper-stopped' }
  keeper = await startKeeper(`${ns},${doomed}`, ['--logs-dir', `s3://${bucket}/keeper-${ns}`, '--s3-endpoint', endpoint])
  await createJob({ namespace: ns, name: 'app-migrate', behaviour: 'hold', labels: mine })
  await createJob({ namespace: ns, name: 'app-worker', behaviour: 'hold', labels: mine })
  await createJob({ namespace: doomed, name: 'app-seed', behaviour: 'hold', labels: mine })
  for (const [namespace, name] of [
    [ns, 'app-migrate'],
    [ns, 'app-worker'],
    [doomed, 'app-seed']
  ])
    await eventually(
      `${namespace}/${name} held while its pod runs`,
      async () => ({ job: await getJob(namespace, name), pods: (await coreApi().listNamespacedPod({ namespace, labelSelector: `job-name=${name}` })).items }),
      ({ job, pods }) => job?.metadata?.finalizers?.includes(LOGS_FINALIZER) === true && pods[0]?.status?.phase === 'Running'
    )
  // Not spawnSync: the Lease is renewed by this process while sweep runs (renewForPausedKeeper).
  const phase = (name: string, namespace: string, ...flags: string[]): Promise<CliRun> =>
    runCli(
      [
        name,
        '--namespace',
        namespace,
        '--selector',
        selector,
        '--keeper-namespace',
        otherNs,
        '--logs-dir',
        `s3://${bucket}/${prefix}`,
        '--s3-endpoint',
        endpoint,
        ...flags
      ],
      withCluster()
    )

  // The keeper paused, its Lease renewed in its name: the hold of a Job kubectl deletes is left to it.
  keeper.child.kill('SIGSTOP')
  expect(kubectl('delete', 'job', 'app-migrate', '-n', ns, '--wait=false').code).toBe(0)
  const stopRenewing = renewForPausedKeeper(otherNs)
  const leftToIt = await phase('sweep', ns)
  stopRenewing()
  expect({ code: leftToIt.code, stderr: leftToIt.stderr }).toMatchObject({ code: 0 })
  const waiting = await getJob(ns, 'app-migrate')
  expect([waiting?.metadata?.deletionTimestamp !== undefined, waiting?.metadata?.finalizers]).toEqual([true, [LOGS_FINALIZER]])
  const store = s3()
  try {
    expect(await keysUnder(store, bucket, `${prefix}/`)).toEqual([])
  } finally {
    store.destroy()
  }

  // Stopped for good (SIGKILL: its Lease is not released, and goes stale 30 s after its last renewal).
  keeper.child.kill('SIGKILL')
  keeper.child.kill('SIGCONT')
  await eventually(
    'the keeper’s Lease to go stale',
    async () => {
      const lease = await kubeConfig().makeApiClient(CoordinationV1Api).readNamespacedLease({ namespace: otherNs, name: 'job-sweeper-keeper' })
      return Date.now() - new Date(lease.spec?.renewTime ?? 0).getTime() - (lease.spec?.leaseDurationSeconds ?? 30) * 1000
    },
    (pastDue) => pastDue > 1000,
    60_000
  )
  const swept = await phase('sweep', ns)
  expect({ code: swept.code, stderr: swept.stderr }).toMatchObject({ code: 0 })
  expect(swept.stdout + swept.stderr).toContain(
    `let go of the keeper's hold on Job ${ns}/app-migrate (no keeper: its Lease job-sweeper-keeper was not renewed in the 30s this run watched it`
  )
  await eventually(
    'the deleted Job to go',
    () => getJob(ns, 'app-migrate'),
    (j) => j === undefined
  )
  expect((await inBucket(prefix, ns, 'app-migrate')).log).toContain('migrate: connecting to database') // kwok's pod.log
  // The running Job nobody deleted: still held (a sweep deletes no running Job), a keeper may come back for it.
  expect((await getJob(ns, 'app-worker'))?.metadata?.finalizers).toEqual([LOGS_FINALIZER])

  // A namespace's deletion: the held Job keeps it Terminating until a sweep lets go.
  expect(kubectl('delete', 'namespace', doomed, '--wait=false').code).toBe(0)
  await eventually(
    'the namespace’s Job to be deleted, and held',
    () => getJob(doomed, 'app-seed'),
    (j) => j?.metadata?.deletionTimestamp !== undefined
  )
  const sweptDoomed = await phase('sweep', doomed)
  expect({ code: sweptDoomed.code, stderr: sweptDoomed.stderr }).toMatchObject({ code: 0 })
  await eventually(
    'the namespace to be gone',
    async () => (await coreApi().listNamespace()).items.some((n) => n.metadata?.name === doomed),
    (there) => !there,
    90_000
  )
  // Saved by the sweep in the Job's uid's folder, as every phase saves (#34).
  const doomedSeed = await inBucket(prefix, doomed, 'app-seed')
  expect(doomedSeed.jobFile?.uid).toBeDefined()
  expect(doomedSeed.keys).toContain(`${prefix}/${doomed}/app-seed/${doomedSeed.jobFile?.uid}/job.json`)

  // pre deletes the held running Job (on-running: delete): its logs saved, the hold let go, and it is seen gone.
  const pre = await phase('pre', ns, '--on-running', 'delete', '--harvest-logs', 'none')
  expect({ code: pre.code, stderr: pre.stderr }).toMatchObject({ code: 0 })
  expect(pre.stdout + pre.stderr).toContain(`let go of the keeper's hold on Job ${ns}/app-worker`)
  expect(await getJob(ns, 'app-worker')).toBeUndefined()
  expect((await inBucket(prefix, ns, 'app-worker')).log).toContain('migrate: connecting to database')
}, 180_000)

/**
 * A migration on the real node, in `namespace`: it writes its first line, and at SIGTERM says so,
 * takes 3 s to roll back and says that too, as a migration would. Resolves once the keeper holds it
 * and its first line is written.
 */
async function heldRealMigration(namespace: string): Promise<V1Job> {
  const script =
    "echo 'migrate: applying 0042'; trap 'echo migrate: interrupted, rolling back; sleep 3; echo migrate: rolled back; exit 143' TERM; while true; do sleep 1; done"
  const job = await batchApi().createNamespacedJob({
    namespace,
    body: {
      metadata: { name: 'app-migrate', labels: managed },
      spec: {
        backoffLimit: 0,
        template: {
          spec: realNodePod({
            restartPolicy: 'Never',
            terminationGracePeriodSeconds: 10,
            containers: [{ name: 'main', image: testImage, command: ['sh', '-c', script] }]
          })
        }
      }
    }
  })
  await eventually(
    'the migration held while its container runs, and its first line written',
    async () => ({
      held: (await getJob(namespace, 'app-migrate'))?.metadata?.finalizers?.includes(LOGS_FINALIZER) === true,
      log: kubectl('logs', 'job/app-migrate', '-n', namespace).stdout
    }),
    ({ held, log }) => held && log.includes('migrate: applying 0042'),
    120_000
  )
  return job
}

onRealNode(
  'on the real node, a held migration still running when its namespace is deleted: its pod goes before its Job, so the keeper saves what the container wrote while the kubelet stops it, and the archive lists it once the pod is gone; the namespace’s deletion completes',
  async () => {
    const prefix = `keeper-real-${ns}`
    const doomed = await createNamespace('keeper-real')
    moreNamespaces.push(doomed)
    keeper = await startKeeper(doomed, ['--logs-dir', `s3://${bucket}/${prefix}`, '--s3-endpoint', endpoint])
    await heldRealMigration(doomed)
    expect(kubectl('delete', 'namespace', doomed, '--wait=false').code).toBe(0)
    await eventually(
      'the namespace to be gone',
      async () => (await coreApi().listNamespace()).items.some((n) => n.metadata?.name === doomed),
      (there) => !there,
      120_000
    )
    // The namespace controller deletes the pod before its Job: the container stops, the Job fails,
    // and the kubelet removes the pod before the Job is finished. What it wrote was saved meanwhile.
    // Followed to its end while the kubelet stopped it: the lines written after SIGTERM are in the archive.
    expect(keeper.output()).toMatch(new RegExp(`followed ${doomed}/app-migrate's app-migrate-\\w+/main to its end: [1-9]\\d* bytes`))
    expect(keeper.output()).toMatch(new RegExp(`archived ${doomed}/app-migrate \\([^)]*\\): [1-9]\\d* bytes of logs`))
    const saved = await inBucket(prefix, doomed, 'app-migrate')
    expect(saved.log).toContain('migrate: applying 0042')
    expect(saved.log).toContain('migrate: interrupted, rolling back')
    expect(saved.jobFile).toMatchObject({ logs: [expect.objectContaining({ file: expect.stringMatching(/^app-migrate-\w+\/main\.log$/) })] })
    expect(saved.folder).toMatch(new RegExp(`^${prefix}/${doomed}/app-migrate/[\\w-]+/$`))
    expect(saved.keys).toContain(`${saved.folder}job.json`)
  },
  240_000
)

onRealNode(
  'on the real node, kubectl delete (background) of a held migration still running: the keeper stops its pod (the garbage collector would only once the Job is gone), follows its log to its end, and archives the lines it writes after SIGTERM, complete, before it lets the Job go',
  async () => {
    const prefix = `keeper-real-delete-${ns}`
    keeper = await startKeeper(ns, ['--logs-dir', `s3://${bucket}/${prefix}`, '--s3-endpoint', endpoint])
    const job = await heldRealMigration(ns)
    expect(kubectl('delete', 'job', 'app-migrate', '-n', ns, '--wait=false').code).toBe(0) // background, kubectl's default
    await eventually(
      'the Job to be gone',
      () => getJob(ns, 'app-migrate'),
      (j) => j === undefined,
      120_000
    )
    expect(keeper.output()).toMatch(new RegExp(`stopping ${ns}/app-migrate's pods \\(its deletion was asked while they ran; deleted app-migrate-\\w+\\)`))
    expect(keeper.output()).toMatch(new RegExp(`followed ${ns}/app-migrate's app-migrate-\\w+/main to its end: [1-9]\\d* bytes`))
    const saved = await inBucket(prefix, ns, 'app-migrate', 'main', job.metadata?.uid)
    for (const line of ['migrate: applying 0042', 'migrate: interrupted, rolling back', 'migrate: rolled back']) expect(saved.log).toContain(line)
    expect(saved.jobFile).toMatchObject({ state: 'complete', logs: [expect.objectContaining({ file: expect.stringMatching(/^app-migrate-\w+\/main\.log$/) })] })
  },
  240_000
)

test('helm uninstall of a release whose migration still runs: the held Job and its pod wait for the keeper, which archives what the pod wrote, then the Job goes; the other release stays', async () => {
  const prefix = `keeper-helm-${ns}`
  keeper = await startKeeper(ns, ['--logs-dir', `s3://${bucket}/${prefix}`, '--s3-endpoint', endpoint, '--selector', 'app.kubernetes.io/instance=gone'])
  const install = (release: string): void =>
    expect(helm('install', release, chart, '-n', ns, '--set', 'hookJob=false', '--set', 'migrationRunFor=10m').code).toBe(0)
  install('gone')
  install('stays')
  await eventually(
    'the migration held while it runs',
    () => getJob(ns, 'gone-migrate'),
    (j) => j?.metadata?.finalizers?.includes(LOGS_FINALIZER) === true && (j.status?.active ?? 0) > 0
  )
  const uninstall = helm('uninstall', 'gone', '-n', ns)
  expect(uninstall.code).toBe(0)
  await eventually(
    'the Job archived and gone',
    () => getJob(ns, 'gone-migrate'),
    (j) => j === undefined,
    60_000
  )
  // The keeper prints its line once the release's patch returned: the Job can be gone a moment before.
  const running = keeper
  await eventually(
    'the keeper to say it archived the Job',
    async () => running.output(),
    (output) => output.includes(`archived ${ns}/gone-migrate (being deleted before it finished: what its pods wrote)`),
    15_000
  )
  const gone = await inBucket(prefix, ns, 'gone-migrate', 'migrate')
  expect(gone.log).toContain('migrate: connecting to database') // kwok's pod.log
  expect(gone.folder).toMatch(new RegExp(`^${prefix}/${ns}/gone-migrate/[\\w-]+/$`))
  expect(gone.keys).toContain(`${gone.folder}job.json`)
  // The other release, out of the keeper's scope: its running Job neither held nor touched.
  const other = await getJob(ns, 'stays-migrate')
  expect(other?.metadata?.finalizers ?? []).not.toContain(LOGS_FINALIZER)
  expect(other?.metadata?.deletionTimestamp).toBeUndefined()
  expect(helm('uninstall', 'stays', '-n', ns).code).toBe(0)
}, 120_000)

test('--all-namespaces: one watch of every namespace; the Jobs of its selector in two namespaces are held and archived, the others are not', async () => {
  const prefix = `keeper-all-${ns}`
  // A selector of this test alone: other suites' Jobs on the shared cluster stay out of its scope.
  const mine = { 'job-sweeper.test/keeper-all': ns }
  keeper = await startKeeper('', [
    '--all-namespaces',
    '--selector',
    `job-sweeper.test/keeper-all=${ns}`,
    '--logs-dir',
    `s3://${bucket}/${prefix}`,
    '--s3-endpoint',
    endpoint
  ])
  // The scope line goes to stdout, "serving on" (which startKeeper awaits) to stderr: either may come first.
  const scopeLine = `keeper: Jobs matching job-sweeper.test/keeper-all=${ns} in all namespaces`
  const running = keeper
  expect(
    await eventually(
      'the keeper to say its scope',
      async () => running.output(),
      (o) => o.includes(scopeLine)
    )
  ).toContain(scopeLine)
  await createJob({ namespace: ns, name: 'app-migrate', behaviour: 'fail', runFor: '2s', labels: mine })
  await createJob({ namespace: otherNs, name: 'app-seed', behaviour: 'succeed', runFor: '2s', labels: mine })
  const outside = await createJob({ namespace: otherNs, name: 'app-report', behaviour: 'succeed', labels: managed })
  decoys.push({ namespace: otherNs, name: 'app-report', uid: outside.metadata?.uid ?? '', why: 'not matching the keeper’s selector' })
  for (const [namespace, name] of [
    [ns, 'app-migrate'],
    [otherNs, 'app-seed']
  ])
    await eventually(
      `${namespace}/${name} archived`,
      () => getJob(namespace, name),
      (j) =>
        j?.metadata?.annotations?.[ARCHIVE_ANNOTATION.where] === `s3://${bucket}/${prefix}/${namespace}/${name}/${j?.metadata?.uid}/` &&
        !j.metadata.finalizers?.includes(LOGS_FINALIZER)
    )
  const lease = await kubeConfig().makeApiClient(CoordinationV1Api).readNamespacedLease({ namespace: otherNs, name: 'job-sweeper-keeper' })
  expect(lease.metadata?.annotations?.['job-sweeper.io/keeper-namespaces']).toBe('*')
  expect(await keeper.stop()).toBe(0)
}, 60_000)

test('keeper --let-go (the chart’s post-delete hook) once the keeper stopped: a finished Job it could not archive is archived now and released; a running one is released with a Warning Event; nothing else is touched', async () => {
  keeper = await startKeeper(ns, ['--logs-dir', 's3://nowhere/logs', '--s3-endpoint', `http://127.0.0.1:${await closedPort()}`])
  await createJob({ namespace: ns, name: 'app-migrate', behaviour: 'fail', labels: managed })
  const worker = await createJob({ namespace: ns, name: 'app-worker', behaviour: 'hold', labels: managed })
  for (const name of ['app-migrate', 'app-worker'])
    await eventually(
      `${name} held`,
      () => getJob(ns, name),
      (j) => j?.metadata?.finalizers?.includes(LOGS_FINALIZER) === true
    )
  await eventually(
    'an archive of the finished migration to fail',
    async () => keeper?.output() ?? '',
    (out) => out.includes(`not archived ${ns}/app-migrate, trying again`)
  )
  expect(await keeper.stop()).toBe(0)
  expect((await getJob(ns, 'app-migrate'))?.metadata?.annotations?.[ARCHIVE_ANNOTATION.where]).toBeUndefined() // its store never answered

  const prefix = `keeper-let-go-${ns}`
  const letGo = run(process.execPath, [
    cli,
    'keeper',
    '--let-go',
    '--namespace',
    ns,
    '--lease-namespace',
    otherNs,
    '--logs-dir',
    `s3://${bucket}/${prefix}`,
    '--s3-endpoint',
    endpoint
  ])
  expect({ code: letGo.code, stderr: letGo.stderr }).toMatchObject({ code: 0 })
  expect(letGo.stderr).toContain(
    `keeper --let-go: 2 held Job(s) in ${ns}: 1 archived and released, 0 released (archived before), 1 released unarchived (a Warning Event on each), 0 still held`
  )
  const migrate = await getJob(ns, 'app-migrate')
  expect(migrate?.metadata?.finalizers ?? []).not.toContain(LOGS_FINALIZER)
  expect(migrate?.metadata?.annotations?.[ARCHIVE_ANNOTATION.where]).toBe(`s3://${bucket}/${prefix}/${ns}/app-migrate/${migrate?.metadata?.uid}/`)
  const client = s3()
  try {
    expect(await keysUnder(client, bucket, `${prefix}/${ns}/app-migrate/`)).toContain(`${prefix}/${ns}/app-migrate/${migrate?.metadata?.uid}/job.json`)
  } finally {
    client.destroy()
  }
  const running = await getJob(ns, 'app-worker')
  expect(running?.metadata?.finalizers ?? []).not.toContain(LOGS_FINALIZER)
  expect(running?.metadata?.deletionTimestamp).toBeUndefined()
  const events = await coreApi().listNamespacedEvent({ namespace: ns, fieldSelector: `involvedObject.uid=${worker.metadata?.uid},reason=LogsNotArchived` })
  expect(events.items.map((e) => e.type)).toEqual(['Warning'])
  expect(events.items[0].message).toContain('Released unarchived: the keeper is being removed (--let-go) while it still runs.')
}, 60_000)

test('a keeper killed mid-upload (SIGKILL): its upload leaves nothing in the store; the next, once the Lease expired, archives the Job again from the start, and its job.json names it', async () => {
  const prefix = `keeper-restart-${ns}`
  const proxy = await startStoreProxy(endpoint)
  try {
    keeper = await startKeeper(ns, ['--logs-dir', `s3://${bucket}/${prefix}`, '--s3-endpoint', proxy.url])
    const killed = keeper
    proxy.onRequest = (seen) => {
      // The first log's upload: the keeper dies with it in flight, and the store never gets it.
      if (proxy.mode === 'pass' && /^PUT \S+\/main\.log/.test(seen[seen.length - 1])) {
        proxy.mode = 'gone'
        killed.child.kill('SIGKILL')
      }
    }
    const job = await createJob({ namespace: ns, name: 'app-migrate', behaviour: 'fail', runFor: '2s', labels: managed })
    await eventually(
      'the keeper killed mid-upload',
      async () => killed.child.exitCode ?? killed.child.signalCode,
      (code) => code !== null
    )
    expect(proxy.seen.some((r) => /^PUT \S+\/main\.log/.test(r))).toBe(true) // killed with its log's upload in flight
    expect((await getJob(ns, 'app-migrate'))?.metadata?.finalizers).toContain(LOGS_FINALIZER) // still held
    expect((await inBucket(prefix, ns, 'app-migrate')).keys).toEqual([]) // nothing that looks complete
    keeper = await startKeeper(ns, ['--logs-dir', `s3://${bucket}/${prefix}`, '--s3-endpoint', endpoint])
    await eventually(
      'the next keeper to archive it',
      () => getJob(ns, 'app-migrate'),
      (j) => j?.metadata?.annotations?.[ARCHIVE_ANNOTATION.where] !== undefined,
      90_000
    )
    const again = await inBucket(prefix, ns, 'app-migrate')
    expect(again.jobFile).toMatchObject({ uid: job.metadata?.uid, savedBy: { keeper: `${hostname()}-${keeper.child.pid}`, attempt: 1 } })
    expect(again.jobFile?.savedBy?.keeper).not.toBe(`${hostname()}-${killed.child.pid}`)
    expect(again.keys.some((k) => k.endsWith('/main.log'))).toBe(true)
  } finally {
    await proxy.close()
  }
}, 150_000)

test('a store under the documented policy (PutObject, AbortMultipartUpload; no read or list): a GET of a missing key is refused 403 as AWS refuses it, and the keeper archives all the same', async () => {
  const leastBucket = `least-${ns}`
  const writer = await leastPrivilegeWriter(leastBucket, 'keeper-logs')
  // The premise: the writer is refused a read of a key that is not there (AWS: 403, not 404, without s3:ListBucket).
  const asWriter = s3As(writer)
  const asRoot = s3As({ accessKeyId: process.env.AWS_ACCESS_KEY_ID ?? '', secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY ?? '' })
  try {
    const missing = { Bucket: leastBucket, Key: `keeper-logs/${ns}/app-migrate/none/job.json` }
    await expect(asWriter.send(new GetObjectCommand(missing))).rejects.toMatchObject({ name: 'AccessDenied', $metadata: { httpStatusCode: 403 } })
    await expect(asRoot.send(new GetObjectCommand(missing))).rejects.toMatchObject({ $metadata: { httpStatusCode: 404 } }) // control: the key is missing

    keeper = await startKeeper(ns, ['--logs-dir', `s3://${leastBucket}/keeper-logs`, '--s3-endpoint', endpoint], {
      AWS_ACCESS_KEY_ID: writer.accessKeyId,
      AWS_SECRET_ACCESS_KEY: writer.secretAccessKey
    })
    const job = await createJob({ namespace: ns, name: 'app-migrate', behaviour: 'fail', labels: managed })
    const archived = await eventually(
      'the keeper to archive the Job as the writer',
      () => getJob(ns, 'app-migrate'),
      (j) => j?.metadata?.annotations?.[ARCHIVE_ANNOTATION.state] !== undefined,
      60_000
    )
    expect(archived?.metadata?.annotations?.[ARCHIVE_ANNOTATION.state]).toBe('complete')
    const saved = await savedJob(asRoot, leastBucket, `keeper-logs/${ns}/app-migrate/`)
    expect(saved.jobFile).toMatchObject({ uid: job.metadata?.uid, savedBy: { phase: 'keeper', attempt: 1 } })
    expect(saved.log).not.toBe('')
    expect(keeper.output()).not.toMatch(/AccessDenied|not archived/)
  } finally {
    asWriter.destroy()
    asRoot.destroy()
  }
}, 90_000)

test('a --listen address already in use: the keeper exits 1 and says so, rather than run unseen without its Lease', async () => {
  const taken = createServer()
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
  const port = (taken.address() as { port: number }).port
  try {
    const child = spawn(
      process.execPath,
      [cli, 'keeper', '--namespace', ns, '--lease-namespace', otherNs, '--listen', `127.0.0.1:${port}`, '--logs-dir', `s3://${bucket}/listen-${ns}`],
      {
        env: { ...process.env, KUBECONFIG: testCluster().kubeconfig },
        stdio: ['ignore', 'pipe', 'pipe']
      }
    )
    let output = ''
    child.stderr?.on('data', (c: Buffer) => (output += c.toString()))
    child.stdout?.on('data', (c: Buffer) => (output += c.toString()))
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
    expect([code, output]).toEqual([1, expect.stringContaining(`cannot serve /healthz, /readyz and /metrics on --listen 127.0.0.1:${port}: listen EADDRINUSE`)])
    // It never led: no Lease was taken in its name.
    expect(output).not.toContain('keeper: leading')
  } finally {
    await new Promise<void>((resolve) => taken.close(() => resolve()))
  }
}, 60_000)

test('an API server answering 429 for a minute: the leading keeper stops (exit 1) before its Lease expires, rather than run on unheard; restarted, it takes the Lease again and archives', async () => {
  const prefix = `keeper-429-${ns}`
  const proxy = await startFaultProxy(testCluster())
  try {
    keeper = await startKeeper(ns, ['--logs-dir', `s3://${bucket}/${prefix}`, '--s3-endpoint', endpoint], proxy.env())
    const first = keeper
    await eventually(
      'the keeper to lead',
      async () => first.output(),
      (o) => o.includes('keeper: leading')
    )
    const throttled = proxy.addRule({ fault: { kind: 'status', code: 429, retryAfterSeconds: 1 } })
    const since = Date.now()
    const code = await eventually(
      'the keeper to stop',
      async () => first.child.exitCode,
      (c) => c !== null,
      60_000
    )
    const after = Date.now() - since
    expect([code, first.output()]).toEqual([1, expect.stringContaining('within 20s of its last renewal')])
    // It stopped before its Lease (30 s from the last renewal) could expire and another keeper take it.
    expect(after).toBeLessThan(30_000)
    throttled.remove()

    // Restarted (as its pod would be), through the same API server: it waits out the old Lease, then leads and archives.
    keeper = await startKeeper(ns, ['--logs-dir', `s3://${bucket}/${prefix}`, '--s3-endpoint', endpoint], proxy.env())
    const job = await createJob({ namespace: ns, name: 'app-migrate', behaviour: 'fail', labels: managed })
    await eventually(
      'the restarted keeper to archive the Job',
      () => getJob(ns, 'app-migrate'),
      (j) => j?.metadata?.annotations?.[ARCHIVE_ANNOTATION.state] === 'complete',
      90_000
    )
    expect((await inBucket(prefix, ns, 'app-migrate')).jobFile).toMatchObject({ uid: job.metadata?.uid })
  } finally {
    if (keeper && keeper.child.exitCode === null) await keeper.stop()
    await proxy.close()
  }
}, 200_000)

test('a pod someone labelled with a Job’s uid, not created by its Job: not one of the Job’s pods, nothing of it archived with the Job’s logs', async () => {
  const prefix = `keeper-planted-${ns}`
  // Planted once the Job finished: while it runs, the Job controller adopts a pod its selector
  // matches (it becomes the Job's, ownerReference and all); a finished Job adopts none.
  const job = await createJob({ namespace: ns, name: 'app-migrate', behaviour: 'fail', labels: managed })
  const uid = job.metadata?.uid ?? ''
  await waitForJobCondition(ns, 'app-migrate', 'Failed')
  await coreApi().createNamespacedPod({
    namespace: ns,
    body: {
      metadata: { name: 'planted', labels: { 'batch.kubernetes.io/controller-uid': uid, 'controller-uid': uid, 'job-name': 'app-migrate' } },
      // It runs, as the Job's pods do (on the kwok node): its log could be read.
      spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'example.invalid/planted:1' }] }
    }
  })
  await eventually(
    'the planted pod to run',
    async () => (await coreApi().readNamespacedPod({ namespace: ns, name: 'planted' })).status?.phase,
    (phase) => phase !== undefined && phase !== 'Pending'
  )
  const planted = await coreApi().readNamespacedPod({ namespace: ns, name: 'planted' })
  expect(planted.metadata?.ownerReferences ?? []).toEqual([]) // not adopted: not the Job's
  keeper = await startKeeper(ns, ['--logs-dir', `s3://${bucket}/${prefix}`, '--s3-endpoint', endpoint])
  await eventually(
    'the Job archived',
    () => getJob(ns, 'app-migrate'),
    (j) => j?.metadata?.annotations?.[ARCHIVE_ANNOTATION.state] !== undefined,
    60_000
  )
  const saved = await inBucket(prefix, ns, 'app-migrate')
  expect(saved.keys.some((k) => k.endsWith('/main.log'))).toBe(true) // control: the Job's own pod's log
  expect(saved.keys.filter((k) => k.includes('/planted/'))).toEqual([])
  expect(JSON.stringify(saved.jobFile)).not.toContain('planted')
}, 90_000)

test('Jobs created already carrying the keeper’s note (copied from a template: another uid; an earlier keeper’s: no uid) are held and archived under their own uid, nothing written where the copied note points; a Job with no note beside them, the same (control)', async () => {
  const prefix = `keeper-noted-${ns}`
  const note = (where: string): Record<string, string> => ({
    [ARCHIVE_ANNOTATION.where]: where,
    [ARCHIVE_ANNOTATION.state]: 'complete',
    [ARCHIVE_ANNOTATION.at]: '2026-12-01T00:00:00.000Z'
  })
  const copiedTo = `${prefix}/${ns}/app-migrate/uid-of-the-template/`
  const created = {
    'app-migrate': await createJob({ namespace: ns, name: 'app-migrate', behaviour: 'fail', labels: managed, annotations: note(`s3://${bucket}/${copiedTo}`) }),
    'app-seed': await createJob({
      namespace: ns,
      name: 'app-seed',
      behaviour: 'fail',
      labels: managed,
      annotations: note(`s3://${bucket}/${prefix}/${ns}/app-seed/`)
    }),
    'app-report': await createJob({ namespace: ns, name: 'app-report', behaviour: 'fail', labels: managed })
  }
  keeper = await startKeeper(ns, ['--logs-dir', `s3://${bucket}/${prefix}`, '--s3-endpoint', endpoint])
  for (const [name, job] of Object.entries(created)) {
    const uid = job.metadata?.uid ?? ''
    const archived = await eventually(
      `${name} archived under its uid and released`,
      () => getJob(ns, name),
      (j) =>
        j?.metadata?.annotations?.[ARCHIVE_ANNOTATION.where] === `s3://${bucket}/${prefix}/${ns}/${name}/${uid}/` &&
        !j.metadata?.finalizers?.includes(LOGS_FINALIZER),
      60_000
    )
    expect([name, archived?.metadata?.annotations?.[ARCHIVE_ANNOTATION.state]]).toEqual([name, 'complete'])
    const saved = await inBucket(prefix, ns, name, 'main', uid)
    expect([name, saved.folder, saved.jobFile?.uid, saved.log !== '']).toEqual([name, `${prefix}/${ns}/${name}/${uid}/`, uid, true])
  }
  const client = s3()
  try {
    expect(await keysUnder(client, bucket, copiedTo)).toEqual([]) // where the copied note pointed: nothing written there
  } finally {
    client.destroy()
  }
}, 120_000)

test('docs/keeper.md’s command removes the keeper’s finalizer by hand (the keeper gone for good) and leaves other finalizers', async () => {
  keeper = await startKeeper(ns, ['--logs-dir', 's3://nowhere/logs', '--s3-endpoint', `http://127.0.0.1:${await closedPort()}`])
  await createJob({ namespace: ns, name: 'app-migrate', behaviour: 'fail', labels: managed })
  await eventually(
    'held',
    () => getJob(ns, 'app-migrate'),
    (j) => j?.metadata?.finalizers?.includes(LOGS_FINALIZER) === true
  )
  expect(await keeper.stop()).toBe(0)
  // Another finalizer before ours: the command removes ours only.
  const other = 'example.com/other'
  const current = (await getJob(ns, 'app-migrate'))?.metadata?.finalizers ?? []
  const patch = (ops: object[]): void => expect(kubectl('patch', 'job', 'app-migrate', '-n', ns, '--type=json', '-p', JSON.stringify(ops)).code).toBe(0)
  patch([{ op: 'replace', path: '/metadata/finalizers', value: [other, ...current] }])
  expect((await getJob(ns, 'app-migrate'))?.metadata?.finalizers).toEqual(expect.arrayContaining([other, LOGS_FINALIZER])) // positive control
  expect(releaseByHand().code).toBe(0)
  const after = (await getJob(ns, 'app-migrate'))?.metadata?.finalizers ?? []
  expect(after).toContain(other)
  expect(after).not.toContain(LOGS_FINALIZER)
  expect(after).toEqual([other, ...current.filter((f) => f !== LOGS_FINALIZER)])
  patch([{ op: 'remove', path: '/metadata/finalizers/0' }])
}, 60_000)

/** The object key of `file` in the keeper's archive folder its annotation names (s3://bucket/<folder>/). */
const archived = (job: { metadata?: { annotations?: Record<string, string> } } | undefined, file: string): string =>
  `${(job?.metadata?.annotations?.[ARCHIVE_ANNOTATION.where] ?? '').replace(`s3://${bucket}/`, '')}${file}`

test('a failed Job whose pod was force-deleted before any archive (the keeper stopped meanwhile): archived incomplete, with a LogsIncomplete Warning Event, job.json and the metric saying the pod was gone; a failed Job beside it: complete, its log in the bucket', async () => {
  const prefix = `keeper-incomplete-${ns}`
  const lost = await createJob({ namespace: ns, name: 'app-migrate', behaviour: 'fail', runFor: '1s', labels: managed })
  await createJob({ namespace: ns, name: 'app-seed', behaviour: 'fail', runFor: '1s', labels: managed })
  await waitForJobCondition(ns, 'app-migrate', 'Failed')
  await waitForJobCondition(ns, 'app-seed', 'Failed')
  // No keeper runs: its pod is deleted by hand, at once, before anything read its log.
  expect(kubectl('delete', 'pod', '-n', ns, '-l', `batch.kubernetes.io/controller-uid=${lost.metadata?.uid}`, '--grace-period=0', '--force').code).toBe(0)
  await eventually(
    'the failed pod gone',
    async () => (await coreApi().listNamespacedPod({ namespace: ns, labelSelector: `batch.kubernetes.io/controller-uid=${lost.metadata?.uid}` })).items.length,
    (n) => n === 0
  )
  expect((await getJob(ns, 'app-migrate'))?.status?.failed).toBe(1) // the Job counts it still

  keeper = await startKeeper(ns, ['--logs-dir', `s3://${bucket}/${prefix}`, '--s3-endpoint', endpoint])
  const state = (name: string) => () => getJob(ns, name)
  const stated = (j: Awaited<ReturnType<typeof getJob>>): boolean => j?.metadata?.annotations?.[ARCHIVE_ANNOTATION.state] !== undefined
  const incomplete = await eventually('the migration archived', state('app-migrate'), stated)
  const complete = await eventually('the seed archived', state('app-seed'), stated)
  expect(incomplete?.metadata?.annotations?.[ARCHIVE_ANNOTATION.state]).toBe('incomplete: 1 pod(s) gone before their logs were read')
  expect(complete?.metadata?.annotations?.[ARCHIVE_ANNOTATION.state]).toBe('complete')
  const events = await coreApi().listNamespacedEvent({ namespace: ns, fieldSelector: `involvedObject.uid=${lost.metadata?.uid},reason=LogsIncomplete` })
  expect(events.items.map((e) => [e.type, e.message])).toEqual([
    [
      'Warning',
      `job-sweeper keeper: its archive at ${incomplete?.metadata?.annotations?.[ARCHIVE_ANNOTATION.where]} is incomplete: pod-gone: 1 of its 1 ended pod(s): gone before their logs were read (deleted, or garbage-collected)`
    ]
  ])
  const seedEvents = await coreApi().listNamespacedEvent({
    namespace: ns,
    fieldSelector: `involvedObject.uid=${complete?.metadata?.uid},reason=LogsIncomplete`
  })
  expect(seedEvents.items).toEqual([])
  const store = s3()
  try {
    const lostFile = JSON.parse((await objectBytes(store, bucket, archived(incomplete, 'job.json'))).toString())
    expect(lostFile).toMatchObject({ savedBy: { phase: 'keeper' }, state: 'incomplete', logs: [], missing: [{ reason: 'pod-gone' }] })
    const seedFile = JSON.parse((await objectBytes(store, bucket, archived(complete, 'job.json'))).toString())
    expect(seedFile).toMatchObject({ state: 'complete', missing: [] })
    expect(seedFile.logs).toHaveLength(1)
    const seedLog = (await objectBytes(store, bucket, archived(complete, seedFile.logs[0].file))).toString()
    expect(seedLog).toContain('migrate: ERROR: relation "tuples" already exists') // kwok's pod.log
  } finally {
    store.destroy()
  }
  const metrics = (await get(keeper, '/metrics')).text
  expect(metrics).toMatch(/^job_sweeper_keeper_archives_incomplete_total\{reason="pod_gone"\} 1$/m)
  expect(metrics).toMatch(/^job_sweeper_keeper_jobs_archived_total 2$/m)
}, 120_000)

test('a sweep over a Job the keeper archived saves nothing over its archive (job.json as the keeper left it, the row says where it is); a Job the keeper did not archive beside it has its logs saved', async () => {
  const prefix = `keeper-archived-${ns}`
  const selector = 'app=keeper-archived'
  keeper = await startKeeper(ns, ['--logs-dir', `s3://${bucket}/${prefix}`, '--s3-endpoint', endpoint, '--selector', `${selector},${MANAGED_LABEL}=true`])
  await createJob({ namespace: ns, name: 'app-migrate', behaviour: 'fail', runFor: '1s', labels: { ...managed, app: 'keeper-archived' } })
  const archivedJob = await eventually(
    'the migration archived and released',
    () => getJob(ns, 'app-migrate'),
    (j) => j?.metadata?.annotations?.[ARCHIVE_ANNOTATION.state] === 'complete' && !j.metadata?.finalizers?.includes(LOGS_FINALIZER)
  )
  expect(await keeper.stop()).toBe(0)
  // Out of the keeper's scope (no managed label), in the sweep's: never archived by the keeper.
  await createJob({ namespace: ns, name: 'app-seed', behaviour: 'fail', runFor: '1s', labels: { app: 'keeper-archived' } })
  await waitForJobCondition(ns, 'app-seed', 'Failed')
  const store = s3()
  try {
    const before = await keysUnder(store, bucket, `${prefix}/${ns}/app-migrate/`)
    const keeperFile = (await objectBytes(store, bucket, archived(archivedJob, 'job.json'))).toString()
    expect(JSON.parse(keeperFile)).toMatchObject({ savedBy: { phase: 'keeper' }, state: 'complete' })
    // Into the keeper's own bucket and prefix: every failed Job of the selector deleted, logs of all asked.
    const swept = run(process.execPath, [
      cli,
      'sweep',
      '--namespace',
      ns,
      '--selector',
      selector,
      '--failure-grace',
      '0s',
      '--harvest-logs',
      'all',
      '--logs-dir',
      `s3://${bucket}/${prefix}`,
      '--s3-endpoint',
      endpoint
    ])
    expect({ code: swept.code, stderr: swept.stderr }).toMatchObject({ code: 0 })
    expect(swept.stdout + swept.stderr).toContain(
      `its logs archived by the keeper at ${archivedJob?.metadata?.annotations?.[ARCHIVE_ANNOTATION.where]} (complete)`
    )
    for (const name of ['app-migrate', 'app-seed'])
      await eventually(
        `${name} deleted by the sweep`,
        () => getJob(ns, name),
        (j) => j === undefined
      )
    // The keeper's archive as it left it: no key added, job.json the same bytes.
    expect(await keysUnder(store, bucket, `${prefix}/${ns}/app-migrate/`)).toEqual(before)
    expect((await objectBytes(store, bucket, archived(archivedJob, 'job.json'))).toString()).toBe(keeperFile)
    // The positive control: the Job the keeper did not archive had its logs saved by the sweep.
    const seed = await inBucket(prefix, ns, 'app-seed')
    expect(seed.jobFile).toMatchObject({ savedBy: { phase: 'sweep' }, status: 'failed' })
    expect(seed.log).toContain('migrate: ERROR: relation "tuples" already exists')
  } finally {
    store.destroy()
  }
}, 120_000)

test('SIGTERM while an archive’s upload is slow (8 s): the keeper takes no new work, lets the archive finish past the launcher’s usual 6 s, releases its Lease and exits 0', async () => {
  const prefix = `keeper-sigterm-${ns}`
  const proxy = await startStoreProxy(endpoint)
  try {
    keeper = await startKeeper(ns, ['--logs-dir', `s3://${bucket}/${prefix}`, '--s3-endpoint', proxy.url, '--shutdown-grace', '20s'])
    const stopping = keeper
    let sigtermAt = 0
    proxy.onRequest = (seen) => {
      // The log's upload takes 8 s; SIGTERM comes as it starts (a rollout mid-archive).
      if (sigtermAt === 0 && /^PUT \S+\/main\.log/.test(seen[seen.length - 1])) {
        proxy.delayMs = 8_000
        sigtermAt = Date.now()
        stopping.child.kill('SIGTERM')
      }
    }
    await createJob({ namespace: ns, name: 'app-migrate', behaviour: 'fail', runFor: '2s', labels: managed })
    const code = await eventually(
      'the keeper to exit after SIGTERM',
      async () => stopping.child.exitCode,
      (c) => c !== null,
      90_000
    )
    const took = Date.now() - sigtermAt
    expect([code, stopping.output()]).toEqual([0, expect.stringContaining('keeper: stopping: 1 Job(s) being worked on, waiting up to --shutdown-grace 20s')])
    expect(stopping.output()).toContain(`archived ${ns}/app-migrate`)
    expect(stopping.output()).not.toContain('before the cancelled run had finished')
    expect(took).toBeGreaterThanOrEqual(7_500)
    expect((await getJob(ns, 'app-migrate'))?.metadata?.annotations?.[ARCHIVE_ANNOTATION.where]).toBeDefined()
    expect((await inBucket(prefix, ns, 'app-migrate')).keys.some((k) => k.endsWith('/main.log'))).toBe(true)
    // Its Lease released at the stop, not left to expire.
    const lease = await kubeConfig()
      .makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ namespace: otherNs, name: 'job-sweeper-keeper' })
      .then(
        () => 'there',
        (e: { code?: number }) => e.code
      )
    expect(lease).toBe(404)
  } finally {
    await proxy.close()
  }
}, 150_000)

test('/readyz says not ready, naming the store, while the store does not answer the probe write at start; /healthz answers', async () => {
  keeper = await startKeeper(ns, ['--logs-dir', 's3://nowhere/logs', '--s3-endpoint', `http://127.0.0.1:${await closedPort()}`])
  const ready = await eventually(
    '/readyz to say the store cannot be written',
    () => get(keeper as Keeper, '/readyz'),
    (r) => r.text.startsWith('logs-dir s3://nowhere/logs: cannot be written: '),
    60_000
  )
  expect(ready.status).toBe(503)
  expect((await get(keeper, '/healthz')).status).toBe(200)
  expect(keeper.output()).toContain('keeper: not ready: logs-dir s3://nowhere/logs cannot be written: ')
  expect(await keeper.stop()).toBe(0)
}, 90_000)

test('a retried Job (backoffLimit 2): each failed attempt is saved as it ends, so the attempts deleted by hand before the Job ends are in its archive: all three logs, complete', async () => {
  const prefix = `keeper-retried-${ns}`
  keeper = await startKeeper(ns, ['--logs-dir', `s3://${bucket}/${prefix}`, '--s3-endpoint', endpoint])
  const job = await createJob({ namespace: ns, name: 'app-migrate', behaviour: 'fail', runFor: '1s', labels: managed, spec: { backoffLimit: 2 } })
  const uid = job.metadata?.uid ?? ''
  const folder = `${prefix}/${ns}/app-migrate/${uid}/`
  const store = s3()
  try {
    const deleted: string[] = []
    for (const attempt of [1, 2]) {
      // The attempt's pod failed (the Job controller starts the next after its backoff): once its log is in the bucket, it is deleted by hand.
      const pod = await eventually(
        `attempt ${attempt}'s pod failed`,
        async () =>
          (await coreApi().listNamespacedPod({ namespace: ns, labelSelector: `batch.kubernetes.io/controller-uid=${uid}` })).items.find(
            (p) => p.status?.phase === 'Failed' && !deleted.includes(p.metadata?.name ?? '')
          )?.metadata?.name,
        (name) => name !== undefined,
        90_000
      )
      await eventually(
        `attempt ${attempt}'s log in the bucket before the Job ends`,
        () => keysUnder(store, bucket, folder),
        (keys) => keys.includes(`${folder}${pod}/main.log`),
        30_000
      )
      expect(jobCondition(await getJob(ns, 'app-migrate'))).toBeUndefined() // saved before the Job ended
      expect(kubectl('delete', 'pod', '-n', ns, pod ?? '').code).toBe(0)
      deleted.push(pod ?? '')
    }
    await waitForJobCondition(ns, 'app-migrate', 'Failed')
    const archivedJob = await eventually(
      'the Job archived',
      () => getJob(ns, 'app-migrate'),
      (j) => j?.metadata?.annotations?.[ARCHIVE_ANNOTATION.state] !== undefined,
      60_000
    )
    expect([archivedJob?.status?.failed, archivedJob?.metadata?.annotations?.[ARCHIVE_ANNOTATION.state]]).toEqual([3, 'complete'])
    const jobFile = JSON.parse((await objectBytes(store, bucket, `${folder}job.json`)).toString()) as { state: string; logs: { file: string }[] }
    expect(jobFile.state).toBe('complete')
    const files = jobFile.logs.map((l) => l.file)
    expect(files).toHaveLength(3)
    for (const pod of deleted) expect(files).toContain(`${pod}/main.log`)
    for (const file of files)
      expect((await objectBytes(store, bucket, `${folder}${file}`)).toString()).toContain('migrate: ERROR: relation "tuples" already exists') // kwok's pod.log
    expect(keeper.output()).toContain(`saved what ${ns}/app-migrate's pods wrote so far (1 of its pods ended before it: their logs now)`)
  } finally {
    store.destroy()
  }
}, 240_000)

onRealNode(
  'on the real node, a migration whose container restarts in place (restartPolicy OnFailure) twice before it succeeds (runs of 20 s): each run is saved as it ends (the kubelet keeps only the last two), so its archive holds all three runs, complete',
  async () => {
    const prefix = `keeper-restarts-${ns}`
    keeper = await startKeeper(ns, ['--logs-dir', `s3://${bucket}/${prefix}`, '--s3-endpoint', endpoint])
    // Each run counts itself in an emptyDir (kept across restarts in place), writes its number, runs 20 s, and fails until the third.
    // The kubelet restarts it the first time at once: each run is the previous one only while the next runs, 20 s, well past
    // the keeper's look and check (7 s) and the kubelet's status reaching the API server (docs/keeper.md: the limit).
    const script = 'n=$(( $(cat /work/n 2>/dev/null || echo 0) + 1 )); echo $n > /work/n; echo "migrate: run $n"; sleep 20; [ $n -ge 3 ]'
    const job = await batchApi().createNamespacedJob({
      namespace: ns,
      body: {
        metadata: { name: 'app-migrate', labels: managed },
        spec: {
          backoffLimit: 4,
          template: {
            spec: realNodePod({
              restartPolicy: 'OnFailure',
              volumes: [{ name: 'work', emptyDir: {} }],
              containers: [{ name: 'main', image: testImage, command: ['sh', '-c', script], volumeMounts: [{ name: 'work', mountPath: '/work' }] }]
            })
          }
        }
      }
    })
    const uid = job.metadata?.uid ?? ''
    await eventually(
      'the migration complete after its third run',
      () => getJob(ns, 'app-migrate'),
      (j) => jobCondition(j) !== undefined,
      180_000
    ).then((j) => expect(jobCondition(j)).toBe('Complete'))
    const archived = await eventually(
      'the Job archived',
      () => getJob(ns, 'app-migrate'),
      (j) => j?.metadata?.annotations?.[ARCHIVE_ANNOTATION.state] !== undefined,
      60_000
    )
    const state = archived?.metadata?.annotations?.[ARCHIVE_ANNOTATION.state]
    if (state !== 'complete') console.log(`restarts in place, not complete; the keeper said:\n${keeper.output()}`)
    expect(state).toBe('complete')
    const folder = `${prefix}/${ns}/app-migrate/${uid}/`
    const store = s3()
    try {
      const jobFile = JSON.parse((await objectBytes(store, bucket, `${folder}job.json`)).toString()) as { state: string; logs: { file: string }[] }
      expect(jobFile.state).toBe('complete')
      const texts = await Promise.all(jobFile.logs.map(async (l) => (await objectBytes(store, bucket, `${folder}${l.file}`)).toString()))
      // The three runs, each in one file: the first two in run files named by their container IDs, the last as the pod's log.
      expect(texts.map((t) => t.trim()).sort()).toEqual(['migrate: run 1', 'migrate: run 2', 'migrate: run 3'])
      expect(jobFile.logs.filter((l) => /\/main\.run-[0-9a-f]{12}\.log$/.test(l.file))).toHaveLength(2)
    } finally {
      store.destroy()
    }
    expect(keeper.output()).toMatch(
      new RegExp(`saved ${ns}/app-migrate's app-migrate-\\w+/main run [0-9a-f]{12} as it ended \\(its container restarts in place\\): [1-9]\\d* bytes`)
    )
  },
  300_000
)
