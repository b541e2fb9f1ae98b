// What tests use to reach the cluster that global-setup.ts started: clients, namespaces, Jobs,
// and the cluster's helm/kubectl.
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { BatchV1Api, CoreV1Api, KubeConfig, type V1Container, type V1Job, type V1JobSpec, type V1PodSpec } from '@kubernetes/client-node'
import type { Cluster } from './cluster.ts'
import { FAIL_LABEL, HOLD_LABEL, LINGER_LABEL, NO_SUCH_NODE_LABEL, RUN_FOR_ANNOTATION } from './kwok.ts'
import { REAL_NODE_LABEL } from './node.ts'

export function testCluster(): Cluster {
  const json = process.env.JOB_SWEEPER_CLUSTER
  if (!json) throw new Error('no test cluster: run the tests through jest (npm test), whose global setup starts one')
  return JSON.parse(json) as Cluster
}

export function kubeConfig(): KubeConfig {
  const kc = new KubeConfig()
  kc.loadFromFile(testCluster().kubeconfig)
  return kc
}

export const batchApi = (): BatchV1Api => kubeConfig().makeApiClient(BatchV1Api)
export const coreApi = (): CoreV1Api => kubeConfig().makeApiClient(CoreV1Api)

/** Creates a namespace with a unique name; returns the name. */
export async function createNamespace(prefix: string): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`
  await coreApi().createNamespace({ body: { metadata: { name, labels: { 'job-sweeper.test/namespace': 'true' } } } })
  return name
}

export async function deleteNamespace(name: string): Promise<void> {
  await coreApi()
    .deleteNamespace({ name })
    .catch(() => undefined)
}

/**
 * How a test Job's pod behaves. The first three on the fake node (kwok). The last four never
 * start: `unschedulable` (a nodeSelector no node has: the real scheduler says so), and, on the real
 * node (test/cluster/node.ts), `image-pull-backoff` (its image, missingImage(), is not in the local
 * registry: ErrImagePull, then ImagePullBackOff), `create-container-config-error` (it needs a Secret
 * that does not exist), `init-crash-loop` (its init container wait-for-db exits 1 again and again,
 * under restartPolicy OnFailure, with the kubelet's real back-off). A test of those three runs only
 * where the real node does: testOnRealNode.
 */
export type PodBehaviour = 'succeed' | 'fail' | 'hold' | 'unschedulable' | 'image-pull-backoff' | 'create-container-config-error' | 'init-crash-loop'

/** The Secret a `create-container-config-error` pod needs and no test creates. */
export const MISSING_SECRET = 'db-credentials'

/** The real node's name, shell image and registry (empty without one). */
export const realNode = {
  name: process.env.JOB_SWEEPER_REAL_NODE ?? '',
  image: process.env.JOB_SWEEPER_TEST_IMAGE ?? '',
  registry: process.env.JOB_SWEEPER_REGISTRY ?? ''
}

/** A test that needs the real node: skipped where the machine cannot run one (said by test/cluster/prerequisites.ts; under CI=true only where the host cannot: not root, or cgroup v2). */
// A function, not `realNode.name ? test : test.skip`: this module is also loaded outside jest (npm run bench), where there is no `test`.
export const testOnRealNode = (...args: Parameters<typeof test>): void => (realNode.name ? test : test.skip)(...args)

/** `text` matched literally inside a RegExp. */
export const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** An image the local registry does not have (`app:1.2.3` → `127.0.0.1:<port>/app:1.2.3`): pulling it fails for real. */
export const missingImage = (nameAndTag: string): string => `${realNode.registry}/${nameAndTag}`

/** The pod template's parts for a behaviour that never starts: the real scheduler's, or the real node's. */
function neverStart(behaviour: PodBehaviour | undefined): { pod: Partial<V1PodSpec>; main?: Partial<V1Container> } {
  const onRealNode = (spec: Partial<V1PodSpec>): Partial<V1PodSpec> => {
    if (!realNode.name) throw new Error(`a ${behaviour} pod needs the real node (testOnRealNode); this machine has none`)
    return { ...spec, nodeSelector: { [REAL_NODE_LABEL]: 'true' }, tolerations: [{ key: REAL_NODE_LABEL, operator: 'Exists', effect: 'NoSchedule' }] }
  }
  switch (behaviour) {
    case 'unschedulable':
      return { pod: { nodeSelector: { [NO_SUCH_NODE_LABEL]: 'true' } } }
    case 'image-pull-backoff':
      return { pod: onRealNode({}), main: { command: ['true'] } }
    case 'create-container-config-error':
      return { pod: onRealNode({}), main: { image: realNode.image, command: ['true'], envFrom: [{ secretRef: { name: MISSING_SECRET } }] } }
    case 'init-crash-loop':
      return {
        pod: onRealNode({
          restartPolicy: 'OnFailure',
          terminationGracePeriodSeconds: 1,
          initContainers: [{ name: 'wait-for-db', image: realNode.image, command: ['sh', '-c', 'echo waiting for db; exit 1'] }]
        }),
        main: { image: realNode.image, command: ['true'] }
      }
    default:
      return { pod: {} }
  }
}

/** The annotations Helm puts on every object of `release` in `namespace`; with `hook`, on a hook of that release. */
export function helmAnnotations(release: string, namespace: string, hook?: string): Record<string, string> {
  return { 'meta.helm.sh/release-name': release, 'meta.helm.sh/release-namespace': namespace, ...(hook ? { 'helm.sh/hook': hook } : {}) }
}

export interface TestJob {
  name: string
  namespace: string
  behaviour?: PodBehaviour
  /** Keep the pod Running this long before it finishes (a Go duration). */
  runFor?: string
  labels?: Record<string, string>
  annotations?: Record<string, string>
  ttlSecondsAfterFinished?: number
  image?: string
  /** Once deleted, the pods stay Terminating until a test removes the linger label. */
  linger?: boolean
  /** Merged over the defaults (backoffLimit 0, one pod): completions, successPolicy, … */
  spec?: Omit<Partial<V1JobSpec>, 'template'>
}

export function jobManifest(job: TestJob): V1Job {
  const podLabels: Record<string, string> = {}
  if (job.behaviour === 'fail') podLabels[FAIL_LABEL] = 'true'
  if (job.behaviour === 'hold') podLabels[HOLD_LABEL] = 'true'
  if (job.linger) podLabels[LINGER_LABEL] = 'true'
  const image = job.image ?? 'example.invalid/job:1'
  const never = neverStart(job.behaviour)
  const podAnnotations: Record<string, string> = {}
  if (job.runFor) podAnnotations[RUN_FOR_ANNOTATION] = job.runFor
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: job.name, namespace: job.namespace, labels: job.labels, annotations: job.annotations },
    spec: {
      // OnFailure counts an init container's restarts against backoffLimit: room for the 3 of init-crash-loop.
      backoffLimit: job.behaviour === 'init-crash-loop' ? 6 : 0,
      ttlSecondsAfterFinished: job.ttlSecondsAfterFinished,
      template: {
        metadata: { labels: podLabels, annotations: Object.keys(podAnnotations).length > 0 ? podAnnotations : undefined },
        spec: { restartPolicy: 'Never', containers: [{ name: 'main', image, ...never.main }], ...never.pod }
      },
      ...job.spec
    }
  }
}

export async function createJob(job: TestJob): Promise<V1Job> {
  return batchApi().createNamespacedJob({ namespace: job.namespace, body: jobManifest(job) })
}

/** The Job, or undefined once it is gone (404). */
export async function getJob(namespace: string, name: string): Promise<V1Job | undefined> {
  try {
    return await batchApi().readNamespacedJob({ name, namespace })
  } catch (e) {
    if ((e as { code?: number }).code === 404) return undefined
    throw e
  }
}

export function jobCondition(job: V1Job | undefined): 'Complete' | 'Failed' | undefined {
  const c = job?.status?.conditions?.find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True')
  return c?.type as 'Complete' | 'Failed' | undefined
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/** Polls until `check` holds; the tests' own waiting (the product uses watches). */
export async function eventually<T>(what: string, probe: () => Promise<T>, check: (value: T) => boolean, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let last: T = await probe()
  while (!check(last)) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}; last value: ${JSON.stringify(last)?.slice(0, 500)}`)
    await sleep(250)
    last = await probe()
  }
  return last
}

export async function waitForJobCondition(namespace: string, name: string, condition: 'Complete' | 'Failed'): Promise<V1Job> {
  const job = await eventually(
    `Job ${namespace}/${name} ${condition}`,
    () => getJob(namespace, name),
    (j) => jobCondition(j) !== undefined
  )
  if (jobCondition(job) !== condition) throw new Error(`Job ${namespace}/${name} ended ${jobCondition(job)}, expected ${condition}`)
  return job as V1Job
}

export async function podsOfJob(namespace: string, job: V1Job): Promise<string[]> {
  const pods = await coreApi().listNamespacedPod({ namespace, labelSelector: `batch.kubernetes.io/controller-uid=${job.metadata?.uid}` })
  return pods.items.map((p) => p.metadata?.name ?? '')
}

export interface CommandResult {
  code: number
  stdout: string
  stderr: string
}

/** Runs one of the cluster's binaries (helm, kubectl) or any command with the cluster's env. */
export function run(command: string, args: string[], env: Record<string, string> = {}): CommandResult {
  const cluster = testCluster()
  const result = spawnSync(command, args, {
    encoding: 'utf8',
    env: { ...process.env, KUBECONFIG: cluster.kubeconfig, PATH: `${cluster.binDir}:${process.env.PATH}`, ...env },
    timeout: 180_000
  })
  return { code: result.status ?? -1, stdout: result.stdout ?? '', stderr: result.stderr ?? '' }
}

/** The major version of the cluster's helm: 3, or 4 (server-side apply by default). */
export function helmMajor(): 3 | 4 {
  const major = Number(/^v(\d+)\./.exec(testCluster().helmVersion)?.[1])
  if (major !== 3 && major !== 4) throw new Error(`unexpected Helm version '${testCluster().helmVersion}': expected v3.x or v4.x`)
  return major
}

export function helm(...args: string[]): CommandResult {
  return run('helm', args)
}

export function kubectl(...args: string[]): CommandResult {
  return run('kubectl', args)
}

/** An object as `kubectl get -o json` shows it, the fields the StatefulSet tests read (its pods, PVCs and the StatefulSet). */
export interface LiveObject {
  metadata: { uid: string; ownerReferences?: { kind: string; uid: string }[] }
  spec?: { resources?: { requests?: { storage?: string } }; volumeClaimTemplates?: { spec: { resources: { requests: { storage: string } } } }[] }
}

/** The object of that kind and name in the namespace, or undefined when there is none. */
export function liveObject(kind: string, name: string, namespace: string): LiveObject | undefined {
  const got = kubectl('get', kind, name, '-n', namespace, '-o', 'json', '--ignore-not-found')
  return got.stdout.trim() === '' ? undefined : (JSON.parse(got.stdout) as LiveObject)
}
