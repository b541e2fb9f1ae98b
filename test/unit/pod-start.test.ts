// Whether a Job ever started, over pods as a kubelet writes them (src/observe/pod-start.ts).
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node'
import { neverStarted } from '../../src/observe/pod-start.ts'
import { NOW, newJob } from './jobs.ts'
import { SCHEDULER_134, imagePullBackOff, initCrashLoop, newPod, running, unschedulable, waiting } from './pods.ts'

const STUCK_AFTER = 60
const job = newJob({ name: 'app-migrate', status: 'running', age: 600 })
const SCHEDULED = { type: 'PodScheduled', status: 'True' }

/** A pod of a restartPolicy Never Job whose init container wait-for-db exited 2: the pod failed. */
const neverFailed = (age: number): V1Pod =>
  newPod({
    age,
    name: `app-migrate-${age}`,
    phase: 'Failed',
    init: [
      {
        name: 'wait-for-db',
        image: 'busybox',
        imageID: 'x',
        ready: false,
        restartCount: 0,
        state: { terminated: { exitCode: 2, reason: 'Error', startedAt: NOW } }
      }
    ],
    main: [waiting('PodInitializing', '')]
  })

/** A scheduled pod with a native sidecar mesh-proxy in `sidecarState`, and `main`. */
const withSidecar = (age: number, sidecarState: 'running', main: V1ContainerStatus[]): V1Pod =>
  newPod({
    age,
    phase: 'Pending',
    conditions: [SCHEDULED],
    sidecars: ['mesh-proxy'],
    init: [{ name: 'mesh-proxy', image: 'busybox', imageID: 'x', ready: true, started: true, restartCount: 0, state: { [sidecarState]: { startedAt: NOW } } }],
    main
  })

const verdict = (pods: V1Pod[], j = job): string | undefined => neverStarted(j, pods, NOW, STUCK_AFTER)

test.each([
  [
    'unschedulable (a nodeSelector no node has), 2m old',
    [unschedulable(120)],
    "never started: 0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector"
  ],
  [
    'unschedulable, in Kubernetes 1.34’s words (the post-filter clause names DRA claims first): the first sentence only',
    [unschedulable(120, SCHEDULER_134)],
    "never started: 0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector"
  ],
  [
    'unschedulable for two reasons, a taint key with dots: both reasons, whole',
    [
      unschedulable(
        120,
        '0/3 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }, 2 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.'
      )
    ],
    'never started: 0/3 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }, 2 Insufficient cpu'
  ],
  ['ImagePullBackOff, 2m old: the image', [imagePullBackOff(120)], 'never started: ImagePullBackOff (registry.example/app:1.2.3)'],
  [
    'ErrImagePull, 2m old: the image and the registry’s answer, the end of containerd’s error (a 1.37 kubelet’s words)',
    [
      newPod({
        age: 120,
        main: [
          waiting(
            'ErrImagePull',
            'rpc error: code = NotFound desc = failed to pull and unpack image "registry.example/app:1.2.3": failed to resolve image: registry.example/app:1.2.3: not found'
          )
        ]
      })
    ],
    'never started: ErrImagePull (registry.example/app:1.2.3: not found)'
  ],
  [
    'ImagePullBackOff with the last pull’s error: its answer (credentials the registry wants)',
    [
      newPod({
        age: 120,
        main: [
          waiting(
            'ImagePullBackOff',
            'Back-off pulling image "registry.example/app:1.2.3": ErrImagePull: failed to pull and unpack image "registry.example/app:1.2.3": failed to resolve image: pull access denied, repository does not exist or may require authorization: authorization failed: no basic auth credentials'
          )
        ]
      })
    ],
    'never started: ImagePullBackOff (registry.example/app:1.2.3: no basic auth credentials)'
  ],
  [
    'ImagePullBackOff whose message names no answer: the image alone',
    [newPod({ age: 120, main: [waiting('ImagePullBackOff', 'Back-off pulling image "registry.example/app:1.2.3"')] })],
    'never started: ImagePullBackOff (registry.example/app:1.2.3)'
  ],
  [
    'CreateContainerConfigError (a missing Secret): the kubelet’s message',
    [newPod({ age: 120, main: [waiting('CreateContainerConfigError', 'secret "db-credentials" not found')] })],
    'never started: CreateContainerConfigError (secret "db-credentials" not found)'
  ],
  [
    'init container in CrashLoopBackOff, restartCount 3 (OnFailure)',
    [initCrashLoop(300, 4)],
    'never started: init container wait-for-db failed 4 times (exit code 1)'
  ],
  [
    'restartPolicy Never: three failed pods whose init container exited 2, the newest just failed (no new pod yet)',
    [400, 300, 200].map((age) => neverFailed(age)),
    'never started: init container wait-for-db failed 3 times (exit code 2)'
  ],
  [
    'a native sidecar runs (restartPolicy Always, as a mesh injects), the main container cannot pull its image',
    [withSidecar(180, 'running', [waiting('ImagePullBackOff', 'Back-off pulling image')])],
    'never started: ImagePullBackOff (registry.example/app:1.2.3)'
  ],
  [
    'a native sidecar cannot pull its image',
    [
      newPod({
        age: 180,
        conditions: [SCHEDULED],
        sidecars: ['mesh-proxy'],
        init: [{ ...waiting('ImagePullBackOff', ''), name: 'mesh-proxy' }],
        main: [waiting('PodInitializing', '')]
      })
    ],
    'never started: sidecar container mesh-proxy: ImagePullBackOff (registry.example/app:1.2.3)'
  ],
  ['Pending for 3m on no node, with no verdict of the scheduler (none runs, or a scheduling gate)', [newPod({ age: 180 })], 'never started: Pending for 3m'],
  [
    'a pod that ended before its container started (the kubelet’s ContainerStatusUnknown, no startedAt)',
    [
      newPod({
        age: 120,
        phase: 'Failed',
        main: [
          {
            ...waiting('x', ''),
            state: {
              terminated: { exitCode: 137, reason: 'ContainerStatusUnknown', message: 'The container could not be located when the pod was terminated' }
            }
          }
        ]
      })
    ],
    'never started: pod app-migrate-120 failed'
  ]
])('%s → stuck', (_, pods, reason) => {
  expect(verdict(pods)).toContain(reason)
})

test.each([
  ['unschedulable, but only 10s old (the autoscaler may be adding a node)', [unschedulable(10)]],
  ['ImagePullBackOff, 59s old', [imagePullBackOff(59)]],
  ['its main container runs', [running(300)]],
  ['its main container completed', [newPod({ age: 300, phase: 'Succeeded' })]],
  [
    'its main container ran once and now waits in CrashLoopBackOff (restartCount 2)',
    [
      newPod({
        age: 300,
        phase: 'Running',
        main: [waiting('CrashLoopBackOff', 'back-off', { restartCount: 2, lastState: { terminated: { exitCode: 1, startedAt: NOW } } })]
      })
    ]
  ],
  ['one pod never started, but an earlier one ran', [running(400), imagePullBackOff(120)]],
  [
    'its init container runs, and has never failed (it may wait for a database)',
    [
      newPod({
        age: 300,
        init: [{ name: 'wait-for-db', image: 'busybox', imageID: 'x', ready: false, restartCount: 0, state: { running: { startedAt: NOW } } }],
        main: [waiting('PodInitializing', '')]
      })
    ]
  ],
  [
    'ContainerCreating for 3m on a node (an image being pulled, a volume being attached): progress, bounded by the wait’s timeout',
    [newPod({ age: 180, conditions: [SCHEDULED], main: [waiting('ContainerCreating', '')] })]
  ],
  [
    'restartPolicy Never: three failed pods whose init container exited 2, and a new one whose init container runs again',
    [
      ...[400, 300, 200].map((age) => neverFailed(age)),
      newPod({
        age: 5,
        init: [{ name: 'wait-for-db', image: 'busybox', imageID: 'x', ready: false, restartCount: 0, state: { running: { startedAt: NOW } } }],
        main: [waiting('PodInitializing', '')]
      })
    ]
  ],
  [
    'its init container failed once and runs again (a wait-for-db retrying, restartPolicy OnFailure)',
    [
      newPod({
        age: 300,
        conditions: [SCHEDULED],
        init: [
          {
            name: 'wait-for-db',
            image: 'busybox',
            imageID: 'x',
            ready: false,
            restartCount: 1,
            state: { running: { startedAt: NOW } },
            lastState: { terminated: { exitCode: 1, reason: 'Error', startedAt: NOW } }
          }
        ],
        main: [waiting('PodInitializing', '')]
      })
    ]
  ],
  ['a native sidecar runs, the main container is being created (its image pulled)', [withSidecar(180, 'running', [waiting('ContainerCreating', '')])]]
])('%s → not stuck', (_, pods) => {
  expect(verdict(pods)).toBeUndefined()
})

test('a pod of it succeeded (gone since: the Job counts it), the next cannot pull its image → not stuck', () => {
  expect(verdict([imagePullBackOff(120)], { ...job, status: { succeeded: 1, active: 1 } })).toBeUndefined()
  expect(verdict([imagePullBackOff(120)], { ...job, status: { failed: 1, active: 1 } })).toContain('ImagePullBackOff') // failures prove nothing ran
})

describe('a Job with no pod at all', () => {
  test('3m after it started, having counted none → stuck, saying no pod was made', () => {
    expect(verdict([], { ...newJob({ name: 'app-migrate', status: 'running', age: 180 }), status: {} })).toMatch(
      /^never started: no pod in 3m \(the Job's events say why/
    )
  })
  test('30s old → not yet', () => {
    expect(verdict([], { ...newJob({ name: 'app-migrate', status: 'running', age: 30 }), status: {} })).toBeUndefined()
  })
  test('pods counted active, failed or succeeded (gone since, or not yet listed) → not stuck: no pod is no proof', () => {
    for (const status of [{ active: 1 }, { failed: 1 }, { succeeded: 1 }]) expect(verdict([], { ...job, status })).toBeUndefined()
  })
})
