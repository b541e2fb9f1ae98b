// Observe: read what the plan needs from the cluster (and the rendered manifest), change nothing.
import type { V1Pod } from '@kubernetes/client-node'
import type { JobsClient } from '../kube/client.ts'
import { apiErrorMessage } from '../kube/errors.ts'
import type { JobRecord } from '../kube/job-record.ts'
import { ClusterUnreachable } from '../kube/retry.ts'
import { INPUT, type Settings } from '../settings/settings.ts'
import { compareWithRendered } from './compare.ts'
import { ALL_NAMESPACES, type ManifestDifference, type Observed } from './observed.ts'
import { failureReason } from './job-failure.ts'
import { stuckReadingEvents } from './stuck-events.ts'

/** The namespace this run works in: the input, else the kubeconfig context's, else default. */
export function targetNamespace(settings: Settings, client: JobsClient): string {
  return settings.namespace ?? client.defaultNamespace
}

/**
 * Lists the candidate Jobs in the one namespace of the pre and post phases. With `manifest` and
 * `compareTemplates` (pre), asks the API server (server-side dry run, compare.ts) whether the
 * upgrade can keep the live Job of each rendered one's name. `info` gets the dry runs' refusals.
 */
export async function observe(
  client: JobsClient,
  settings: Settings,
  warn: (message: string) => void,
  compareTemplates: boolean,
  info: (message: string) => void = () => {}
): Promise<Observed> {
  const namespace = targetNamespace(settings, client)
  const { jobs, resourceVersion } = await client.listJobs(namespace, settings.scope.selector)
  const resourceVersions = { [namespace]: resourceVersion }
  if (settings.scope.manifest === undefined) return { namespace, jobs, resourceVersions }

  const rendered = settings.manifestJobs ?? [] // read and parsed with the settings
  const manifest = new Map<string, ManifestDifference | undefined>()
  for (const job of rendered) {
    const name = job.metadata?.name ?? ''
    const ns = job.metadata?.namespace ?? namespace
    if (ns !== namespace) {
      warn(`${INPUT.manifest}: Job ${ns}/${name} is in another namespace than ${namespace}; left out`)
      continue
    }
    // The comparison needs the whole live Job (the list keeps no pod templates): read it.
    const live = compareTemplates && jobs.some((j) => j.metadata?.name === name) ? await client.getJob(namespace, name) : undefined
    const difference = live ? await compareWithRendered(client, namespace, job, live, info) : undefined
    if (difference?.kind === 'unknown') warn(`${INPUT.manifest}: could not compare Job ${namespace}/${name} (${difference.detail}); treated as changed`)
    manifest.set(name, difference)
  }
  if (rendered.length === 0) warn(`${INPUT.manifest} '${settings.scope.manifest}' names no batch/v1 Jobs: nothing is in scope`)
  return { namespace, jobs, manifest, resourceVersions }
}

/** The sweep's Jobs in scope by `manifest`: the rendered Jobs' names (undefined: no manifest). */
export function sweepManifest(settings: Settings): Observed['manifest'] {
  return settings.manifestJobs === undefined ? undefined : new Map(settings.manifestJobs.map((j) => [j.metadata?.name ?? '', undefined]))
}

/**
 * The sweep's candidates: every listed namespace (or all of them), paginated. With `onPage`, each
 * page goes there as it arrives (a planner that lets it go), `jobs` stays empty and `listed`
 * counts them.
 */
export async function observeSweep(client: JobsClient, settings: Settings, onPage?: (jobs: JobRecord[]) => void): Promise<Observed> {
  const selector = settings.scope.selector
  const namespaces = settings.namespaces ?? [client.defaultNamespace]
  let listed = 0
  const page =
    onPage &&
    ((jobs: JobRecord[]): void => {
      listed += jobs.length
      onPage(jobs)
    })
  const listings = settings.allNamespaces
    ? [await client.listJobs(undefined, selector, page)]
    : await Promise.all(namespaces.map((ns) => client.listJobs(ns, selector, page)))
  const jobs = listings.flatMap((l) => l.jobs)
  // Sweeps never wait, so they need no resourceVersions to watch from.
  return {
    namespace: settings.allNamespaces ? ALL_NAMESPACES : namespaces.join(', '),
    jobs,
    manifest: sweepManifest(settings),
    listed: onPage ? listed : jobs.length
  }
}

const CONTROLLER_UID = 'batch.kubernetes.io/controller-uid'

/**
 * The pods of `jobs`, by Job UID: one list per namespace (per 50 Jobs), never one per Job. Pods of
 * Jobs created before Kubernetes 1.27 carry only the legacy label and are not found: such a Job
 * shows no pod with pods active, which never counts as stuck.
 */
export async function podsOfJobs(client: JobsClient, jobs: JobRecord[]): Promise<Map<string, V1Pod[]>> {
  const byNamespace = new Map<string, string[]>()
  for (const job of jobs) {
    const ns = job.metadata?.namespace ?? client.defaultNamespace
    let uids = byNamespace.get(ns)
    if (!uids) byNamespace.set(ns, (uids = []))
    uids.push(job.metadata?.uid ?? '')
  }
  const pods = new Map<string, V1Pod[]>(jobs.map((j) => [j.metadata?.uid ?? '', []]))
  const lists = await Promise.all([...byNamespace].map(([ns, uids]) => client.listPodsOfJobs(ns, uids)))
  for (const pod of lists.flat()) pods.get(pod.metadata?.labels?.[CONTROLLER_UID] ?? '')?.push(pod)
  return pods
}

/**
 * Reads the pods of the unfinished Jobs (pre and post) and records on each Job that never started
 * why (JobRecord.neverStarted); the pods themselves are not kept. `stuckAfterSeconds`: the input.
 * Pods that cannot be read (403) are a warning: every such Job then counts as running, as it did
 * before job-sweeper looked at pods.
 */
export async function observeStarts(client: JobsClient, unfinished: JobRecord[], stuckAfterSeconds: number, warn: (message: string) => void): Promise<void> {
  if (unfinished.length === 0) return
  let pods: Map<string, V1Pod[]>
  try {
    pods = await podsOfJobs(client, unfinished)
  } catch (e) {
    if (e instanceof ClusterUnreachable) throw e
    warn(`could not list the pods of ${unfinished.length} unfinished Job(s) (${apiErrorMessage(e)}): a Job that never started counts as running`)
    return
  }
  const now = new Date()
  for (const job of unfinished) job.neverStarted = await stuckReadingEvents(client, job, pods.get(job.metadata?.uid ?? '') ?? [], now, stuckAfterSeconds)
}

/**
 * Records on each failed Job why it failed (JobRecord.failedBecause), from its conditions and its
 * pods (one list per namespace); the pods themselves are not kept. Pods that cannot be read are
 * no error: the Job's own reason (BackoffLimitExceeded, DeadlineExceeded) is still said.
 */
export async function observeFailures(client: JobsClient, failed: JobRecord[]): Promise<void> {
  if (failed.length === 0) return
  const pods = await podsOfJobs(client, failed).catch((e: unknown) => {
    if (e instanceof ClusterUnreachable) throw e
    return new Map<string, V1Pod[]>()
  })
  for (const job of failed) job.failedBecause = failureReason(job, pods.get(job.metadata?.uid ?? '') ?? [])
}
