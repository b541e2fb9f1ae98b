// A pod no node takes now, while the cluster autoscaler adds one, is on its way, not stuck
// (src/observe/scale-up.ts): its Events as the autoscaler writes them, over the fake client.
// The real cluster-autoscaler does not run in the test cluster (see the closing note of issue 25).
import type { CoreV1Event } from '@kubernetes/client-node'
import { scaleUpComing, stuckUnlessScalingUp, SCALE_UP_BELIEVED_SECONDS } from '../../src/observe/scale-up.ts'
import { FakeClock } from '../fake/clock.ts'
import { apiError, fail, FakeJobsClient } from '../fake/jobs-client.ts'
import { NOW, newJob } from './jobs.ts'
import { imagePullBackOff, unschedulable } from './pods.ts'

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

describe('stuckUnlessScalingUp', () => {
  const client = (events: CoreV1Event[]): FakeJobsClient => {
    const c = new FakeJobsClient(new FakeClock())
    for (const e of events) c.addEvent(e)
    return c
  }

  test('unschedulable for 3m while the autoscaler adds a node → not stuck', async () => {
    expect(await stuckUnlessScalingUp(client([event('TriggeredScaleUp', 90)]), job, [pod], NOW, STUCK_AFTER)).toBeUndefined()
  })

  test('unschedulable for 3m, and the autoscaler said no node group can take it → stuck (positive control)', async () => {
    expect(await stuckUnlessScalingUp(client([event('NotTriggerScaleUp', 90)]), job, [pod], NOW, STUCK_AFTER)).toContain(
      'never started: 0/1 nodes are available'
    )
  })

  test('stuck for another reason (ImagePullBackOff): the Events are not read, whatever they say', async () => {
    const c = client([event('TriggeredScaleUp', 90)])
    expect(await stuckUnlessScalingUp(c, job, [imagePullBackOff(120)], NOW, STUCK_AFTER)).toContain('ImagePullBackOff')
    expect(c.callsOf('listEventsOf')).toEqual([])
  })

  test('Events that cannot be read (403): the verdict stands', async () => {
    const c = client([event('TriggeredScaleUp', 90)]).every('listEventsOf', fail(apiError(403, 'events is forbidden')))
    expect(await stuckUnlessScalingUp(c, job, [pod], NOW, STUCK_AFTER)).toContain('never started: 0/1 nodes are available')
  })
})
