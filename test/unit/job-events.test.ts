// What Events add to why a Job failed or never started (src/observe/job-events.ts), and the
// executor reading them (src/execute/live.ts, start-poll.ts) over the fake client: Events as the
// kubelet, the scheduler and the Job controller write them; none shown that a status already
// says (each such case beside one that is shown); credentials that may not list Events.
import type { CoreV1Event, V1ContainerStatus, V1Pod } from '@kubernetes/client-node'
import { eventWords, explainingUids } from '../../src/observe/job-events.ts'
import { executorOf } from '../fake/executor.ts'
import { apiError, fail } from '../fake/jobs-client.ts'
import { newJob } from './jobs.ts'

const T0 = Date.parse('2026-06-01T12:00:00Z')
let names = 0
/** An Event as its component records it: about `object`, `secondsAgo` last seen. */
function event(object: { kind: 'Pod' | 'Job'; name: string; uid?: string }, reason: string, message: string, secondsAgo = 0, type = 'Warning'): CoreV1Event {
  const component = reason === 'FailedScheduling' ? 'default-scheduler' : object.kind === 'Job' ? 'job-controller' : 'kubelet'
  return {
    metadata: { name: `${object.name}.${++names}`, namespace: 'prod' },
    involvedObject: {
      apiVersion: object.kind === 'Job' ? 'batch/v1' : 'v1',
      kind: object.kind,
      name: object.name,
      namespace: 'prod',
      uid: object.uid ?? `uid-${object.name}`
    },
    reason,
    message,
    type,
    source: { component },
    count: 1,
    firstTimestamp: new Date(T0 - secondsAgo * 1000),
    lastTimestamp: new Date(T0 - secondsAgo * 1000)
  }
}
const pod = { kind: 'Pod' as const, name: 'app-migrate-x1' }
const job = { kind: 'Job' as const, name: 'app-migrate' }
// containerd's words, longer than a reason quotes.
const PULL_FAILED =
  'Failed to pull image "registry.example/app:1.2.3": rpc error: code = NotFound desc = failed to pull and unpack image "registry.example/app:1.2.3": failed to resolve reference "registry.example/app:1.2.3": registry.example/app:1.2.3: not found'
const SCHEDULER =
  "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."

test.each<[string, CoreV1Event[], string, string | undefined]>([
  [
    'ImagePullBackOff: the pull’s error is shown, not the kubelet’s Events that repeat the status (BackOff, "Error: ErrImagePull")',
    [
      event(pod, 'Pulling', 'Pulling image "registry.example/app:1.2.3"', 30, 'Normal'),
      event(pod, 'Failed', PULL_FAILED, 29),
      event(pod, 'Failed', 'Error: ErrImagePull', 29),
      event(pod, 'BackOff', 'Back-off pulling image "registry.example/app:1.2.3"', 5),
      event(pod, 'Failed', 'Error: ImagePullBackOff', 5)
    ],
    'never started: ImagePullBackOff (registry.example/app:1.2.3)',
    `Events: pod app-migrate-x1 Failed: ${PULL_FAILED.slice(0, 199)}…`
  ],
  ['FailedScheduling the status already says: not shown', [event(pod, 'FailedScheduling', SCHEDULER)], `never started: ${SCHEDULER.split('. ')[0]}`, undefined],
  [
    'FailedScheduling the status does not say (the positive control of the case above)',
    [event(pod, 'FailedScheduling', SCHEDULER)],
    'never started: Pending for 5m',
    `Events: pod app-migrate-x1 FailedScheduling: ${SCHEDULER}`
  ],
  [
    'BackoffLimitExceeded the condition says is not repeated; a FailedMount beside it is shown',
    [
      event(job, 'BackoffLimitExceeded', 'Job has reached the specified backoff limit', 0),
      event(pod, 'FailedMount', 'MountVolume.SetUp failed for volume "config" : configmap "app-config" not found', 60)
    ],
    'BackoffLimitExceeded (its pods failed more often than backoffLimit allows)',
    'Events: pod app-migrate-x1 FailedMount: MountVolume.SetUp failed for volume "config" : configmap "app-config" not found'
  ],
  [
    'DeadlineExceeded of the Job, with no status that says it: shown',
    [event(job, 'DeadlineExceeded', 'Job was active longer than specified deadline')],
    '',
    'Events: Job app-migrate DeadlineExceeded: Job was active longer than specified deadline'
  ],
  [
    'a quota that refuses every pod (FailedCreate on the Job), for a Job with no pod',
    [event(job, 'FailedCreate', 'Error creating: pods "app-migrate-x1" is forbidden: exceeded quota: compute, requested: cpu=2, used: cpu=8, limited: cpu=8')],
    'never started: no pod in 5m',
    'Events: Job app-migrate FailedCreate: Error creating: pods "app-migrate-x1" is forbidden: exceeded quota: compute, requested: cpu=2, used: cpu=8, limited: cpu=8'
  ],
  [
    'newest first, at most three, each repeat once, Evicted with its message',
    [
      event({ kind: 'Pod', name: 'p1' }, 'Evicted', 'The node was low on resource: memory.', 300),
      event({ kind: 'Pod', name: 'p2' }, 'FailedMount', 'MountVolume.SetUp failed for volume "a"', 200),
      event({ kind: 'Pod', name: 'p3' }, 'FailedMount', 'MountVolume.SetUp failed for volume "a"', 100),
      event({ kind: 'Pod', name: 'p4' }, 'FailedAttachVolume', 'AttachVolume.Attach failed for volume "pv-1"', 50),
      event({ kind: 'Pod', name: 'p5' }, 'FailedCreatePodSandBox', 'Failed to create pod sandbox: network not ready', 10)
    ],
    'exit code 1',
    'Events: pod p5 FailedCreatePodSandBox: Failed to create pod sandbox: network not ready; pod p4 FailedAttachVolume: AttachVolume.Attach failed for volume "pv-1"; pod p3 FailedMount: MountVolume.SetUp failed for volume "a"'
  ],
  [
    'Evicted the pod status already says: not shown',
    [event(pod, 'Evicted', 'The node was low on resource: memory.')],
    'pod app-migrate-x1: Evicted (The node was low on resource: memory.)',
    undefined
  ],
  [
    'Normal Events and reasons that explain nothing: none',
    [event(pod, 'Started', 'Started container main', 0, 'Normal'), event(pod, 'Unhealthy', 'Readiness probe failed')],
    '',
    undefined
  ]
])('%s', (_, events, said, expected) => {
  expect(eventWords(events, said)).toBe(expected)
})

test('the Events read: the Job’s, and its three newest pods’', () => {
  const at = (name: string, s: number): V1Pod => ({ metadata: { name, uid: `uid-${name}`, creationTimestamp: new Date(T0 - s * 1000) } })
  expect(explainingUids('uid-job', [at('a', 40), at('b', 10), at('c', 30), at('d', 20)])).toEqual(['uid-job', 'uid-b', 'uid-d', 'uid-c'])
})

// --- read by the executor ---

const preInputs = { release: 'app', 'harvest-logs': 'none', 'on-running': 'wait', 'wait-timeout': '10m' }
const migrate = newJob({ name: 'app-migrate', release: 'app', status: 'running' })
const failedMain: V1ContainerStatus = {
  name: 'main',
  image: 'x',
  imageID: '',
  ready: false,
  restartCount: 0,
  state: { terminated: { exitCode: 1, reason: 'Error' } }
}
const failedPod: V1Pod = {
  metadata: { name: 'app-migrate-x1', uid: 'uid-app-migrate-x1', creationTimestamp: new Date() },
  spec: { containers: [{ name: 'main', image: 'x' }] },
  status: { phase: 'Failed', containerStatuses: [failedMain] }
}

/** A pre run waiting on app-migrate, which fails after a minute with BackoffLimitExceeded; its pod failed to mount a volume. */
async function failingRun(script?: (ex: ReturnType<typeof executorOf>) => void) {
  const ex = executorOf(preInputs, [migrate])
  const uid = ex.client.job('prod', 'app-migrate')?.metadata?.uid ?? ''
  ex.client.addPod(migrate, failedPod)
  ex.client.addEvent(event({ kind: 'Job', name: 'app-migrate', uid }, 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'))
  ex.client.addEvent(event(pod, 'FailedMount', 'MountVolume.SetUp failed for volume "config" : configmap "app-config" not found'))
  script?.(ex)
  void ex.clock.sleep(60_000).then(() =>
    ex.client.update('prod', 'app-migrate', (job) => {
      job.status = { failed: 1, conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', lastTransitionTime: new Date(ex.clock.now()) }] }
    })
  )
  const result = await ex.execute()
  return { ex, result, uid }
}

const WITHOUT_EVENTS =
  'Job prod/app-migrate failed: BackoffLimitExceeded (its pods failed more often than backoffLimit allows); pod app-migrate-x1: container main exit code 1'

test('a waited Job that fails: its reason adds what the Events say and the statuses do not', async () => {
  const { ex, result, uid } = await failingRun()
  expect(result.errors).toEqual([])
  expect(ex.log).toContain(
    `${WITHOUT_EVENTS}; Events: pod app-migrate-x1 FailedMount: MountVolume.SetUp failed for volume "config" : configmap "app-config" not found`
  )
  expect(ex.client.callsOf('listWarningEvents')).toEqual([
    ['prod', uid],
    ['prod', 'uid-app-migrate-x1']
  ])
})

test('credentials that may not list Events (403): the reason comes without them, once said, no warning or error', async () => {
  const forbidden = apiError(
    403,
    'events is forbidden: User "system:serviceaccount:prod:deployer" cannot list resource "events" in API group "" in the namespace "prod"'
  )
  const { ex, result } = await failingRun((ex) => ex.client.every('listWarningEvents', fail(forbidden)))
  expect(result.errors).toEqual([])
  expect(result.warnings).toEqual([])
  expect(ex.log).toContain(WITHOUT_EVENTS)
  expect(ex.log.filter((l) => l.startsWith('failure reasons come without Events'))).toEqual([
    'failure reasons come without Events: events is forbidden: User "system:serviceaccount:prod:deployer" cannot list resource "events" in API group "" in the namespace "prod" (allow list on events to have them)'
  ])
})

test('a waited Job whose pod cannot pull its image: why it never started adds the registry’s answer from the kubelet’s Event', async () => {
  const ex = executorOf({ ...preInputs, 'stuck-after': '30s' }, [migrate])
  const waiting: V1ContainerStatus = {
    name: 'main',
    image: 'registry.example/app:1.2.3',
    imageID: '',
    ready: false,
    restartCount: 0,
    state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "registry.example/app:1.2.3"' } }
  }
  ex.client.addPod(migrate, {
    metadata: { name: 'app-migrate-x1', uid: 'uid-app-migrate-x1', creationTimestamp: new Date(ex.clock.now()) },
    spec: { containers: [{ name: 'main', image: 'registry.example/app:1.2.3' }] },
    status: { phase: 'Pending', containerStatuses: [waiting] }
  })
  ex.client.addEvent(event(pod, 'Failed', PULL_FAILED))
  ex.client.addEvent(event(pod, 'BackOff', 'Back-off pulling image "registry.example/app:1.2.3"'))
  const result = await ex.execute()
  expect(result.errors).toEqual([])
  const words = `never started: ImagePullBackOff (registry.example/app:1.2.3); Events: pod app-migrate-x1 Failed: ${PULL_FAILED.slice(0, 199)}…`
  expect(ex.log).toContain(`Job prod/app-migrate ${words}: no longer waited for`)
  expect(result.outcomes.find((o) => o.name === 'app-migrate')?.reason).toMatch(new RegExp(`^${words.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}; nothing ran`))
})
