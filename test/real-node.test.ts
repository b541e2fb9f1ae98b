// job-sweeper against a real kubelet (the test cluster's real node: containerd, runc, a local
// registry; test/cluster/node.ts), where kwok can only imitate one: the logs a real container
// writes, read back through the API server as `kubectl logs` reads them, its real exit code and OOM
// kill, the kubelet's own 400 for a container that never ran, and pods that never start because an
// image is missing from the registry or a Secret is.
import { createHash, randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { V1Job, V1PodSpec } from '@kubernetes/client-node'
import { outputNames, runAction } from './action.ts'
import { createServer, request } from 'node:http'
import { nodeBinDir } from './cluster/cluster.ts'
import { imageWithNewLayer, pushImage, sha256 } from './cluster/images.ts'
import { realNodePod } from './cluster/node.ts'
import { spawnSync } from 'node:child_process'
import { batchApi, coreApi, eventually, getJob, helmAnnotations, kubectl, podsOfJob, testCluster, waitForJobCondition } from './cluster/testenv.ts'
import { expectNoStackTrace, expectPrunedOnce } from './faults/product.ts'
import { release, releaseAnnotations, useScenario } from './scenario.ts'
import { savedFolder } from './saved-folder.ts'

const realNode = process.env.JOB_SWEEPER_REAL_NODE ?? ''
const pullProxy = process.env.JOB_SWEEPER_PULL_PROXY ?? ''
const image = process.env.JOB_SWEEPER_TEST_IMAGE ?? ''
const registry = process.env.JOB_SWEEPER_REGISTRY ?? ''
// Skipped where the machine cannot run the real node (said at the start and the end of npm test). Under CI=true
// (.ci/run) on a host that can (root, cgroup v1) the cluster fails to start instead (test/cluster/prerequisites.ts).
const describeOnRealNode = realNode ? describe : describe.skip

/** A Job of the release whose one pod runs `spec` on the real node. */
function realJob(namespace: string, name: string, spec: Partial<V1PodSpec>, job: Partial<V1Job['spec']> = {}): V1Job {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace, annotations: releaseAnnotations(namespace) },
    spec: {
      backoffLimit: 0,
      template: { spec: realNodePod({ restartPolicy: 'Never', containers: [], ...spec }) },
      ...job
    }
  }
}

/** A container that fails its first run (exit 7) and, restarted in place (OnFailure), runs `then` after saying so. */
function restartingOnce(then: string): Partial<V1PodSpec> {
  return {
    restartPolicy: 'OnFailure',
    volumes: [{ name: 'state', emptyDir: {} }],
    containers: [
      {
        name: 'main',
        ...sh(`if [ -e /state/ran ]; then echo 'seed: second run'; ${then}; else touch /state/ran; echo 'seed: first run, dying'; exit 7; fi`),
        volumeMounts: [{ name: 'state', mountPath: '/state' }]
      }
    ],
    terminationGracePeriodSeconds: 1
  }
}

/** A migration's shell script whose log is over 20 MiB: 400,000 numbered lines of about 60 bytes, then an error. */
const OVER_20_MIB = `seq 1 400000 | sed 's/$/ migrate: row copied from the big table, still copying ......./'; echo 'migrate: out of disk'; exit 1`

const sh = (script: string): { image: string; command: string[] } => ({ image, command: ['sh', '-c', script] })

async function podOf(namespace: string, job: V1Job): Promise<string> {
  const [name] = await podsOfJob(namespace, job)
  if (!name) throw new Error(`no pod of ${job.metadata?.name}`)
  return name
}

/** What `kubectl logs` prints, as bytes. */
function kubectlLogs(namespace: string, pod: string, container: string, previous = false): Buffer {
  const r = kubectlLogsRun(namespace, pod, container, previous)
  if (r.status !== 0) throw new Error(`kubectl logs ${pod}/${container}: ${r.stderr.toString()}`)
  return r.stdout
}

/** What `kubectl logs` prints, or its error when it fails, as text. */
function kubectlRead(namespace: string, pod: string, container: string, previous = false): string {
  const r = kubectlLogsRun(namespace, pod, container, previous)
  return (r.status === 0 ? r.stdout : r.stderr).toString()
}

function kubectlLogsRun(namespace: string, pod: string, container: string, previous: boolean): { status: number | null; stdout: Buffer; stderr: Buffer } {
  const cluster = testCluster()
  return spawnSync('kubectl', ['logs', '-n', namespace, pod, '-c', container, ...(previous ? ['--previous'] : [])], {
    env: { ...process.env, KUBECONFIG: cluster.kubeconfig, PATH: `${cluster.binDir}:${process.env.PATH}` },
    maxBuffer: 64 * 1024 * 1024
  })
}

/**
 * A pass-through to the registry on the pull proxy's port (which the node reaches too) that, for one
 * blob, answers at once with its first KiB and holds the rest until release(): a pull in progress,
 * as slow as a test needs. (A registry that sends nothing at all is another case: containerd gives
 * up on it within about a minute, with DeadlineExceeded, and the pull fails.)
 */
async function slowRegistry(slowPath: string): Promise<{ started: () => number; release: () => void; close: () => Promise<void> }> {
  let started = 0
  let release = (): void => undefined
  const released = new Promise<void>((resolve) => (release = resolve))
  const server = createServer((req, res) => {
    const upstream = request(`http://${registry}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      if (req.method !== 'GET' || req.url !== slowPath) return void answer.pipe(res)
      started++
      const chunks: Buffer[] = []
      answer.on('data', (c: Buffer) => chunks.push(c))
      answer.on('end', () => {
        const body = Buffer.concat(chunks)
        res.write(body.subarray(0, 1024))
        void released.then(() => res.end(body.subarray(1024)))
      })
    })
    upstream.on('error', () => res.destroy())
    req.pipe(upstream)
  })
  const [host, port] = pullProxy.split(':')
  await new Promise<void>((resolve) => server.listen(Number(port), host, resolve))
  return {
    started: () => started,
    release,
    close: () => {
      release()
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

/**
 * A private registry on the pull proxy's port: the local registry behind Basic authentication, as
 * a registry that needs credentials answers (401 and a challenge without them). Counts the refusals.
 */
async function privateRegistry(user: string, password: string): Promise<{ refused: () => number; close: () => Promise<void> }> {
  let refused = 0
  const expected = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`
  const server = createServer((req, res) => {
    if (req.headers.authorization !== expected) {
      refused++
      res.writeHead(401, { 'www-authenticate': 'Basic realm="job-sweeper test registry"', 'content-type': 'application/json' })
      return void res.end('{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}')
    }
    const headers = { ...req.headers }
    delete headers.authorization
    const upstream = request(`http://${registry}${req.url}`, { method: req.method, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res)
    })
    upstream.on('error', () => res.destroy())
    req.pipe(upstream)
  })
  const [host, port] = pullProxy.split(':')
  await new Promise<void>((resolve) => server.listen(Number(port), host, resolve))
  return {
    refused: () => refused,
    close: () => {
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex')

interface ReportJob {
  name: string
  logsNeverRan?: string[]
}

describeOnRealNode('on a real node', () => {
  const scenario = useScenario('real-node')
  let ns: string
  beforeEach(async () => {
    ns = scenario.ns
    // A decoy on the real node too: another release's Job, running.
    const body = realJob(ns, 'other-release-worker', { containers: [{ name: 'main', ...sh('echo working; sleep 3600') }], terminationGracePeriodSeconds: 1 })
    body.metadata = { ...body.metadata, annotations: helmAnnotations('other-release', ns) }
    const decoy = await batchApi().createNamespacedJob({ namespace: ns, body })
    scenario.decoys.push({ namespace: ns, name: 'other-release-worker', uid: decoy.metadata?.uid ?? '', why: 'another release, running on the real node' })
  })

  test('a failed Job: its log saved byte for byte as kubectl logs prints it (no newline at its end, bytes that are not UTF-8) with the real exit code as the reason; a running Job restarted in place: its previous run saved beside its current one', async () => {
    const failed = await batchApi().createNamespacedJob({
      namespace: ns,
      body: realJob(ns, `${release}-migrate`, {
        containers: [
          { name: 'main', ...sh(`echo 'migrate: applying 0042'; printf 'caf\\351 \\377\\376 not UTF-8\\n'; printf 'migrate: failed, no newline'; exit 3`) }
        ]
      })
    })
    // Restarted in place once (OnFailure), then running: its first run's log is the kubelet's --previous.
    const restarted = await batchApi().createNamespacedJob({
      namespace: ns,
      body: realJob(ns, `${release}-seed`, restartingOnce('sleep 3600'), { backoffLimit: 3 })
    })
    await waitForJobCondition(ns, `${release}-migrate`, 'Failed')
    const [failedPod, restartedPod] = [await podOf(ns, failed), await podOf(ns, restarted)]
    await eventually(
      'the seed Job running its second run',
      () => coreApi().readNamespacedPod({ namespace: ns, name: restartedPod }),
      (p) => (p.status?.containerStatuses ?? []).some((c) => c.restartCount === 1 && c.state?.running !== undefined)
    )
    const expected = {
      failed: kubectlLogs(ns, failedPod, 'main'),
      current: kubectlLogs(ns, restartedPod, 'main'),
      previous: kubectlLogs(ns, restartedPod, 'main', true)
    }
    // Positive controls: the real container wrote what the script says, and ran twice.
    expect(expected.failed.subarray(-27).toString('latin1')).toBe('migrate: failed, no newline')
    expect(expected.failed.includes(Buffer.from([0xe9, 0x20, 0xff, 0xfe]))).toBe(true)
    expect(expected.previous.toString()).toBe('seed: first run, dying\n')
    expect(expected.current.toString()).toBe('seed: second run\n')

    const dir = mkdtempSync(join(tmpdir(), 'real-node-logs-'))
    const run = await runAction({ release, namespace: ns, 'logs-dir': dir, 'harvest-logs': 'all', 'on-running': 'delete' })
    expectNoStackTrace(run)
    expect(run.code).toBe(0)
    expect(sha(readFileSync(join(savedFolder(dir, ns, `${release}-migrate`), failedPod, 'main.log')))).toBe(sha(expected.failed))
    expect(readFileSync(join(savedFolder(dir, ns, `${release}-seed`), restartedPod, 'main.log'))).toEqual(expected.current)
    expect(readFileSync(join(savedFolder(dir, ns, `${release}-seed`), restartedPod, 'main.previous.log'))).toEqual(expected.previous)
    const jobFile = JSON.parse(readFileSync(join(savedFolder(dir, ns, `${release}-migrate`), 'job.json'), 'utf8')) as {
      failureReason?: string
      logs: { complete: boolean }[]
    }
    expect(jobFile.failureReason).toContain(`pod ${failedPod}: container main exit code 3`)
    expect(jobFile.logs).toEqual([expect.objectContaining({ complete: true })])
    expect(run.summary).toContain('migrate: failed, no newline')
    expect(outputNames(run, 'pruned').sort()).toEqual([`${release}-migrate`, `${release}-seed`])
    await expectPrunedOnce(ns, [`${release}-migrate`, `${release}-seed`])
  }, 120_000)

  test('a finished pod’s earlier run: the kubelet has removed it (1.37 answers 200 with its error as the body, 1.34 a 400); that is noted as gone, not saved as the log, and the Job is pruned', async () => {
    const name = `${release}-seed`
    const job = await batchApi().createNamespacedJob({ namespace: ns, body: realJob(ns, name, restartingOnce('true'), { backoffLimit: 3 }) })
    await waitForJobCondition(ns, name, 'Complete')
    const pod = await podOf(ns, job)
    const previousId = (await coreApi().readNamespacedPod({ namespace: ns, name: pod })).status?.containerStatuses?.[0]?.lastState?.terminated?.containerID
    // Positive control: what the kubelet answers now. Kubernetes 1.37's, 200 with its error as
    // the body; 1.34's, a 400 that says the previous run is not found.
    const gone = new RegExp(`^(unable to retrieve container logs for ${previousId}|.*previous terminated container "main" in pod "${pod}" not found\\n)$`)
    await eventually(
      'the kubelet to remove the earlier run',
      async () => kubectlRead(ns, pod, 'main', true),
      (answer) => gone.test(answer)
    )

    const dir = mkdtempSync(join(tmpdir(), 'real-node-logs-'))
    const run = await runAction({ release, namespace: ns, 'logs-dir': dir, 'harvest-logs': 'all' })
    expectNoStackTrace(run)
    expect(run.code).toBe(0)
    expect(readFileSync(join(savedFolder(dir, ns, name), pod, 'main.log'), 'utf8')).toBe('seed: second run\n')
    expect(existsSync(join(savedFolder(dir, ns, name), pod, 'main.previous.log'))).toBe(false)
    const note = readFileSync(join(savedFolder(dir, ns, name), pod, 'main.previous.gone.txt'), 'utf8')
    expect(note).toContain(`the node no longer has the log of the previous run of container main of pod ${pod}: the kubelet removed that container`)
    expect(note).toMatch(
      /The kubelet said: (unable to retrieve container logs for containerd:\/\/[0-9a-f]{64}|previous terminated container "main" in pod "\S+" not found)\n$/
    )
    const jobFile = JSON.parse(readFileSync(join(savedFolder(dir, ns, name), 'job.json'), 'utf8')) as { gone?: string[]; logs: { file: string }[] }
    expect(jobFile.gone).toEqual([`${pod}/main (previous run)`])
    expect(jobFile.logs.map((l) => l.file)).toEqual([`${pod}/main.log`])
    const report = JSON.parse(readFileSync(join(dir, 'job-sweeper-pre.json'), 'utf8')) as { jobs: (ReportJob & { logsGone?: string[] })[] }
    expect(report.jobs.find((j) => j.name === name)?.logsGone).toEqual([`${pod}/main (previous run)`])
    expect(outputNames(run, 'pruned')).toEqual([name])
    await expectPrunedOnce(ns, [name])
  }, 120_000)

  test('an init container that fails: its log is saved, and the main container, which never ran, is noted as such without asking the kubelet for a log it refuses (400)', async () => {
    const name = `${release}-migrate`
    const job = await batchApi().createNamespacedJob({
      namespace: ns,
      body: realJob(ns, name, {
        initContainers: [{ name: 'migrate-schema', ...sh(`echo 'migrate: applying 0042'; echo 'migrate: relation "users" already exists' >&2; exit 1`) }],
        containers: [{ name: 'main', ...sh('echo never') }]
      })
    })
    await waitForJobCondition(ns, name, 'Failed')
    const pod = await podOf(ns, job)
    // Positive control: the kubelet itself refuses the main container's log, relayed by the API server.
    const refused = kubectl('logs', '-n', ns, pod, '-c', 'main')
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain(`container "main" in pod "${pod}" is waiting to start: PodInitializing`)
    const initLog = kubectlLogs(ns, pod, 'migrate-schema')

    const dir = mkdtempSync(join(tmpdir(), 'real-node-logs-'))
    const run = await runAction({ release, namespace: ns, 'logs-dir': dir })
    expectNoStackTrace(run)
    expect(run.code).toBe(0)
    expect(readFileSync(join(savedFolder(dir, ns, name), pod, 'migrate-schema.log'))).toEqual(initLog)
    expect(readFileSync(join(savedFolder(dir, ns, name), pod, 'migrate-schema.log'), 'utf8')).toContain('relation "users" already exists')
    expect(existsSync(join(savedFolder(dir, ns, name), pod, 'main.log'))).toBe(false)
    expect(readFileSync(join(savedFolder(dir, ns, name), pod, 'main.never-ran.txt'), 'utf8')).toContain('never ran (waiting: PodInitializing)')
    const report = JSON.parse(readFileSync(join(dir, 'job-sweeper-pre.json'), 'utf8')) as { jobs: ReportJob[] }
    const reported = report.jobs.find((j) => j.name === name)
    expect(reported?.logsNeverRan).toEqual([`${pod}/main (waiting: PodInitializing)`])
    const jobFile = JSON.parse(readFileSync(join(savedFolder(dir, ns, name), 'job.json'), 'utf8')) as { failureReason?: string }
    expect(jobFile.failureReason).toContain(`pod ${pod}: container migrate-schema exit code 1`)
    expect(outputNames(run, 'pruned')).toEqual([name])
    await expectPrunedOnce(ns, [name])
  }, 120_000)

  test('a container the kernel kills for memory: the reason is OOMKilled (exit code 137), and what it wrote first is saved', async () => {
    const name = `${release}-migrate`
    const job = await batchApi().createNamespacedJob({
      namespace: ns,
      // exec: on cgroup v1 a child of the shell would be the one killed, and the container end 0.
      body: realJob(ns, name, {
        containers: [
          {
            name: 'main',
            ...sh(`echo 'migrate: loading the whole table'; exec dd if=/dev/zero of=/dev/null bs=256M`),
            resources: { limits: { memory: '32Mi' } }
          }
        ]
      })
    })
    await waitForJobCondition(ns, name, 'Failed')
    const pod = await podOf(ns, job)
    // post with a wait says why in the error line and in the row, not only in job.json (#35 item 11).
    const post = await runAction({ phase: 'post', release, namespace: ns, 'wait-for-jobs': '1m', 'harvest-logs': 'none' })
    const oom = `pod ${pod}: container main OOMKilled (exit code 137)`
    expect(post.code).toBe(1)
    expect(post.stdout).toMatch(new RegExp(`::error::Job ${ns}/${name} failed: .*${oom.replace(/[()]/g, '\\$&')}.*; kept for failure-grace`))
    expect(post.summary).toMatch(new RegExp(`^\\| ${name} \\| failed \\| TTL set \\| .*failed [^|]*${oom.replace(/[()]/g, '\\$&')}`, 'm'))
    const dir = mkdtempSync(join(tmpdir(), 'real-node-logs-'))
    const run = await runAction({ release, namespace: ns, 'logs-dir': dir })
    expectNoStackTrace(run)
    expect(run.code).toBe(0)
    const jobFile = JSON.parse(readFileSync(join(savedFolder(dir, ns, name), 'job.json'), 'utf8')) as { failureReason?: string }
    expect(jobFile.failureReason).toContain(`pod ${pod}: container main OOMKilled (exit code 137)`)
    expect(readFileSync(join(savedFolder(dir, ns, name), pod, 'main.log'), 'utf8')).toBe('migrate: loading the whole table\n')
    await expectPrunedOnce(ns, [name])
  }, 120_000)

  test('Jobs that never start — a tag the registry does not have (ErrImagePull, then ImagePullBackOff), a Secret that does not exist (CreateContainerConfigError) — are stuck after stuck-after: pre deletes them without waiting, saying why', async () => {
    const missingTag = `${registry}/busybox:no-such-tag`
    const pull = await batchApi().createNamespacedJob({
      namespace: ns,
      body: realJob(ns, `${release}-migrate`, { containers: [{ name: 'main', image: missingTag, command: ['true'] }] })
    })
    const secret = await batchApi().createNamespacedJob({
      namespace: ns,
      body: realJob(ns, `${release}-seed`, { containers: [{ name: 'main', ...sh('true'), envFrom: [{ secretRef: { name: 'db-credentials' } }] }] })
    })
    const waiting = async (job: V1Job): Promise<string | undefined> => {
      const pods = await coreApi().listNamespacedPod({ namespace: ns, labelSelector: `batch.kubernetes.io/controller-uid=${job.metadata?.uid}` })
      return pods.items[0]?.status?.containerStatuses?.[0]?.state?.waiting?.reason
    }
    // Positive control: the kubelet's real reasons (the pull one goes ErrImagePull → ImagePullBackOff).
    await eventually(
      'the pull to fail',
      () => waiting(pull),
      (r) => r === 'ImagePullBackOff' || r === 'ErrImagePull'
    )
    await eventually(
      'the Secret to be missed',
      () => waiting(secret),
      (r) => r === 'CreateContainerConfigError'
    )
    const pullPod = await podOf(ns, pull)
    const refused = kubectl('logs', '-n', ns, pullPod)
    expect(refused.stderr).toMatch(
      new RegExp(`container "main" in pod "${pullPod}" is waiting to start: (trying and failing to pull image|image can't be pulled)`)
    )

    const dir = mkdtempSync(join(tmpdir(), 'real-node-logs-'))
    const run = await runAction({ release, namespace: ns, 'logs-dir': dir, 'stuck-after': '5s', 'wait-timeout': '60s' })
    expectNoStackTrace(run)
    expect(run.code).toBe(0)
    expect(outputNames(run, 'pruned').sort()).toEqual([`${release}-migrate`, `${release}-seed`])
    const report = JSON.parse(readFileSync(join(dir, 'job-sweeper-pre.json'), 'utf8')) as { jobs: ReportJob[] }
    const why = (name: string): string => JSON.stringify(report.jobs.find((j) => j.name === name))
    expect(why(`${release}-migrate`)).toMatch(/ErrImagePull|ImagePullBackOff/)
    expect(why(`${release}-migrate`)).toContain('no-such-tag')
    expect(why(`${release}-seed`)).toContain('CreateContainerConfigError')
    expect(why(`${release}-seed`)).toContain('secret \\"db-credentials\\" not found')
    await expectPrunedOnce(ns, [`${release}-migrate`, `${release}-seed`])
  }, 120_000)

  test('a 20 MiB log is saved whole, byte for byte as kubectl logs prints it', async () => {
    const name = `${release}-migrate`
    const mib = 20
    const job = await batchApi().createNamespacedJob({
      namespace: ns,
      body: realJob(ns, name, {
        containers: [
          {
            name: 'main',
            ...sh(OVER_20_MIB)
          }
        ]
      })
    })
    await waitForJobCondition(ns, name, 'Failed')
    const pod = await podOf(ns, job)
    const expected = kubectlLogs(ns, pod, 'main')
    expect(expected.length).toBeGreaterThan(mib * 1024 * 1024) // positive control: the whole log is there to read
    const dir = mkdtempSync(join(tmpdir(), 'real-node-logs-'))
    const run = await runAction({ release, namespace: ns, 'logs-dir': dir, 'max-log-bytes': '32Mi' })
    expectNoStackTrace(run)
    expect(run.code).toBe(0)
    const saved = readFileSync(join(savedFolder(dir, ns, name), pod, 'main.log'))
    expect(saved.length).toBe(expected.length)
    expect(sha(saved)).toBe(sha(expected))
    expect(run.summary).toContain('migrate: out of disk')
    await expectPrunedOnce(ns, [name])
    expect(await getJob(ns, name)).toBeUndefined()
  }, 180_000)

  test('a pull in progress (the registry holds the image’s new layer) is not stuck: pre waits on it past stuck-after and prunes it once it ran; a tag the registry lacks (positive control) is stuck, not waited on', async () => {
    const repository = `slow-${randomBytes(3).toString('hex')}`
    const slow = imageWithNewLayer(mkdtempSync(join(tmpdir(), 'slow-image-')), nodeBinDir(), repository, '1', 256 * 1024)
    await pushImage(registry, slow)
    const proxy = await slowRegistry(`/v2/${repository}/blobs/${sha256(slow.layers[slow.layers.length - 1])}`)
    let pending: ReturnType<typeof runAction> | undefined
    try {
      const migrate = `${release}-migrate`
      const seed = `${release}-seed`
      await batchApi().createNamespacedJob({
        namespace: ns,
        body: realJob(ns, migrate, {
          containers: [{ name: 'main', image: `${pullProxy}/${repository}:1`, command: ['sh', '-c', 'echo migrate: pulled, applying 0042'] }]
        })
      })
      await batchApi().createNamespacedJob({
        namespace: ns,
        body: realJob(ns, seed, { containers: [{ name: 'main', image: `${registry}/busybox:no-such-tag`, command: ['true'] }] })
      })
      const waitingReason = async (name: string): Promise<string | undefined> =>
        (await coreApi().listNamespacedPod({ namespace: ns, labelSelector: `job-name=${name}` })).items[0]?.status?.containerStatuses?.[0]?.state?.waiting
          ?.reason
      // Positive controls: the node is pulling through the proxy, which holds the layer; the other pull failed.
      await eventually(
        'the new layer’s download started, and held',
        async () => proxy.started(),
        (n) => n >= 1
      )
      expect(await waitingReason(migrate)).toBe('ContainerCreating')
      await eventually(
        'the missing tag’s pull failed',
        () => waitingReason(seed),
        (r) => r === 'ErrImagePull' || r === 'ImagePullBackOff'
      )
      await new Promise((r) => setTimeout(r, 6000)) // both pods are older than stuck-after

      pending = runAction({ release, namespace: ns, 'stuck-after': '5s', 'wait-timeout': '3m', 'harvest-logs': 'none' })
      // pre waits on the pull past stuck-after: its pod still has not started, and pre has not ended.
      let ended = false
      void pending.then(() => (ended = true))
      await new Promise((r) => setTimeout(r, 12_000))
      expect(ended).toBe(false)
      expect(await waitingReason(migrate)).toBe('ContainerCreating')
      expect(await getJob(ns, migrate)).toBeDefined()
      proxy.release()
      const run = await pending
      expectNoStackTrace(run)
      expect(run.code).toBe(0)
      expect(outputNames(run, 'waited')).toEqual([migrate])
      expect(outputNames(run, 'pruned').sort()).toEqual([migrate, seed])
      const statuses = (JSON.parse(run.outputs.pruned) as { name: string; status: string }[]).map((j) => [j.name, j.status]).sort()
      expect(statuses).toEqual([
        [migrate, 'succeeded'],
        [seed, 'stuck']
      ])
      await expectPrunedOnce(ns, [migrate, seed])
    } finally {
      proxy.release()
      await pending
      await proxy.close()
    }
  }, 180_000)

  test('a Secret volume that does not exist: the pod stays ContainerCreating (no error in its status), and the kubelet’s FailedMount makes it stuck: pre deletes it after stuck-after, naming the volume, instead of waiting out wait-timeout', async () => {
    const name = `${release}-migrate`
    await batchApi().createNamespacedJob({
      namespace: ns,
      body: realJob(ns, name, {
        volumes: [{ name: 'db-ca', secret: { secretName: 'db-ca' } }],
        containers: [{ name: 'main', ...sh('echo never'), volumeMounts: [{ name: 'db-ca', mountPath: '/ca' }] }]
      })
    })
    // Positive control: the state is the kubelet's own, and the status shows no error.
    await eventually(
      'the kubelet’s FailedMount',
      async () => (await coreApi().listNamespacedEvent({ namespace: ns, fieldSelector: 'reason=FailedMount' })).items,
      (events) => events.some((e) => e.message === 'MountVolume.SetUp failed for volume "db-ca" : secret "db-ca" not found')
    )
    const [pod] = (await coreApi().listNamespacedPod({ namespace: ns, labelSelector: `job-name=${name}` })).items
    expect(pod.status?.containerStatuses?.[0]?.state?.waiting?.reason).toBe('ContainerCreating')
    await new Promise((r) => setTimeout(r, 6000)) // older than stuck-after

    const started = Date.now()
    const run = await runAction({ release, namespace: ns, 'stuck-after': '5s', 'wait-timeout': '3m', 'harvest-logs': 'none' })
    expectNoStackTrace(run)
    expect(run.code).toBe(0)
    expect(Date.now() - started).toBeLessThan(60_000) // not wait-timeout's 3m
    const pruned = JSON.parse(run.outputs.pruned) as { name: string; status: string; reason: string }[]
    expect(pruned.map((j) => [j.name, j.status])).toEqual([[name, 'stuck']])
    expect(pruned[0].reason).toContain('never started: volume db-ca: secret "db-ca" not found (FailedMount)')
    await expectPrunedOnce(ns, [name])
  }, 120_000)
  test('a private registry: a Job without its pull Secret never starts (the registry’s refusal in the reason) and pre deletes it after stuck-after, never showing the credentials; the same registry with the Secret (positive control) runs the Job', async () => {
    const user = 'puller'
    const password = randomBytes(12).toString('hex')
    const proxy = await privateRegistry(user, password)
    try {
      // An image of its own for each Job: one pulled with the Secret is then on the node, and
      // would start without one (imagePullPolicy IfNotPresent).
      const tag = randomBytes(3).toString('hex')
      for (const repository of [`private-a-${tag}`, `private-b-${tag}`])
        await pushImage(registry, imageWithNewLayer(mkdtempSync(join(tmpdir(), 'private-image-')), nodeBinDir(), repository, '1', 1024))
      await coreApi().createNamespacedSecret({
        namespace: ns,
        body: {
          metadata: { name: 'registry-credentials' },
          type: 'kubernetes.io/dockerconfigjson',
          stringData: { '.dockerconfigjson': JSON.stringify({ auths: { [pullProxy]: { auth: Buffer.from(`${user}:${password}`).toString('base64') } } }) }
        }
      })
      const migrate = `${release}-migrate`
      await batchApi().createNamespacedJob({
        namespace: ns,
        body: realJob(ns, migrate, { containers: [{ name: 'main', image: `${pullProxy}/private-a-${tag}:1`, command: ['sh', '-c', 'echo never'] }] })
      })
      // Not the release's: pre leaves it.
      const worker = realJob(ns, 'private-worker', {
        imagePullSecrets: [{ name: 'registry-credentials' }],
        containers: [{ name: 'main', image: `${pullProxy}/private-b-${tag}:1`, command: ['sh', '-c', 'echo pulled with credentials'] }]
      })
      worker.metadata = { name: 'private-worker', namespace: ns }
      const workerJob = await batchApi().createNamespacedJob({ namespace: ns, body: worker })
      await waitForJobCondition(ns, 'private-worker', 'Complete')
      expect(kubectlLogs(ns, await podOf(ns, workerJob), 'main').toString()).toBe('pulled with credentials\n')
      await eventually(
        'the pull without credentials to fail',
        async () =>
          (await coreApi().listNamespacedPod({ namespace: ns, labelSelector: `job-name=${migrate}` })).items[0]?.status?.containerStatuses?.[0]?.state?.waiting
            ?.reason,
        (r) => r === 'ErrImagePull' || r === 'ImagePullBackOff'
      )
      expect(proxy.refused()).toBeGreaterThan(0)
      await new Promise((r) => setTimeout(r, 6000)) // older than stuck-after

      const run = await runAction({ release, namespace: ns, 'stuck-after': '5s', 'wait-timeout': '60s', 'harvest-logs': 'none' })
      expectNoStackTrace(run)
      expect(run.code).toBe(0)
      const pruned = JSON.parse(run.outputs.pruned) as { name: string; status: string; reason: string }[]
      expect(pruned.map((j) => [j.name, j.status])).toEqual([[migrate, 'stuck']])
      expect(pruned[0].reason).toMatch(/^never started: (ErrImagePull|ImagePullBackOff)/)
      // containerd's words for the registry's 401 (the kubelet passed it no credentials).
      expect(pruned[0].reason).toContain(`(${pullProxy}/private-a-${tag}:1: no basic auth credentials)`)
      for (const text of [run.stdout, run.stderr, run.summary, run.outputs.pruned]) expect(text).not.toContain(password)
      await expectPrunedOnce(ns, [migrate])
      expect((await getJob(ns, 'private-worker'))?.metadata?.uid).toBe(workerJob.metadata?.uid)
    } finally {
      await proxy.close()
    }
  }, 120_000)

  test('a Job deleted while its harvest streams (someone else deletes it and its pod mid-read): the kubelet’s read goes on to the end of the log it opened, so the log is saved whole, byte for byte; the Job is reported already gone, not a failure', async () => {
    const name = `${release}-migrate`
    const job = await batchApi().createNamespacedJob({
      namespace: ns,
      body: realJob(ns, name, {
        containers: [
          {
            name: 'main',
            ...sh(OVER_20_MIB)
          }
        ],
        terminationGracePeriodSeconds: 1
      })
    })
    await waitForJobCondition(ns, name, 'Failed')
    const pod = await podOf(ns, job)
    const expected = kubectlLogs(ns, pod, 'main')
    expect(expected.length).toBeGreaterThan(20 * 1024 * 1024)
    const dir = mkdtempSync(join(tmpdir(), 'real-node-logs-'))
    const partial = join(savedFolder(dir, ns, name, job.metadata?.uid), pod, 'main.log.partial')
    const pending = runAction({ release, namespace: ns, 'logs-dir': dir, 'max-log-bytes': '32Mi' })
    // Positive control: the harvest is reading it.
    await eventually(
      'the harvest to stream the log',
      async () => (existsSync(partial) ? statSync(partial).size : 0),
      (size) => size > 0,
      30_000
    )
    // The pod first (at once), then the Job: with the Job deleted first, the garbage collector may
    // delete the pod before this test does. The Job had failed: no new pod replaces it.
    await coreApi().deleteNamespacedPod({ namespace: ns, name: pod, gracePeriodSeconds: 0 })
    await batchApi().deleteNamespacedJob({ namespace: ns, name, propagationPolicy: 'Background' })
    expect(existsSync(partial)).toBe(true) // deleted mid-read: the read was still under way
    // The pod is gone from the API and its container from the node while the read goes on.
    await eventually(
      'the pod to be gone',
      async () => (await coreApi().listNamespacedPod({ namespace: ns, labelSelector: `job-name=${name}` })).items.length,
      (n) => n === 0
    )
    const run = await pending
    expectNoStackTrace(run)
    expect(run.code).toBe(0)
    expect(run.stdout).not.toContain('::warning::')
    const saved = readFileSync(join(savedFolder(dir, ns, name), pod, 'main.log'))
    expect(saved.length).toBe(expected.length)
    expect(sha(saved)).toBe(sha(expected))
    expect(existsSync(partial)).toBe(false)
    expect(outputNames(run, 'gone')).toEqual([name])
    expect(outputNames(run, 'pruned')).toEqual([])
    expect(run.summary).toContain('migrate: out of disk')
    const record = JSON.parse(readFileSync(join(savedFolder(dir, ns, name), 'job.json'), 'utf8')) as {
      logs: { file: string; bytes: number; complete: boolean }[]
    }
    expect(record.logs).toEqual([expect.objectContaining({ file: `${pod}/main.log`, bytes: expected.length, complete: true })])
  }, 180_000)
})
