// newJob({...}): V1Job objects for the pure planner's tables.
import type { V1Job } from '@kubernetes/client-node'

export const NOW = new Date('2026-06-01T12:00:00Z')
const ago = (seconds: number): Date => new Date(NOW.getTime() - seconds * 1000)

export interface JobShape {
  name: string
  status?: 'running' | 'succeeded' | 'failed' | 'terminating'
  /** Created this many seconds before NOW. */
  age?: number
  /** Finished this many seconds before NOW. */
  finishedAgo?: number
  release?: string
  releaseNamespace?: string
  hook?: string
  argoHook?: string
  annotations?: Record<string, string>
  labels?: Record<string, string>
  /** The CronJob that owns it (an ownerReference of kind CronJob). */
  cronJob?: string
  finalizers?: string[]
}

export function newJob(shape: JobShape): V1Job {
  const annotations: Record<string, string> = { ...shape.annotations }
  if (shape.release) {
    annotations['meta.helm.sh/release-name'] = shape.release
    annotations['meta.helm.sh/release-namespace'] = shape.releaseNamespace ?? 'prod'
  }
  if (shape.hook) annotations['helm.sh/hook'] = shape.hook
  if (shape.argoHook) annotations['argocd.argoproj.io/hook'] = shape.argoHook
  const status = shape.status ?? 'succeeded'
  const finished = ago(shape.finishedAgo ?? 0)
  const conditionType = status === 'failed' ? 'Failed' : status === 'succeeded' ? 'Complete' : undefined
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: shape.name,
      namespace: 'prod',
      uid: `uid-${shape.name}`,
      creationTimestamp: ago(shape.age ?? 600),
      annotations,
      labels: shape.labels,
      ownerReferences: shape.cronJob
        ? [{ apiVersion: 'batch/v1', kind: 'CronJob', name: shape.cronJob, uid: `uid-${shape.cronJob}`, controller: true }]
        : undefined,
      finalizers: shape.finalizers,
      deletionTimestamp: status === 'terminating' ? ago(1) : undefined
    },
    spec: { template: { spec: { containers: [{ name: 'main', image: 'x' }] } } },
    status: conditionType ? { conditions: [{ type: conditionType, status: 'True', lastTransitionTime: finished }] } : { active: 1 }
  }
}
