// Whether a Job ever started, over pods as a kubelet writes them (src/observe/pod-start.ts).
import type { V1Pod } from '@kubernetes/client-node'
import { neverStarted } from '../../src/observe/pod-start.ts'
import { NOW, newJob } from './jobs.ts'
import { SCHEDULER_134, imagePullBackOff, initCrashLoop, newPod, running, unschedulable, waiting } from './pods.ts'

const STUCK_AFTER = 60
const job = newJob({ name: 'app-migrate', status: 'running', age: 600 })
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
    'ErrImagePull, 2m old',
    [newPod({ age: 120, main: [waiting('ErrImagePull', 'rpc error: code = NotFound desc = failed to pull and unpack image')] })],
    'never started: ErrImagePull (registry.example/app:1.2.3)'
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
    'restartPolicy Never: three failed pods whose init container exited 2, and a new one initializing',
    [
      ...[400, 300, 200].map((age) =>
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
      ),
      newPod({
        age: 5,
        init: [{ name: 'wait-for-db', image: 'busybox', imageID: 'x', ready: false, restartCount: 0, state: { running: { startedAt: NOW } } }],
        main: [waiting('PodInitializing', '')]
      })
    ],
    'never started: init container wait-for-db failed 3 times (exit code 2)'
  ],
  [
    'ContainerCreating for 3m (a volume that cannot be mounted shows nothing else)',
    [newPod({ age: 180, conditions: [{ type: 'PodScheduled', status: 'True' }], main: [waiting('ContainerCreating', '')] })],
    'never started: Pending for 3m (ContainerCreating)'
  ],
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
  ]
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
