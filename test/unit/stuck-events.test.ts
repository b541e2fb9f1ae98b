// Where a pod's Events change whether its Job is stuck (src/observe/stuck-events.ts), over the fake
// client: a pod no node takes now, while the cluster autoscaler adds one, is on its way, not stuck
// (the autoscaler's Events as it writes them; it does not run in the test cluster); a pod whose
// containers are being created is stuck when its volume's Secret or ConfigMap does not exist (the
// kubelet's FailedMount, as the real node writes it: test/real-node.test.ts).
import type { CoreV1Event, V1Pod } from '@kubernetes/client-node'
import { missingVolumeSource, scaleUpComing, stuckReadingEvents, SCALE_UP_BELIEVED_SECONDS } from '../../src/observe/stuck-events.ts'
import { FakeClock } from '../fake/clock.ts'
import { apiError, fail, FakeJobsClient } from '../fake/jobs-client.ts'
import { NOW, newJob } from './jobs.ts'
import { imagePullBackOff, newPod, unschedulable, waiting } from './pods.ts'

const STUCK_AFTER = 60
const job = newJob({ name: 'app-migrate', status: 'running', age: 600 })
const pod = { ...unschedulable(180), metadata: { ...unschedulable(180).metadata, uid: 'pod-1', namespace: 'prod' } }

/** An Event about the pod, `secondsAgo` before NOW. */
const event = (reason: string, secondsAgo: number, type = 'Normal'): CoreV1Event => ({
  metadata: { name: `${reason}-${secondsAgo}`, namespace: 'prod' },
  involvedObject: { kind: 'Pod', name: pod.metadata?.name, uid: 'pod-1', namespace: 'prod' },
  reason,
  type,
  message:
    reason === 'TriggeredScaleUp'
      ? 'pod triggered scale-up: [{pool-a 0->1 (max: 3)}]'
      : "pod didn't trigger scale-up: 1 node(s) didn't match Pod's node affinity/selector",
  lastTimestamp: new Date(NOW.getTime() - secondsAgo * 1000)
})

describe('scaleUpComing', () => {
  test.each([
    ['TriggeredScaleUp 40s ago', [event('TriggeredScaleUp', 40)], 'a node is being added for it (TriggeredScaleUp 40s ago)'],
    ["Karpenter's Nominated 10s ago", [event('Nominated', 10)], 'a node is being added for it (Nominated 10s ago)'],
    ['NotTriggerScaleUp after an earlier TriggeredScaleUp', [event('TriggeredScaleUp', 100), event('NotTriggerScaleUp', 20)], undefined],
    [
      'TriggeredScaleUp after an earlier NotTriggerScaleUp',
      [event('NotTriggerScaleUp', 100), event('TriggeredScaleUp', 20)],
      'a node is being added for it (TriggeredScaleUp 20s ago)'
    ],
    ['a TriggeredScaleUp older than the autoscaler waits for a node', [event('TriggeredScaleUp', SCALE_UP_BELIEVED_SECONDS + 1)], undefined],
    ["only the scheduler's FailedScheduling", [event('FailedScheduling', 5, 'Warning')], undefined],
    ['no Event', [], undefined]
  ])('%s', (_, events, expected) => {
    expect(scaleUpComing(events, NOW)).toBe(expected)
  })
})

describe('stuckReadingEvents', () => {
  const client = (events: CoreV1Event[]): FakeJobsClient => {
    const c = new FakeJobsClient(new FakeClock())
    for (const e of events) c.addEvent(e)
    return c
  }

  test('unschedulable for 3m while the autoscaler adds a node → not stuck', async () => {
    expect(await stuckReadingEvents(client([event('TriggeredScaleUp', 90)]), job, [pod], NOW, STUCK_AFTER)).toBeUndefined()
  })

  test('unschedulable for 3m, and the autoscaler said no node group can take it → stuck (positive control)', async () => {
    expect(await stuckReadingEvents(client([event('NotTriggerScaleUp', 90)]), job, [pod], NOW, STUCK_AFTER)).toContain('never started: 0/1 nodes are available')
  })

  test('stuck for another reason (ImagePullBackOff): the Events are not read, whatever they say', async () => {
    const c = client([event('TriggeredScaleUp', 90)])
    expect(await stuckReadingEvents(c, job, [imagePullBackOff(120)], NOW, STUCK_AFTER)).toContain('ImagePullBackOff')
    expect(c.callsOf('listEventsOf')).toEqual([])
  })

  test('Events that cannot be read (403): the verdict stands', async () => {
    const c = client([event('TriggeredScaleUp', 90)]).every('listEventsOf', fail(apiError(403, 'events is forbidden')))
    expect(await stuckReadingEvents(c, job, [pod], NOW, STUCK_AFTER)).toContain('never started: 0/1 nodes are available')
  })
})

describe('a volume whose Secret or ConfigMap does not exist', () => {
  const creating = (age: number): V1Pod => {
    const p = newPod({ age, conditions: [{ type: 'PodScheduled', status: 'True' }], main: [waiting('ContainerCreating', '')] })
    return { ...p, metadata: { ...p.metadata, uid: 'pod-1', namespace: 'prod' }, spec: { containers: [], ...p.spec, nodeName: 'node-a' } }
  }
  const mount = (message: string, secondsAgo: number): CoreV1Event => ({
    ...event('FailedMount', secondsAgo, 'Warning'),
    message
  })
  // The real kubelet's words (test/real-node.test.ts saw the first).
  const missingSecret = 'MountVolume.SetUp failed for volume "db-ca" : secret "db-ca" not found'
  const missingConfigMap = 'MountVolume.SetUp failed for volume "config" : configmap "app-config" not found'
  const attaching = 'Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[data]: timed out waiting for the condition'

  test.each([
    ['a missing Secret', [mount(missingSecret, 10)], 'volume db-ca: secret "db-ca" not found (FailedMount)'],
    ['a missing ConfigMap', [mount(missingConfigMap, 10)], 'volume config: configmap "app-config" not found (FailedMount)'],
    ['an attach that times out (it may yet complete)', [mount(attaching, 10)], undefined],
    ['the newest FailedMount is not about a missing source', [mount(missingSecret, 100), mount(attaching, 10)], undefined],
    ['no FailedMount', [event('Pulling', 5)], undefined]
  ])('%s', (_, events, expected) => {
    expect(missingVolumeSource(events)).toBe(expected)
  })

  const client = (events: CoreV1Event[]): FakeJobsClient => {
    const c = new FakeJobsClient(new FakeClock())
    for (const e of events) c.addEvent(e)
    return c
  }

  test('ContainerCreating for 3m with FailedMount for a missing Secret → stuck, saying which', async () => {
    expect(await stuckReadingEvents(client([mount(missingSecret, 30)]), job, [creating(180)], NOW, STUCK_AFTER)).toBe(
      'never started: volume db-ca: secret "db-ca" not found (FailedMount)'
    )
  })

  test('ContainerCreating for 3m with no such Event (a pull, an attach in progress) → not stuck (positive control)', async () => {
    const c = client([mount(attaching, 30)])
    expect(await stuckReadingEvents(c, job, [creating(180)], NOW, STUCK_AFTER)).toBeUndefined()
    expect(c.callsOf('listEventsOf')).toHaveLength(1)
  })

  test('ContainerCreating for less than stuck-after: the Events are not read', async () => {
    const c = client([mount(missingSecret, 5)])
    expect(await stuckReadingEvents(c, job, [creating(30)], NOW, STUCK_AFTER)).toBeUndefined()
    expect(c.callsOf('listEventsOf')).toEqual([])
  })
})
