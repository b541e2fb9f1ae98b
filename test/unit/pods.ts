// Pods of a Job as a kubelet (and the scheduler) write them, for the tables of the planner and
// of src/observe/pod-start.ts: statuses copied from what real clusters show.
import type { V1ContainerStatus, V1Pod, V1PodCondition } from '@kubernetes/client-node'
import { NOW } from './jobs.ts'

const ago = (seconds: number): Date => new Date(NOW.getTime() - seconds * 1000)
const IMAGE = 'registry.example/app:1.2.3'

export interface PodShape {
  /** Created this many seconds before NOW. */
  age: number
  phase?: 'Pending' | 'Running' | 'Succeeded' | 'Failed'
  conditions?: V1PodCondition[]
  init?: V1ContainerStatus[]
  main?: V1ContainerStatus[]
  name?: string
  /** Init containers that are native sidecars (restartPolicy Always). */
  sidecars?: string[]
}

export function newPod(shape: PodShape): V1Pod {
  return {
    metadata: {
      name: shape.name ?? `app-migrate-${shape.age}`,
      creationTimestamp: ago(shape.age),
      labels: { 'batch.kubernetes.io/controller-uid': 'uid-app-migrate' }
    },
    spec: {
      restartPolicy: 'OnFailure',
      initContainers: shape.init?.map((s) => ({
        name: s.name,
        image: 'busybox:1.36',
        ...(shape.sidecars?.includes(s.name) ? { restartPolicy: 'Always' } : {})
      })),
      containers: (shape.main ?? [{ name: 'migrate' } as V1ContainerStatus]).map((s) => ({ name: s.name, image: IMAGE }))
    },
    status: { phase: shape.phase ?? 'Pending', conditions: shape.conditions, initContainerStatuses: shape.init, containerStatuses: shape.main }
  }
}

/** The scheduler's verdict on a pod whose nodeSelector no node has (Kubernetes 1.37's words; 1.34 adds "no new claims to deallocate, "). */
export const SCHEDULER_137 =
  "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
export const SCHEDULER_134 =
  "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
export const unschedulable = (age: number, message = SCHEDULER_137): V1Pod =>
  newPod({
    age,
    conditions: [
      {
        type: 'PodScheduled',
        status: 'False',
        reason: 'Unschedulable',
        message
      }
    ]
  })

/** A main container the kubelet cannot start: waiting, with the reason and message it gives. */
export const waiting = (reason: string, message: string, extra: Partial<V1ContainerStatus> = {}): V1ContainerStatus => ({
  name: 'migrate',
  image: IMAGE,
  imageID: '',
  ready: false,
  started: false,
  restartCount: 0,
  state: { waiting: { reason, message } },
  ...extra
})

export const imagePullBackOff = (age: number): V1Pod =>
  newPod({ age, conditions: [{ type: 'PodScheduled', status: 'True' }], main: [waiting('ImagePullBackOff', `Back-off pulling image "${IMAGE}"`)] })

/** An init container in CrashLoopBackOff after `failures` failed runs, the main container waiting for it. */
export const initCrashLoop = (age: number, failures: number): V1Pod =>
  newPod({
    age,
    conditions: [
      { type: 'PodScheduled', status: 'True' },
      { type: 'Initialized', status: 'False', reason: 'ContainersNotInitialized', message: 'containers with incomplete status: [wait-for-db]' }
    ],
    init: [
      {
        name: 'wait-for-db',
        image: 'busybox:1.36',
        imageID: 'docker.io/library/busybox@sha256:0',
        ready: false,
        restartCount: failures - 1,
        state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 40s restarting failed container=wait-for-db pod=app-migrate-x' } },
        lastState: { terminated: { exitCode: 1, reason: 'Error', startedAt: ago(30), finishedAt: ago(29) } }
      }
    ],
    main: [waiting('PodInitializing', '')]
  })

/** A main container that runs. */
export const running = (age: number): V1Pod =>
  newPod({
    age,
    phase: 'Running',
    main: [{ name: 'migrate', image: IMAGE, imageID: 'x', ready: true, started: true, restartCount: 0, state: { running: { startedAt: ago(age - 5) } } }]
  })
