// The executor's poll of the pods of the Jobs it waits on (src/execute/start-poll.ts), over a
// scripted fake of the one JobsClient method it uses.
import type { V1Pod } from '@kubernetes/client-node'
import type { JobsClient } from '../../src/kube/client.ts'
import type { JobRecord } from '../../src/kube/job-record.ts'
import { StartPoller } from '../../src/execute/start-poll.ts'
import { newJob } from './jobs.ts'
import { imagePullBackOff, running } from './pods.ts'

function fakeClient(podsByUid: Record<string, V1Pod[]>): { client: JobsClient; lists: string[][] } {
  const lists: string[][] = []
  const client = {
    defaultNamespace: 'prod',
    listPodsOfJobs: async (namespace: string, uids: string[]): Promise<V1Pod[]> => {
      lists.push([namespace, ...uids])
      return uids.flatMap((uid) =>
        (podsByUid[uid] ?? []).map((p) => ({ ...p, metadata: { ...p.metadata, labels: { 'batch.kubernetes.io/controller-uid': uid } } }))
      )
    }
  } as unknown as JobsClient
  return { client, lists }
}

const never = new Promise<JobRecord | undefined>(() => {})

test('a Job waited on whose pod cannot pull its image ends its wait with the verdict; one whose container runs waits on; one list per namespace', async () => {
  const stuck = newJob({ name: 'app-migrate', status: 'running' })
  const busy = newJob({ name: 'app-worker', status: 'running' })
  const { client, lists } = fakeClient({ 'uid-app-migrate': [imagePullBackOff(600)], 'uid-app-worker': [running(600)] })
  const poller = new StartPoller(client, 60, 10)
  let finish: (job: JobRecord | undefined) => void = () => {}
  const busyWait = poller.waitOrStuck('uid-app-worker', () => busy, new Promise((resolve) => (finish = resolve)))
  const ended = await poller.waitOrStuck('uid-app-migrate', () => stuck, never)
  expect(ended?.neverStarted).toBe('never started: ImagePullBackOff (registry.example/app:1.2.3)')
  expect(lists[0]).toEqual(['prod', 'uid-app-worker', 'uid-app-migrate'])
  // The positive control: the Job whose container runs is still waited on, until its watch says it finished.
  const done = { ...busy, status: { conditions: [{ type: 'Complete', status: 'True' }] } }
  finish(done)
  expect(await busyWait).toBe(done)
  const polls = lists.length
  await new Promise((r) => setTimeout(r, 50))
  expect(lists.length).toBe(polls) // nothing left to poll: it stops
  poller.stop()
})
