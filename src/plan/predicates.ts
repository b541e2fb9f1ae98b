// Small named facts about a Job, in the manner of Kubernetes' own controllers (needsCleanup,
// isJobFinished). Pure: no client, no clock but the one passed in.
import type { JobRecord } from '../kube/job-record.ts'

/**
 * Where a Job stands, in the words the summary uses. `suspended`: spec.suspend with no active pod
 * (a queue such as Kueue holds it, or it was stopped); `external`: spec.managedBy names another
 * controller than Kubernetes' Job controller, and it has not finished; `stuck`: none of its pods
 * ever ran a main container for stuck-after (JobRecord.neverStarted says why), so nothing runs.
 */
export type JobStatus = 'running' | 'stuck' | 'suspended' | 'external' | 'succeeded' | 'failed' | 'terminating'

/** spec.managedBy of Jobs that Kubernetes' own Job controller runs. */
export const JOB_CONTROLLER = 'kubernetes.io/job-controller'

export const HELM_RELEASE_NAME = 'meta.helm.sh/release-name'
export const HELM_RELEASE_NAMESPACE = 'meta.helm.sh/release-namespace'
const HOOK_ANNOTATIONS = ['helm.sh/hook', 'argocd.argoproj.io/hook']

function condition(job: JobRecord, type: string): boolean {
  return job.status?.conditions?.some((c) => c.type === type && c.status === 'True') ?? false
}

/**
 * The Job controller has marked the Job Complete or Failed. Only these two are final:
 * SuccessCriteriaMet and FailureTarget are interim (the pods are still being terminated).
 */
export function isFinished(job: JobRecord): boolean {
  return condition(job, 'Complete') || condition(job, 'Failed')
}

export function jobStatus(job: JobRecord): JobStatus {
  if (job.metadata?.deletionTimestamp) return 'terminating'
  if (condition(job, 'Failed')) return 'failed'
  if (condition(job, 'Complete')) return 'succeeded'
  if (managedElsewhere(job)) return 'external'
  if (job.spec?.suspend && !job.status?.active) return 'suspended'
  if (job.neverStarted) return 'stuck'
  return 'running'
}

/** The hook annotation (helm.sh/hook or argocd.argoproj.io/hook) and its value, if any. */
export function hookAnnotation(job: JobRecord): { key: string; value: string } | undefined {
  const annotations = job.metadata?.annotations ?? {}
  const key = HOOK_ANNOTATIONS.find((k) => annotations[k] !== undefined)
  return key === undefined ? undefined : { key, value: annotations[key] }
}

/** Another controller than Kubernetes' Job controller runs the Job (spec.managedBy), if one does. */
export function managedElsewhere(job: JobRecord): string | undefined {
  const by = job.spec?.managedBy
  return by && by !== JOB_CONTROLLER ? by : undefined
}

/** Helm owns the Job for `release` in `namespace` (the annotations Helm 3 sets on every object). */
export function belongsToRelease(job: JobRecord, release: string, namespace: string): boolean {
  const annotations = job.metadata?.annotations ?? {}
  return annotations[HELM_RELEASE_NAME] === release && (annotations[HELM_RELEASE_NAMESPACE] ?? namespace) === namespace
}

/** When the Job finished (its Complete/Failed condition, else status.completionTime). */
export function finishedAt(job: JobRecord): Date | undefined {
  const c = job.status?.conditions?.find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True')
  const at = c?.lastTransitionTime ?? job.status?.completionTime
  return at ? new Date(at) : undefined
}

/** Seconds since the Job was created, at `now`. */
export function ageSeconds(job: JobRecord, now: Date): number {
  const created = job.metadata?.creationTimestamp
  return created ? Math.max(0, (now.getTime() - new Date(created).getTime()) / 1000) : 0
}

/** The GitOps controller that tracks a Job, and the label or annotation that gives it away. */
export interface GitOpsOwner {
  /** The controller whose drift correction may re-create (and so re-run) a deleted Job. */
  tool: 'Argo CD' | 'Flux'
  /** The label or annotation found, as `label key=value` or `annotation key=value`. */
  marker: string
}

const ARGOCD_INSTANCE_LABEL = 'argocd.argoproj.io/instance'
const ARGOCD_TRACKING_ANNOTATION = 'argocd.argoproj.io/tracking-id'
const FLUX_LABEL_PREFIXES = ['helm.toolkit.fluxcd.io/', 'kustomize.toolkit.fluxcd.io/']

/**
 * Argo CD (label-tracking `argocd.argoproj.io/instance` or annotation-tracking
 * `argocd.argoproj.io/tracking-id`) or Flux (the `helm.toolkit.fluxcd.io/*` and
 * `kustomize.toolkit.fluxcd.io/*` labels its controllers set) tracks the Job. Deleting such a
 * Job still unblocks the upgrade, but the controller sees the missing object as drift and may
 * re-create it, which runs the old migration again. Empty values do not count.
 */
export function gitOpsOwner(job: JobRecord): GitOpsOwner | undefined {
  const labels = job.metadata?.labels ?? {}
  const annotations = job.metadata?.annotations ?? {}
  if (annotations[ARGOCD_TRACKING_ANNOTATION]) {
    return { tool: 'Argo CD', marker: `annotation ${ARGOCD_TRACKING_ANNOTATION}=${annotations[ARGOCD_TRACKING_ANNOTATION]}` }
  }
  if (labels[ARGOCD_INSTANCE_LABEL]) return { tool: 'Argo CD', marker: `label ${ARGOCD_INSTANCE_LABEL}=${labels[ARGOCD_INSTANCE_LABEL]}` }
  const flux = Object.keys(labels)
    .sort()
    .find((key) => labels[key] && FLUX_LABEL_PREFIXES.some((prefix) => key.startsWith(prefix)))
  return flux === undefined ? undefined : { tool: 'Flux', marker: `label ${flux}=${labels[flux]}` }
}
