// Why a Job failed, in words (src/observe/job-failure.ts): the Job controller's reason and what its
// pods show, as kubelets and the Job controller write them.
import type { V1ContainerStatus, V1JobCondition, V1Pod } from '@kubernetes/client-node'
import { toJobRecord } from '../../src/kube/job-record.ts'
import { failureReason } from '../../src/observe/job-failure.ts'
import { newJob } from './jobs.ts'

const failedJob = (reason?: string) => {
  const job = newJob({ name: 'app-migrate', status: 'failed' })
  const condition: V1JobCondition = { type: 'Failed', status: 'True', reason, lastTransitionTime: new Date() }
  job.status = { failed: 1, conditions: [condition] }
  return toJobRecord(job)
}
const container = (state: V1ContainerStatus['state'], extra: Partial<V1ContainerStatus> = {}): V1ContainerStatus => ({
  name: 'main',
  image: 'registry.example/app:1.2.3',
  imageID: '',
  ready: false,
  restartCount: 0,
  state,
  ...extra
})
const pod = (name: string, statuses: V1ContainerStatus[], status: Partial<V1Pod['status']> = {}, age = 0): V1Pod => ({
  metadata: { name, creationTimestamp: new Date(Date.parse('2026-06-01T12:00:00Z') - age * 1000) },
  spec: { containers: [{ name: 'main', image: 'registry.example/app:1.2.3' }] },
  status: { phase: 'Failed', containerStatuses: statuses, ...status }
})

test.each<[string, string | undefined, V1Pod[], string | undefined]>([
  [
    'OOMKilled, the backoff limit reached',
    'BackoffLimitExceeded',
    [pod('p1', [container({ terminated: { exitCode: 137, reason: 'OOMKilled' } })])],
    'BackoffLimitExceeded (its pods failed more often than backoffLimit allows); pod p1: container main OOMKilled (exit code 137)'
  ],
  [
    'exit code N (reason Error is no news)',
    'BackoffLimitExceeded',
    [pod('p1', [container({ terminated: { exitCode: 3, reason: 'Error' } })])],
    'BackoffLimitExceeded (its pods failed more often than backoffLimit allows); pod p1: container main exit code 3'
  ],
  [
    'the newest pod speaks: an older one failed otherwise',
    undefined,
    [pod('old', [container({ terminated: { exitCode: 1 } })], {}, 60), pod('new', [container({ terminated: { exitCode: 2 } })])],
    'pod new: container main exit code 2'
  ],
  [
    'DeadlineExceeded, the pod killed',
    'DeadlineExceeded',
    [pod('p1', [container({ terminated: { exitCode: 143, reason: 'Error', signal: 15 } })])],
    'DeadlineExceeded (it ran longer than activeDeadlineSeconds); pod p1: container main exit code 143, signal 15'
  ],
  ['DeadlineExceeded, its pods already gone', 'DeadlineExceeded', [], 'DeadlineExceeded (it ran longer than activeDeadlineSeconds)'],
  [
    'ImagePullBackOff, with the image',
    'BackoffLimitExceeded',
    [pod('p1', [container({ waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image' } })], { phase: 'Pending' })],
    'BackoffLimitExceeded (its pods failed more often than backoffLimit allows); pod p1: container main ImagePullBackOff (registry.example/app:1.2.3)'
  ],
  [
    'a pod evicted by the kubelet',
    undefined,
    [pod('p1', [container({ terminated: { exitCode: 0 } })], { reason: 'Evicted', message: 'The node was low on resource: memory.' })],
    'pod p1: Evicted (The node was low on resource: memory.)'
  ],
  [
    'a restart that failed before the one now running',
    undefined,
    [pod('p1', [container({ running: {} }, { lastState: { terminated: { exitCode: 1, reason: 'Error' } } })], { phase: 'Running' })],
    'pod p1: container main exit code 1'
  ],
  ['a reason this table does not know is given as it is', 'SomethingNew', [], 'SomethingNew']
])('%s', (_name, reason, pods, expected) => {
  expect(failureReason(failedJob(reason), pods)).toBe(expected)
})

test('a Job that did not fail, with pods that show nothing: no reason', () => {
  expect(
    failureReason(toJobRecord(newJob({ name: 'app-migrate' })), [pod('p1', [container({ terminated: { exitCode: 0 } })], { phase: 'Succeeded' })])
  ).toBeUndefined()
})
