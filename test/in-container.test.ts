// job-sweeper from its image, in real containers on the real node (issue 25, item 5): the image as
// image/Containerfile makes it (Node 24 and the bundled CLI, assembled here: its base cannot be
// pulled), pushed to the node's registry and pulled by digest; the chart's CronJob run as the
// chart renders it: as its ServiceAccount through the in-cluster configuration, user 1000, a
// read-only root filesystem and the chart's memory limit.
//
// On a cluster of its own, started by this suite: service accounts as a real cluster has them (the
// ServiceAccount admission plugin gives each pod its token volume, the controllers make each
// namespace's `default` ServiceAccount and kube-root-ca.crt). The suites' shared cluster runs
// without them: there every namespace's first pods would wait for the controller.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { S3Client } from '@aws-sdk/client-s3'
import type { V1Pod } from '@kubernetes/client-node'
import { ANNOTATION, MANAGED_LABEL } from '../src/plan/retention.ts'
import { startCluster, stopCluster, type Cluster } from './cluster/cluster.ts'
import { jobSweeperImage, pushImage } from './cluster/images.ts'
import { REAL_NODE_LABEL } from './cluster/node.ts'
import { s3Env } from './cluster/s3.ts'
import {
  batchApi,
  coreApi,
  createJob,
  createNamespace,
  eventually,
  getJob,
  helm,
  helmAnnotations,
  kubectl,
  waitForJobCondition,
  type PodBehaviour
} from './cluster/testenv.ts'
import { createDecoys, missingDecoys } from './decoys.ts'
import { imageRootfs } from './in-pod.ts'
import { chart as demoChart } from './scenario.ts'
import { savedJob } from './s3-objects.ts'

const root = join(import.meta.dirname, '..')
const chart = join(root, 'charts', 'job-sweeper')
const describeOnRealNode = process.env.JOB_SWEEPER_REAL_NODE ? describe : describe.skip

describeOnRealNode('job-sweeper from its image on the real node', () => {
  let dir: string
  let cluster: Cluster
  let node: NonNullable<Cluster['realNode']>
  let shared: string | undefined
  /** The image in the node's registry: repository and digest. */
  let image: { repository: string; digest: string }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'in-container-'))
    cluster = await startCluster(dir, () => {}, { serviceAccounts: true, controllers: ['deployment-controller', 'replicaset-controller'] })
    if (!cluster.realNode) throw new Error(`the suite's cluster has no real node: ${cluster.realNodeSkipped}`)
    node = cluster.realNode
    // testenv's clients, helm and kubectl act on this suite's cluster.
    shared = process.env.JOB_SWEEPER_CLUSTER
    process.env.JOB_SWEEPER_CLUSTER = JSON.stringify(cluster)
    const built = jobSweeperImage(join(dir, 'image'), process.execPath, imageRootfs(), readFileSync(join(root, 'image', 'Containerfile'), 'utf8'), 'test')
    const pushed = await pushImage(node.registry, built)
    image = { repository: `${pushed.registry}/${pushed.repository}`, digest: pushed.digest }
  }, 300_000)

  afterAll(async () => {
    if (shared !== undefined) process.env.JOB_SWEEPER_CLUSTER = shared
    if (dir) {
      await stopCluster(dir)
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)

  /** What the bucket holds of a Job under `prefix`: its job.json and its container's log (empty when there is none). */
  async function inBucket(prefix: string, namespace: string, job: string, container: string): Promise<{ log: string; jobFile?: { uid?: string } }> {
    const s3 = s3Env(cluster.s3)
    const client = new S3Client({
      endpoint: cluster.s3.endpoint,
      region: cluster.s3.region,
      forcePathStyle: true,
      credentials: { accessKeyId: s3.AWS_ACCESS_KEY_ID, secretAccessKey: s3.AWS_SECRET_ACCESS_KEY }
    })
    try {
      const { log, jobFile } = await savedJob(client, cluster.s3.bucket, `${prefix}/${namespace}/${job}/`, container)
      return { log, jobFile }
    } finally {
      client.destroy()
    }
  }

  /** An expired Job (its retention 1s), labelled as post labels them unless `managed` is false, finished. */
  async function expiredJob(namespace: string, name: string, behaviour: PodBehaviour = 'fail', managed = true): Promise<string> {
    const key = behaviour === 'fail' ? ANNOTATION.failureGrace : ANNOTATION.ttl
    const job = await createJob({ namespace, name, behaviour, labels: managed ? { [MANAGED_LABEL]: 'true' } : undefined, annotations: { [key]: '1s' } })
    await waitForJobCondition(namespace, name, behaviour === 'fail' ? 'Failed' : 'Complete')
    return job.metadata?.uid ?? ''
  }

  test('the chart’s CronJob, from the image pulled by digest: its sweep runs as its ServiceAccount (user 1000, read-only root), deletes the expired labelled Jobs and saves the failed one’s log to the bucket', async () => {
    const home = await createNamespace('container-home')
    const ns = await createNamespace('container')
    const otherNs = await createNamespace('container-other')
    const decoys = await createDecoys(ns, otherNs, 'app')
    const release = 'sweep'
    const s3 = s3Env(cluster.s3)
    await coreApi().createNamespacedSecret({
      namespace: home,
      body: { metadata: { name: 'sweep-logs-s3' }, stringData: { AWS_ACCESS_KEY_ID: s3.AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY: s3.AWS_SECRET_ACCESS_KEY } }
    })
    const prefix = `in-container-${home}`
    const values = join(dir, 'values.yaml')
    writeFileSync(
      values,
      JSON.stringify({
        image: { repository: image.repository, digest: image.digest },
        namespaces: [ns, otherNs],
        logs: { s3: `s3://${cluster.s3.bucket}/${prefix}`, s3Endpoint: node.s3Endpoint, region: cluster.s3.region, credentialsSecret: 'sweep-logs-s3' },
        nodeSelector: { [REAL_NODE_LABEL]: 'true' },
        tolerations: [{ key: REAL_NODE_LABEL, operator: 'Exists', effect: 'NoSchedule' }]
      })
    )
    const installed = helm('install', release, chart, '-n', home, '-f', values)
    expect({ code: installed.code, stderr: installed.stderr }).toMatchObject({ code: 0 })

    await expiredJob(ns, 'expired-failed')
    await expiredJob(otherNs, 'expired-succeeded', 'succeed')
    const notLabelled = await expiredJob(ns, 'expired-not-labelled', 'succeed', false)
    const fresh = await createJob({ namespace: ns, name: 'fresh', labels: { [MANAGED_LABEL]: 'true' }, annotations: { [ANNOTATION.ttl]: '1h' } })
    await waitForJobCondition(ns, 'fresh', 'Complete')
    await new Promise((r) => setTimeout(r, 2500)) // past the 1s retentions

    // A sweep now, as the schedule would start it.
    const created = kubectl('create', 'job', 'sweep-now', `--from=cronjob/${release}-job-sweeper`, '-n', home)
    expect({ code: created.code, stderr: created.stderr }).toMatchObject({ code: 0 })
    const done = await waitForJobCondition(home, 'sweep-now', 'Complete').catch(async (e: unknown) => {
      throw new Error(
        `${String(e)}\n${kubectl('describe', 'pods', '-n', home, '-l', 'job-name=sweep-now').stdout}\n${kubectl('logs', '-n', home, 'job/sweep-now').stdout}`
      )
    })
    const [pod] = (await coreApi().listNamespacedPod({ namespace: home, labelSelector: `batch.kubernetes.io/controller-uid=${done.metadata?.uid}` }))
      .items as V1Pod[]
    // Where and how it ran: the real node, the image by digest, as the chart's user, with the
    // token volume the admission plugin added for its ServiceAccount.
    expect(pod.spec?.nodeName).toBe(node.name)
    expect(pod.spec?.serviceAccountName).toBe(`${release}-job-sweeper`)
    expect(pod.spec?.volumes?.map((v) => v.name)).toContainEqual(expect.stringMatching(/^kube-api-access-/))
    const [status] = pod.status?.containerStatuses ?? []
    expect(status.imageID).toBe(`${image.repository}@${image.digest}`)
    expect(status.state?.terminated?.exitCode).toBe(0)
    expect(status.user?.linux?.uid).toBe(1000)
    const container = pod.spec?.containers[0]
    expect(container?.securityContext?.readOnlyRootFilesystem).toBe(true)
    expect(container?.resources?.limits?.memory).toBe('512Mi')

    // What it did: the two expired labelled Jobs deleted, the others and the decoys kept.
    const log = kubectl('logs', '-n', home, pod.metadata?.name ?? '-').stdout
    expect(log).toContain(`${ns}/expired-failed`)
    expect(log).toContain(`${otherNs}/expired-succeeded`)
    expect(log).not.toContain(s3.AWS_SECRET_ACCESS_KEY)
    expect(await getJob(ns, 'expired-failed')).toBeUndefined()
    expect(await getJob(otherNs, 'expired-succeeded')).toBeUndefined()
    expect((await getJob(ns, 'expired-not-labelled'))?.metadata?.uid).toBe(notLabelled)
    expect((await getJob(ns, 'fresh'))?.metadata?.uid).toBe(fresh.metadata?.uid)
    expect(await missingDecoys(decoys)).toEqual([])

    // The failed Job's log, in the bucket: uploaded from the container through the node's network.
    const saved = await inBucket(prefix, ns, 'expired-failed', 'main')
    expect(saved.jobFile).toBeDefined()
    expect(saved.log).toContain('migrate: ERROR: relation "tuples" already exists') // kwok's pod.log
  }, 240_000)

  test('the pre-upgrade hook (examples/pre-upgrade-hook.yaml) in a chart, from the image on the real node, under helm upgrade with Helm’s default timeout: it clears the release’s migration Jobs, the upgrade goes through, the failed one’s log is in the bucket and the hook’s pod log stays', async () => {
    const ns = await createNamespace('container-hook')
    const otherNs = await createNamespace('container-hook-other')
    const release = 'app'
    const decoys = await createDecoys(ns, otherNs, release)
    const s3 = s3Env(cluster.s3)
    await coreApi().createNamespacedSecret({
      namespace: ns,
      body: { metadata: { name: 'hook-logs-s3' }, stringData: { AWS_ACCESS_KEY_ID: s3.AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY: s3.AWS_SECRET_ACCESS_KEY } }
    })
    const prefix = `hook-${ns}`
    // The snippet as a chart author adapts it: the chart's two Jobs, the image by digest, a bucket
    // for the logs (its endpoint, region and credentials), the nodes it runs on.
    const replace = (text: string, from: string, to: string): string => {
      if (!text.includes(from)) throw new Error(`the snippet has no ${JSON.stringify(from)}: the test's edits need updating`)
      return text.replace(from, to)
    }
    let snippet = readFileSync(join(root, 'examples', 'pre-upgrade-hook.yaml'), 'utf8')
    snippet = replace(snippet, '$jobs := printf "%s-migrate" .Release.Name', '$jobs := printf "%s-migrate,%s-seed" .Release.Name .Release.Name')
    snippet = replace(snippet, 'image: ghcr.io/job-sweeper/job-sweeper:0.1.0', `image: ${image.repository}@${image.digest}`)
    snippet = replace(snippet, '- /scratch/logs', `- s3://${cluster.s3.bucket}/${prefix}\n            - --s3-endpoint\n            - ${node.s3Endpoint}`)
    snippet = replace(
      snippet,
      '          env:\n',
      [
        '          env:',
        '            - name: AWS_REGION',
        `              value: ${cluster.s3.region}`,
        ...['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'].flatMap((key) => [
          `            - name: ${key}`,
          '              valueFrom:',
          `                secretKeyRef: {name: hook-logs-s3, key: ${key}}`
        ]),
        ''
      ].join('\n')
    )
    snippet = replace(
      snippet,
      '      restartPolicy: Never\n',
      `      restartPolicy: Never\n      nodeSelector: {${REAL_NODE_LABEL}: 'true'}\n      tolerations: [{key: ${REAL_NODE_LABEL}, operator: Exists, effect: NoSchedule}]\n`
    )
    const chartDir = join(mkdtempSync(join(tmpdir(), 'hooked-chart-')), 'migrate-demo')
    cpSync(demoChart, chartDir, { recursive: true })
    writeFileSync(join(chartDir, 'templates', 'job-sweeper-pre-upgrade.yaml'), snippet)
    const values = ['--set', `realNode=true,image=${node.testImage},seedJob.enabled=true,seedJob.fail=true`]

    const installed = helm('install', release, chartDir, '-n', ns, ...values)
    expect({ code: installed.code, stderr: installed.stderr }).toMatchObject({ code: 0 })
    const migrate = await waitForJobCondition(ns, `${release}-migrate`, 'Complete')
    const seed = await waitForJobCondition(ns, `${release}-seed`, 'Failed')
    // A finished Job a CronJob of the release made, with the chart's labels and even its release
    // annotations on the jobTemplate: not one of $jobs, so not the hook's (--release alone, or
    // Argo CD's instance selector, would take it).
    const report = await createJob({
      namespace: ns,
      name: `${release}-report-29012345`,
      labels: { 'app.kubernetes.io/instance': release },
      annotations: helmAnnotations(release, ns)
    })
    await waitForJobCondition(ns, `${release}-report-29012345`, 'Complete')

    // No --timeout: Helm's default (5m) bounds the hook, and the hook ends inside it.
    const upgraded = helm('upgrade', release, chartDir, '-n', ns, ...values, '--set', 'migrationVersion=2')
    expect({ code: upgraded.code, stderr: upgraded.stderr }).toMatchObject({ code: 0 })
    const newMigrate = await waitForJobCondition(ns, `${release}-migrate`, 'Complete')
    expect(newMigrate.metadata?.uid).not.toBe(migrate.metadata?.uid)
    expect(newMigrate.spec?.template.spec?.containers[0].env).toContainEqual({ name: 'MIGRATION_VERSION', value: '2' })
    expect((await getJob(ns, `${release}-seed`))?.metadata?.uid).not.toBe(seed.metadata?.uid)

    // The hook ran on the real node from the image; its RBAC went when the hooks succeeded, its Job
    // and pod stay, and the pod's log says what it did.
    const hookJob = await getJob(ns, `${release}-job-sweeper`)
    expect(hookJob?.status?.succeeded).toBe(1)
    const [hookPod] = (await coreApi().listNamespacedPod({ namespace: ns, labelSelector: `batch.kubernetes.io/controller-uid=${hookJob?.metadata?.uid}` }))
      .items
    expect(hookPod.spec?.nodeName).toBe(node.name)
    expect(hookPod.status?.containerStatuses?.[0].imageID).toBe(`${image.repository}@${image.digest}`)
    for (const kind of ['serviceaccount', 'role', 'rolebinding'])
      expect([kind, kubectl('get', kind, `${release}-job-sweeper`, '-n', ns).code]).toEqual([kind, 1])
    const log = kubectl('logs', '-n', ns, hookPod.metadata?.name ?? '-').stdout
    expect(log).toContain(`${release}-migrate`)
    expect(log).toContain(`${release}-seed`)
    expect(log).not.toContain('warning:') // its Lease, by name, was its to take
    expect(log).not.toContain(s3.AWS_SECRET_ACCESS_KEY)

    // The failed seed's log, as its container wrote it, in the bucket: it outlives the hook's pod.
    const saved = await inBucket(prefix, ns, `${release}-seed`, 'seed')
    expect(saved.jobFile).toBeDefined()
    expect(saved.log).toBe('seed: loading fixtures for version 1\nseed: ERROR: duplicate key value violates unique constraint "users_pkey"\n')
    // The release's own hook Job, the decoys (a hook Job, another release, another namespace, a running Job) stay.
    expect(await getJob(ns, `${release}-hook`)).toBeDefined()
    expect((await getJob(ns, `${release}-report-29012345`))?.metadata?.uid).toBe(report.metadata?.uid)
    expect(await missingDecoys(decoys)).toEqual([])
  }, 360_000)
  test('the chart’s keeper (keeper.enabled), two replicas from the image on the real node: one leads, both ready; a Job post manages is archived to the bucket as soon as it finishes, before its TTL deletes it', async () => {
    const home = await createNamespace('keeper-home')
    const ns = await createNamespace('kept')
    const otherNs = await createNamespace('kept-other')
    const decoys = await createDecoys(ns, otherNs, 'app')
    const s3 = s3Env(cluster.s3)
    await coreApi().createNamespacedSecret({
      namespace: home,
      body: { metadata: { name: 'keeper-s3' }, stringData: { AWS_ACCESS_KEY_ID: s3.AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY: s3.AWS_SECRET_ACCESS_KEY } }
    })
    const prefix = `keeper-${home}`
    const values = join(dir, 'keeper-values.yaml')
    writeFileSync(
      values,
      JSON.stringify({
        image: { repository: image.repository, digest: image.digest },
        namespaces: [ns],
        logs: { s3: `s3://${cluster.s3.bucket}/${prefix}`, s3Endpoint: node.s3Endpoint, region: cluster.s3.region, credentialsSecret: 'keeper-s3' },
        keeper: { enabled: true, replicas: 2, holdDeadline: '2m' },
        nodeSelector: { [REAL_NODE_LABEL]: 'true' },
        tolerations: [{ key: REAL_NODE_LABEL, operator: 'Exists', effect: 'NoSchedule' }]
      })
    )
    const installed = helm('install', 'keep', chart, '-n', home, '-f', values)
    expect({ code: installed.code, stderr: installed.stderr }).toMatchObject({ code: 0 })
    const keeperPods = async (): Promise<V1Pod[]> =>
      (await coreApi().listNamespacedPod({ namespace: home, labelSelector: 'app.kubernetes.io/component=keeper' })).items
    const ready = (pod: V1Pod): boolean => pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true
    const pods = await eventually('both keepers ready (the leader, and the standby)', keeperPods, (p) => p.length === 2 && p.every(ready), 120_000).catch(
      (e: unknown) => {
        throw new Error(`${String(e)}\n${kubectl('describe', 'pods', '-n', home, '-l', 'app.kubernetes.io/component=keeper').stdout.slice(-3000)}`)
      }
    )
    for (const pod of pods) expect(pod.spec?.nodeName).toBe(node.name)
    const logsOf = (pod: V1Pod): string => kubectl('logs', '-n', home, pod.metadata?.name ?? '-').stdout
    await eventually(
      'one to lead',
      async () => pods.map(logsOf),
      (logs) => logs.filter((l) => l.includes('keeper: leading')).length === 1 && logs.filter((l) => l.includes('keeper: standby')).length === 1
    )

    // A migration post gave a 20s failure TTL: archived when it fails, then deleted by its TTL.
    const job = await createJob({
      namespace: ns,
      name: 'app-migrate',
      behaviour: 'fail',
      runFor: '3s',
      labels: { [MANAGED_LABEL]: 'true' },
      ttlSecondsAfterFinished: 20
    })
    const archived = await eventually(
      'the Job archived',
      () => getJob(ns, 'app-migrate'),
      (j) => j?.metadata?.annotations?.['job-sweeper.io/logs'] !== undefined,
      90_000
    )
    expect(archived?.metadata?.annotations?.['job-sweeper.io/logs']).toBe(`s3://${cluster.s3.bucket}/${prefix}/${ns}/app-migrate/${job.metadata?.uid}/`)
    expect(archived?.metadata?.finalizers ?? []).not.toContain('job-sweeper.io/logs')
    await eventually(
      'its TTL to delete it',
      () => getJob(ns, 'app-migrate'),
      (j) => j === undefined,
      60_000
    )
    const saved = await inBucket(prefix, ns, 'app-migrate', 'main')
    expect(saved.log).toContain('migrate: ERROR: relation "tuples" already exists') // kwok's pod.log
    expect(saved.jobFile?.uid).toBe(job.metadata?.uid)
    expect(pods.map(logsOf).join('\n')).not.toContain(s3.AWS_SECRET_ACCESS_KEY)
    expect(await missingDecoys(decoys)).toEqual([])

    // helm uninstall while the keeper holds a running Job: the chart's post-delete hook (the image,
    // `keeper --let-go`) waits for the keepers to stop, then releases it with a Warning Event, so
    // nothing is left waiting on a keeper that is gone.
    const worker = await createJob({ namespace: ns, name: 'app-worker', behaviour: 'hold', labels: { [MANAGED_LABEL]: 'true' } })
    await eventually(
      'the running worker held',
      () => getJob(ns, 'app-worker'),
      (j) => j?.metadata?.finalizers?.includes('job-sweeper.io/logs') === true
    )
    const uninstalled = helm('uninstall', 'keep', '-n', home)
    expect({ code: uninstalled.code, stderr: uninstalled.stderr }).toMatchObject({ code: 0 })
    const released = await getJob(ns, 'app-worker')
    expect(released?.metadata?.finalizers ?? []).not.toContain('job-sweeper.io/logs')
    expect(released?.metadata?.deletionTimestamp).toBeUndefined() // let go, not deleted
    const events = await coreApi().listNamespacedEvent({ namespace: ns, fieldSelector: `involvedObject.uid=${worker.metadata?.uid},reason=LogsNotArchived` })
    expect(events.items.map((e) => [e.type, e.message])).toEqual([
      ['Warning', expect.stringContaining('Released unarchived: the keeper is being removed (--let-go) while it still runs.')]
    ])
    // The hook's own ServiceAccount went with it (hook-succeeded), and no keeper pod is left.
    expect(kubectl('get', 'serviceaccount', 'keep-job-sweeper-keeper-let-go', '-n', home).code).not.toBe(0)
    expect(await eventually('the keepers gone', keeperPods, (p) => p.length === 0, 60_000)).toEqual([])
    expect(await missingDecoys(decoys)).toEqual([])
    await batchApi().deleteNamespacedJob({ namespace: ns, name: 'app-worker', propagationPolicy: 'Background' })
  }, 420_000)
})
