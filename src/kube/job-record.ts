// What job-sweeper keeps of a Job once it is listed or watched: what the plan decides on and the
// executor acts on (name, uid, resourceVersion, status, times, the few annotations it reads),
// never the pod template or managedFields. 10,000 listed Jobs then fit in a few megabytes.
import type { V1Job, V1JobCondition, V1PodTemplateSpec, V1JobSpec, V1JobStatus, V1ObjectMeta } from '@kubernetes/client-node'

/** The kept fields of a Job. A full V1Job is one too, so planner tests can pass either. */
export interface JobRecord {
  metadata?: Pick<
    V1ObjectMeta,
    'name' | 'namespace' | 'uid' | 'resourceVersion' | 'creationTimestamp' | 'deletionTimestamp' | 'labels' | 'annotations' | 'finalizers' | 'ownerReferences'
  >
  spec?: Pick<V1JobSpec, 'suspend' | 'managedBy' | 'ttlSecondsAfterFinished'>
  status?: Pick<V1JobStatus, 'conditions' | 'active' | 'ready' | 'terminating' | 'startTime' | 'completionTime' | 'succeeded' | 'failed'>
  /** Managers that server-side applied spec.ttlSecondsAfterFinished (Helm 4 installs charts so), from managedFields. */
  ttlAppliedBy?: string[]
  /** The job-sweeper.io/ labels and annotations another manager server-side applies (the chart sets them). */
  appliedMetadata?: AppliedMetadata
  /**
   * `never started: <why>` when none of its pods ever ran a main container for stuck-after
   * (observe sets it from the pods: src/observe/pod-start.ts); only the verdict is kept, not the pods.
   */
  neverStarted?: string
  /**
   * Why a failed Job failed, in words (the Job controller's reason, what its pods show: OOMKilled
   * with the exit code, an exit code, an eviction), as observe reads it from its pods
   * (src/observe/job-failure.ts); post's row and error line say it.
   */
  failedBecause?: string
  /** Its pods' containers restart in place (restartPolicy OnFailure, or a native sidecar): the keeper saves each run as it ends (plan/restarts.ts). */
  restartsInPlace?: boolean
}

/** Label and annotation keys (job-sweeper.io/ ones only) that another manager's server-side apply owns. */
export interface AppliedMetadata {
  labels: string[]
  annotations: string[]
}

/** Annotation prefixes anything in job-sweeper reads; every other annotation is dropped. */
const KEPT_ANNOTATION_PREFIXES = ['meta.helm.sh/', 'helm.sh/', 'argocd.argoproj.io/', 'job-sweeper.io/']

export const FIELD_MANAGER = 'job-sweeper'

function keptAnnotations(annotations: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!annotations) return undefined
  const kept = Object.entries(annotations).filter(([k]) => KEPT_ANNOTATION_PREFIXES.some((p) => k.startsWith(p)))
  return kept.length > 0 ? Object.fromEntries(kept) : undefined
}

// A watch event's object is plain JSON (timestamps as strings); a list's is deserialized (Dates).
const date = (value: Date | string | undefined): Date | undefined => (value === undefined ? undefined : new Date(value))

function keptConditions(conditions: V1JobCondition[] | undefined): V1JobCondition[] | undefined {
  // Only True conditions decide anything; their messages can be long and are not read.
  const kept = conditions
    ?.filter((c) => c.status === 'True')
    .map(({ type, status, reason, lastTransitionTime }) => ({ type, status, reason, lastTransitionTime: date(lastTransitionTime) }))
  return kept && kept.length > 0 ? kept : undefined
}

type FieldSet = Record<string, unknown>

/** The server-side apply entries of managers other than job-sweeper (Update owners never conflict). */
function othersApplies(job: V1Job): { manager: string; fields: FieldSet }[] {
  return (job.metadata?.managedFields ?? [])
    .filter((m) => m.manager !== FIELD_MANAGER && m.operation === 'Apply' && !m.subresource)
    .map((m) => ({ manager: m.manager ?? 'unknown', fields: (m.fieldsV1 ?? {}) as FieldSet }))
}

const child = (set: FieldSet | undefined, key: string): FieldSet | undefined => set?.[key] as FieldSet | undefined

/**
 * The managers (not job-sweeper) that own spec.ttlSecondsAfterFinished through server-side apply.
 * A later apply of theirs conflicts with any other manager that changed the field; an Update
 * (client-side apply, Helm 3, kubectl edit) owner does not.
 */
function ttlAppliedByOf(job: V1Job): string[] | undefined {
  const owners = othersApplies(job)
    .filter((a) => child(child(a.fields, 'f:spec'), 'f:ttlSecondsAfterFinished') !== undefined)
    .map((a) => a.manager)
  return owners.length > 0 ? [...new Set(owners)] : undefined
}

/** The job-sweeper.io/ label and annotation keys that other managers server-side apply, if any. */
function appliedMetadataOf(job: V1Job): AppliedMetadata | undefined {
  const keys = (field: string): string[] => {
    const found = othersApplies(job).flatMap((a) => Object.keys(child(child(a.fields, 'f:metadata'), field) ?? {}))
    return [...new Set(found.filter((k) => k.startsWith('f:job-sweeper.io/')).map((k) => k.slice(2)))].sort()
  }
  const applied = { labels: keys('f:labels'), annotations: keys('f:annotations') }
  return applied.labels.length + applied.annotations.length > 0 ? applied : undefined
}

/** The pod template restarts containers in place: restartPolicy OnFailure, or a native sidecar (an init container of restartPolicy Always). */
function restartsInPlace(template: V1PodTemplateSpec | undefined): boolean {
  const spec = template?.spec
  return spec?.restartPolicy === 'OnFailure' || (spec?.initContainers ?? []).some((c) => c.restartPolicy === 'Always')
}

/** The JobRecord of a full Job from the API. */
export function toJobRecord(job: V1Job): JobRecord {
  const m = job.metadata ?? {}
  return {
    metadata: {
      name: m.name,
      namespace: m.namespace,
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      creationTimestamp: date(m.creationTimestamp),
      deletionTimestamp: date(m.deletionTimestamp),
      labels: m.labels,
      annotations: keptAnnotations(m.annotations),
      finalizers: m.finalizers,
      ownerReferences: m.ownerReferences?.map(({ apiVersion, kind, name, uid, controller }) => ({ apiVersion, kind, name, uid, controller }))
    },
    spec: { suspend: job.spec?.suspend, managedBy: job.spec?.managedBy, ttlSecondsAfterFinished: job.spec?.ttlSecondsAfterFinished },
    status: {
      conditions: keptConditions(job.status?.conditions),
      active: job.status?.active,
      ready: job.status?.ready,
      terminating: job.status?.terminating,
      startTime: date(job.status?.startTime),
      completionTime: date(job.status?.completionTime),
      succeeded: job.status?.succeeded,
      failed: job.status?.failed
    },
    ttlAppliedBy: ttlAppliedByOf(job),
    appliedMetadata: appliedMetadataOf(job),
    ...(restartsInPlace(job.spec?.template) ? { restartsInPlace: true } : {})
  }
}
