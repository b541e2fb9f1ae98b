// What the keeper's catch-up is measured against (issue 34): a plain script in the same runtime,
// with the same SDK client (the keeper's s3Client settings), the same connection pool to the API
// server (rest.ts), the same client-side limit (300 requests a second) and the same number of Jobs
// in progress at once, that makes exactly the requests any tool that loses no log must make.
// - loop, the minimal lossless loop: one paged list of the Jobs, then per finished Job the hold (a
//   strategic merge patch adding a finalizer, unless the Job is held already), one list of its pods
//   (not older than the hold: served from the API server's cache, as the keeper's), one log GET per
//   container run, one PUT per log, one PUT of job.json last, the release (a patch removing the
//   finalizer). Strategic merge patches add and remove one finalizer of a list without reading it
//   first, so no other controller's finalizer is lost and no conflict is possible.
// - floor, the no-protection floor: the list of the Jobs, then per Job its pods, each log GET and
//   its PUT; no hold, no release, no job.json: what the hold and the release cost is loop − floor.
// Each log is read whole (64 KiB here) and PUT as one object.
//
// Run as its own process (the benchmark times it from spawn to exit): scripts/node24
// test/bench/minimal-loop.ts <loop|floor> <namespace> <label selector> <s3 endpoint> <s3://bucket/prefix> <concurrency>,
// with KUBECONFIG and the S3 credentials in the environment; prints
// {"jobs":…,"api":…,"bytes":…,"cpuSeconds":…} (api: the requests it sent to the API server).
import { PutObjectCommand } from '@aws-sdk/client-s3'
import { KubeConfig } from '@kubernetes/client-node'
import PQueue from 'p-queue'
import { Rest, seg } from '../../src/kube/rest.ts'
import { s3Client } from '../../src/store/s3-sink.ts'

interface Meta {
  name: string
  namespace: string
  uid: string
  resourceVersion: string
  finalizers?: string[]
  ownerReferences?: { uid: string; controller?: boolean }[]
}
interface Job {
  metadata: Meta
  status?: { conditions?: { type: string; status: string }[] }
}
interface ContainerStatus {
  name: string
  restartCount?: number
  state?: { running?: unknown; terminated?: unknown }
  lastState?: { terminated?: unknown }
}
interface Pod {
  metadata: Meta
  spec?: { initContainers?: { name: string }[]; containers?: { name: string }[] }
  status?: { initContainerStatuses?: ContainerStatus[]; containerStatuses?: ContainerStatus[] }
}

const [mode, namespace, selector, endpoint, logsDir, concurrencyArg] = process.argv.slice(2)
if ((mode !== 'loop' && mode !== 'floor') || !namespace || !endpoint || !logsDir)
  throw new Error('usage: minimal-loop.ts <loop|floor> <namespace> <label selector> <s3 endpoint> <s3://bucket/prefix> <concurrency>')
const concurrency = Number(concurrencyArg ?? 4)
const FINALIZER = 'job-sweeper.bench/minimal-loop'
const SMP = 'application/strategic-merge-patch+json'
const [bucket, ...prefixParts] = logsDir.replace(/^s3:\/\//, '').split('/')
const prefix = prefixParts.join('/')

const kc = new KubeConfig()
kc.loadFromDefault()
const rest = new Rest(kc)
const s3 = s3Client({ kind: 's3', url: logsDir, bucket, prefix, endpoint })
// The keeper's client-side limit: at most 300 requests start in a second.
const limiter = new PQueue({ intervalCap: 300, interval: 1000 })
let api = 0
let bytes = 0
const call = <T>(send: () => Promise<T>): Promise<T> =>
  limiter.add(() => {
    api++
    return send()
  }) as Promise<T>
const put = (key: string, body: Buffer | string, contentType: string): Promise<unknown> =>
  s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${prefix}/${key}`, Body: body, ContentType: contentType }))

const finished = (job: Job): boolean => job.status?.conditions?.some((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True') ?? false

/** The containers of a pod that ran, and for each restarted one its previous run too. */
function runs(pod: Pod): { container: string; previous: boolean }[] {
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]
  return [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].flatMap(({ name }) => {
    const s = statuses.find((c) => c.name === name)
    const restarts = s?.restartCount ?? 0
    if (!(s?.state?.running || s?.state?.terminated || s?.lastState?.terminated || restarts > 0)) return []
    return (restarts > 0 ? [true, false] : [false]).map((previous) => ({ container: name, previous }))
  })
}

async function archive(listed: Job): Promise<void> {
  const { name, uid } = listed.metadata
  const jobPath = `/apis/batch/v1/namespaces/${seg(namespace)}/jobs/${seg(name)}`
  let job = listed
  if (mode === 'loop' && !job.metadata.finalizers?.includes(FINALIZER))
    job = await call(() => rest.request<Job>('PATCH', jobPath, { body: { metadata: { finalizers: [FINALIZER] } }, contentType: SMP }))
  // Not older than the Job as last written: every pod change its status counts came before it.
  const pods = (
    await call(() =>
      rest.request<{ items: Pod[] }>('GET', `/api/v1/namespaces/${seg(namespace)}/pods`, {
        query: {
          labelSelector: `batch.kubernetes.io/controller-uid=${uid}`,
          limit: 500,
          resourceVersion: job.metadata.resourceVersion,
          resourceVersionMatch: 'NotOlderThan'
        }
      })
    )
  ).items.filter((p) => p.metadata.ownerReferences?.some((r) => r.controller && r.uid === uid))
  const folder = `${namespace}/${name}/${uid}`
  for (const pod of pods)
    for (const { container, previous } of runs(pod)) {
      const stream = await call(() =>
        rest.stream(`/api/v1/namespaces/${seg(namespace)}/pods/${seg(pod.metadata.name)}/log`, { query: { container, previous } })
      )
      const chunks: Buffer[] = []
      for await (const chunk of stream) chunks.push(chunk as Buffer)
      const log = Buffer.concat(chunks)
      bytes += log.length
      await put(`${folder}/${pod.metadata.name}/${container}${previous ? '.previous' : ''}.log`, log, 'text/plain; charset=utf-8')
    }
  if (mode === 'floor') return
  await put(`${folder}/job.json`, `${JSON.stringify({ job, pods })}\n`, 'application/json')
  await call(() => rest.request('PATCH', jobPath, { body: { metadata: { [`$deleteFromPrimitiveList/finalizers`]: [FINALIZER] } }, contentType: SMP }))
}

try {
  const jobs: Job[] = []
  let next: string | undefined
  do {
    const page = await call(() =>
      rest.request<{ items: Job[]; metadata?: { continue?: string } }>('GET', `/apis/batch/v1/namespaces/${seg(namespace)}/jobs`, {
        query: { labelSelector: selector, limit: 500, continue: next }
      })
    )
    jobs.push(...page.items.filter(finished))
    next = page.metadata?.continue || undefined
  } while (next)
  let i = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (i < jobs.length) await archive(jobs[i++])
    })
  )
  const cpu = process.cpuUsage()
  process.stdout.write(`${JSON.stringify({ jobs: jobs.length, api, bytes, cpuSeconds: (cpu.user + cpu.system) / 1e6 })}\n`)
} finally {
  await rest.close()
  s3.destroy()
}
