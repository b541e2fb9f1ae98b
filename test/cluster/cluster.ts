// A real local Kubernetes control plane for tests and the demo: etcd, kube-apiserver,
// kube-controller-manager (job, TTL-after-finished, garbage-collector and namespace controllers),
// kube-scheduler and kwok (a fake node that runs Job pods to completion), all on 127.0.0.1, an S3
// server (versitygw, s3.ts) for the logs job-sweeper saves, and, where the machine can run one, a
// real node (kubelet, containerd, runc and a local registry: node.ts) for the pods a test sends there.
//
// The model is controller-runtime's envtest: free ports, a temp dir, readiness checks. Unlike
// envtest it also runs the controllers and a node, because job-sweeper's behaviour depends on
// the real Job, TTL and garbage-collector controllers.
import { execFileSync } from 'node:child_process'
import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { BatchV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node'
import { freePort, isAlive, logTail, recordedPid, startProcess, stopProcesses, waitFor } from './processes.ts'
import { S3_SERVER, s3Env, startS3Server, type S3Server } from './s3.ts'
import { FAKE_NODE_NAME, fakeNode, kwokConfig } from './kwok.ts'
import { apiServerCertFile, apiServerPid, apiServerCommand, httpsOk, startApiServer, waitForApiServer } from './apiserver.ts'
import { newKubeletToken, NODE_PROCESSES, realNodeHost, realNodePod, realNodeUnsupported, startRealNode, stopRealNode, type RealNode } from './node.ts'
import { decide, thisHost } from './prerequisites.ts'

const here = dirname(fileURLToPath(import.meta.url))

/** A running (or reusable) local cluster, as recorded in `<dir>/cluster.json`. */
export interface Cluster {
  /** Directory holding the kubeconfig, certificates, data, logs and pids. */
  dir: string
  /** Absolute path of the admin kubeconfig. */
  kubeconfig: string
  /** Directory of the built binaries (helm and kubectl included). */
  binDir: string
  /** https://127.0.0.1:<port> of kube-apiserver. */
  server: string
  /** Kubernetes version the binaries were built at. */
  version: string
  /** Helm version of `binDir`'s helm (v3.x or v4.x). */
  helmVersion: string
  /** The S3 server (versitygw): endpoint, bucket, and the files holding its credentials. */
  s3: S3Server
  /** The real node, when this machine can run one. */
  realNode?: RealNode
  /** Why there is no real node (when there is none). */
  realNodeSkipped?: string
}

/** The binary cache of the selected set of versions (versions.sh, JOB_SWEEPER_VERSIONS). */
export function binDir(): string {
  return execFileSync(join(here, 'build.sh'), ['--print'], { encoding: 'utf8' }).trim()
}

/** The directory of versitygw's binary, shared by both sets (keyed by its own version). */
export function s3BinDir(): string {
  return execFileSync(join(here, 'build.sh'), ['--print-s3'], { encoding: 'utf8' }).trim()
}

/** The directory of the real node's runtime (containerd, runc, the registry), shared by both sets. */
export function nodeBinDir(): string {
  return execFileSync(join(here, 'build.sh'), ['--print-node'], { encoding: 'utf8' }).trim()
}

/** The selected set of pinned versions, as versions.sh resolves it for JOB_SWEEPER_VERSIONS. */
export interface PinnedVersions {
  /** The set's name: newest (the default) or oldest. */
  set: string
  kubernetes: string
  etcd: string
  kwok: string
  helm: string
}

let pinned: PinnedVersions | undefined

export function pinnedVersions(): PinnedVersions {
  if (pinned) return pinned
  // build.sh sources versions.sh, so the set is resolved in exactly one place.
  const out = execFileSync(join(here, 'build.sh'), ['--versions'], { encoding: 'utf8' })
  const value = (name: string): string => {
    const m = new RegExp(`^${name}=(\\S+)$`, 'm').exec(out)
    if (!m) throw new Error(`test/cluster/build.sh --versions printed no ${name}`)
    return m[1]
  }
  pinned = {
    set: value('JOB_SWEEPER_VERSIONS'),
    kubernetes: value('K8S_VERSION'),
    etcd: value('ETCD_VERSION'),
    kwok: value('KWOK_VERSION'),
    helm: value('HELM_VERSION')
  }
  return pinned
}

export function pinnedKubernetesVersion(): string {
  return pinnedVersions().kubernetes
}

/** Builds the binaries if any is missing (slow the first time on a machine; prints progress). */
export function ensureBinaries(): string {
  execFileSync(join(here, 'build.sh'), [], { stdio: ['ignore', 'ignore', 'inherit'] })
  return binDir()
}

function writeKubeconfig(path: string, server: string, caFile: string, token: string): void {
  const ca = readFileSync(caFile).toString('base64')
  // JSON is valid YAML; written by hand so the file needs no YAML library and no secret is logged.
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'job-sweeper-local', cluster: { server, 'certificate-authority-data': ca } }],
    users: [{ name: 'admin', user: { token } }],
    contexts: [{ name: 'job-sweeper-local', context: { cluster: 'job-sweeper-local', user: 'admin', namespace: 'default' } }],
    'current-context': 'job-sweeper-local'
  }
  writeFileSync(path, JSON.stringify(config, null, 2), { mode: 0o600 })
}

async function httpOk(url: string): Promise<boolean> {
  const res = await fetch(url, { signal: AbortSignal.timeout(2000) })
  return res.ok
}

/** Client limits of the controllers and the scheduler: high enough never to be the bottleneck. */
const CLIENT_QPS = 5000
const CLIENT_BURST = 10000

/** kube-scheduler's configuration (JSON is YAML): its client limits, no leader election. */
function schedulerConfig(kubeconfig: string): string {
  return JSON.stringify({
    apiVersion: 'kubescheduler.config.k8s.io/v1',
    kind: 'KubeSchedulerConfiguration',
    clientConnection: { kubeconfig, qps: CLIENT_QPS, burst: CLIENT_BURST },
    leaderElection: { leaderElect: false }
  })
}

export interface ClusterOptions {
  /**
   * Service accounts as a real cluster has them: the ServiceAccount admission plugin gives each pod
   * its ServiceAccount's token (kube-api-access-…), the controllers make each namespace's `default`
   * ServiceAccount and kube-root-ca.crt. Off in the suites' cluster: there a pod needs no token,
   * and a namespace's first pods would wait for its `default` ServiceAccount.
   */
  serviceAccounts?: boolean
  /** Controllers of kube-controller-manager beside the suites' own (deployment-controller…), by their names there. */
  controllers?: string[]
}

/**
 * Starts a cluster in `dir` (created if needed; must not hold a running cluster). Resolves once
 * a probe Job has run to completion on the fake node, i.e. once every component really works.
 */
export async function startCluster(dir: string, log: (line: string) => void = () => {}, options: ClusterOptions = {}): Promise<Cluster> {
  const { serviceAccounts = false, controllers = [] } = options
  const bin = ensureBinaries()
  for (const sub of ['logs', 'pids', 'pki', 'etcd', 'kwok']) mkdirSync(join(dir, sub), { recursive: true })
  await stopRealNode(dir)
  await stopProcesses(dir)
  const started = Date.now()
  const step = (what: string): void => log(`[cluster +${((Date.now() - started) / 1000).toFixed(1)}s] ${what}`)
  const fail = async (e: unknown): Promise<never> => {
    await stopProcesses(dir)
    throw e
  }

  try {
    const [etcdPort, etcdPeerPort, apiPort, kwokPort] = await Promise.all([freePort(), freePort(), freePort(), freePort()])
    const etcdUrl = `http://127.0.0.1:${etcdPort}`
    startProcess(dir, '1-etcd', join(bin, 'etcd'), [
      '--name=job-sweeper',
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
      `--initial-cluster=job-sweeper=http://127.0.0.1:${etcdPeerPort}`,
      '--unsafe-no-fsync',
      '--log-level=warn'
    ])
    step('etcd started')
    await waitFor(
      'etcd /health',
      () => httpOk(`${etcdUrl}/health`),
      30_000,
      () => logTail(dir, '1-etcd')
    )

    const pki = join(dir, 'pki')
    const token = randomBytes(24).toString('hex')
    // The real node's kubelet is in system:masters too: no Node authorizer runs here.
    const kubeletToken = newKubeletToken()
    writeFileSync(join(pki, 'tokens.csv'), `${token},admin,admin-uid,system:masters\n${kubeletToken},job-sweeper-kubelet,kubelet-uid,system:masters\n`, {
      mode: 0o600
    })
    const sa = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
    writeFileSync(join(pki, 'sa.key'), sa.privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 })
    writeFileSync(join(pki, 'sa.pub'), sa.publicKey.export({ type: 'spki', format: 'pem' }))
    const server = `https://127.0.0.1:${apiPort}`
    startApiServer(dir, apiServerCommand({ bin, pki, etcdUrl, port: apiPort, serviceAccounts }))
    step('kube-apiserver started')
    await waitForApiServer(dir, server)
    step('kube-apiserver ready')

    const kubeconfig = join(dir, 'kubeconfig')
    writeKubeconfig(kubeconfig, server, apiServerCertFile(dir), token)
    const serving = ['--bind-address=127.0.0.1', '--secure-port=0']
    startProcess(dir, '3-kube-controller-manager', join(bin, 'kube-controller-manager'), [
      `--kubeconfig=${kubeconfig}`,
      '--leader-elect=false',
      ...serving,
      `--controllers=${[
        'job-controller',
        'ttl-after-finished-controller',
        'garbage-collector-controller',
        'namespace-controller',
        ...(serviceAccounts ? ['serviceaccount-controller', 'root-ca-certificate-publisher-controller'] : []),
        ...controllers
      ].join(',')}`,
      ...(serviceAccounts ? [`--root-ca-file=${apiServerCertFile(dir)}`] : []),
      '--use-service-account-credentials=false',
      // At the default client limits (20 QPS, burst 30) the job controller needs ~16 minutes to
      // create and finish 3,000 Jobs' pods; this API server serves one test run, not a fleet.
      `--kube-api-qps=${CLIENT_QPS}`,
      `--kube-api-burst=${CLIENT_BURST}`,
      '--concurrent-job-syncs=50',
      '--concurrent-ttl-after-finished-syncs=20',
      '--concurrent-gc-syncs=50'
    ])
    // The scheduler's client limits (default 50 QPS) go in its configuration file: its
    // --kube-api-qps flags are deprecated, and a file keeps working across minors.
    writeFileSync(join(dir, 'kube-scheduler.yaml'), schedulerConfig(kubeconfig))
    startProcess(dir, '4-kube-scheduler', join(bin, 'kube-scheduler'), [`--config=${join(dir, 'kube-scheduler.yaml')}`, ...serving])
    writeFileSync(join(dir, 'kwok.yaml'), kwokConfig(dir))
    // KWOK_WORKDIR: kwok would otherwise also load ~/.kwok/kwok.yaml if a user has one.
    startProcess(
      dir,
      '5-kwok',
      join(bin, 'kwok'),
      [
        `--kubeconfig=${kubeconfig}`,
        `--config=${join(dir, 'kwok.yaml')}`,
        '--manage-all-nodes=false',
        '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake',
        `--server-address=127.0.0.1:${kwokPort}`,
        '--node-ip=127.0.0.1',
        `--node-port=${kwokPort}`
      ],
      { KWOK_WORKDIR: join(dir, 'kwok') }
    )
    step('controllers, scheduler and kwok started')
    // Meanwhile (the controllers start in the background), the S3 server.
    const s3 = await startS3Server(dir, s3BinDir())
    step(`versitygw ready at ${s3.endpoint}, bucket ${s3.bucket} created`)

    const kc = new KubeConfig()
    kc.loadFromFile(kubeconfig)
    const core = kc.makeApiClient(CoreV1Api)
    await core.createNode({ body: fakeNode() })
    await waitFor(
      `node ${FAKE_NODE_NAME} Ready`,
      async () => {
        const node = await core.readNode({ name: FAKE_NODE_NAME })
        return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false
      },
      60_000,
      () => logTail(dir, '5-kwok')
    )
    step('fake node ready')
    await probeJob(kc, dir)
    step('a probe Job ran to completion on the fake node')

    let realNode: RealNode | undefined
    const nodeBin = nodeBinDir()
    const realNodeSkipped = realNodeUnsupported(nodeBin)
    if (realNodeSkipped) {
      // Required under CI=true where the host can run one (root, cgroup v1), or with JOB_SWEEPER_REQUIRE_REAL_NODE=1.
      const decision = decide('real node', `no real node: ${realNodeSkipped}`, thisHost(realNodeHost()))
      if ('fail' in decision) throw new Error(decision.fail)
      log(`no real node: ${realNodeSkipped}; the tests that need one are skipped`)
    } else {
      realNode = await startRealNode(core, {
        dir,
        bin,
        nodeBin,
        apiPort,
        caFile: apiServerCertFile(dir),
        kubeletToken,
        step,
        s3Port: Number(new URL(s3.endpoint).port)
      })
      await probeJob(kc, dir, realNode)
      step('a probe Job ran to completion on the real node: cluster ready')
    }

    const cluster: Cluster = {
      dir,
      kubeconfig,
      binDir: bin,
      server,
      version: pinnedKubernetesVersion(),
      helmVersion: pinnedVersions().helm,
      s3,
      realNode,
      realNodeSkipped
    }
    writeFileSync(join(dir, 'cluster.json'), JSON.stringify(cluster, null, 2))
    return cluster
  } catch (e) {
    return fail(e)
  }
}

/** Runs one Job through scheduler, kwok (or the real node) and job controller; proves the whole loop works. */
export async function probeJob(kc: KubeConfig, dir: string, realNode?: RealNode): Promise<void> {
  const batch = kc.makeApiClient(BatchV1Api)
  const name = `probe-${Date.now()}`
  await batch.createNamespacedJob({
    namespace: 'default',
    body: {
      metadata: { name },
      spec: {
        backoffLimit: 0,
        template: {
          spec: realNode
            ? realNodePod({ restartPolicy: 'Never', containers: [{ name: 'probe', image: realNode.testImage, command: ['true'] }] })
            : { restartPolicy: 'Never', containers: [{ name: 'probe', image: 'busybox' }] }
        }
      }
    }
  })
  const describe = (): string =>
    ['3-kube-controller-manager', '4-kube-scheduler', realNode ? '8d-kubelet' : '5-kwok'].map((n) => `${n}:\n${logTail(dir, n, 8)}`).join('\n')
  await waitFor(
    'a probe Job to complete',
    async () => {
      const job = await batch.readNamespacedJob({ name, namespace: 'default' })
      return job.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True') ?? false
    },
    60_000,
    describe
  )
  await batch.deleteNamespacedJob({ name, namespace: 'default', propagationPolicy: 'Background' })
}

/** The cluster recorded in `dir`, if its API server still answers and its S3 server runs; undefined otherwise. */
export async function runningCluster(dir: string): Promise<Cluster | undefined> {
  const file = join(dir, 'cluster.json')
  if (!existsSync(file)) return undefined
  const cluster = JSON.parse(readFileSync(file, 'utf8')) as Cluster
  const pid = apiServerPid(dir)
  if (!pid || !isAlive(pid)) return undefined
  // A cluster started before it had one (or whose versitygw died) is not the cluster tests expect.
  const s3Pid = recordedPid(dir, S3_SERVER)
  if (!cluster.s3 || !s3Pid || !isAlive(s3Pid)) return undefined
  // A real node recorded but not running (or one this machine could run but was not started): start again.
  if (cluster.realNode ? NODE_PROCESSES.some((name) => !isAlive(recordedPid(dir, name))) : !cluster.realNodeSkipped) return undefined
  const kc = new KubeConfig()
  kc.loadFromFile(cluster.kubeconfig)
  const token = kc.getCurrentUser()?.token
  return (await httpsOk(`${cluster.server}/readyz`, apiServerCertFile(dir), token)) ? cluster : undefined
}

/** Stops every process of the cluster in `dir`; returns what it stopped. */
export async function stopCluster(dir: string): Promise<string[]> {
  const node = existsSync(join(dir, 'node')) ? ['the real node'] : []
  await stopRealNode(dir)
  return [...node, ...(await stopProcesses(dir))]
}

/** Environment for child processes (helm, kubectl, node dist/index.js) that use the cluster, and for jest's workers. */
export function clusterEnv(cluster: Cluster): Record<string, string> {
  return { KUBECONFIG: cluster.kubeconfig, PATH: `${cluster.binDir}:${process.env.PATH ?? ''}`, ...s3Env(cluster.s3), ...realNodeEnv(cluster) }
}

/** The real node's variables: empty values when there is none. */
export function realNodeEnv(cluster: Cluster): Record<string, string> {
  return {
    JOB_SWEEPER_REAL_NODE: cluster.realNode?.name ?? '',
    JOB_SWEEPER_TEST_IMAGE: cluster.realNode?.testImage ?? '',
    JOB_SWEEPER_REGISTRY: cluster.realNode?.registry ?? '',
    JOB_SWEEPER_PULL_PROXY: cluster.realNode?.pullProxy ?? ''
  }
}
