// Why a waited Job failed, with its Events, on the real control plane: the Job controller's own
// BackoffLimitExceeded Event (which the Job's condition already says: not repeated) and a
// kubelet's Event on its pod (kwok writes none: written here as a kubelet does), through the
// bundled action as the runner runs it, with decoys that must survive.
import { expectSucceeded, outputNames, runAction } from './action.ts'
import { coreApi, createJob, eventually, getJob, kubeletEvent } from './cluster/testenv.ts'
import { releaseAnnotations, useScenario } from './scenario.ts'

const scenario = useScenario('failure-events')

test('pre waits on a migration that fails: the log says why, from its condition, its pod and the kubelet’s Event, not the Event its condition repeats', async () => {
  const { ns } = scenario
  const name = 'app-migrate'
  // Runs 20s, then its container exits 1; backoffLimit 0, so the Job fails.
  await createJob({ namespace: ns, name, behaviour: 'fail', runFor: '20s', annotations: releaseAnnotations(ns) })
  const [pod] = await eventually(
    `the pod of ${name} running`,
    async () => (await coreApi().listNamespacedPod({ namespace: ns, labelSelector: `job-name=${name}` })).items,
    (pods) => pods.length === 1 && pods[0].status?.phase === 'Running'
  )
  const mountFailed = 'MountVolume.SetUp failed for volume "db-ca" : secret "db-ca" not found'
  await kubeletEvent(pod, 'FailedMount', mountFailed)

  const run = await runAction({ release: 'app', namespace: ns, 'on-running': 'wait', 'wait-timeout': '2m', 'harvest-logs': 'none' })
  expectSucceeded(run)
  expect(outputNames(run, 'waited')).toEqual([name])
  expect(await getJob(ns, name)).toBeUndefined()
  const why = run.stdout.split('\n').find((l) => l.startsWith(`Job ${ns}/${name} failed: `))
  expect(why).toBe(
    `Job ${ns}/${name} failed: BackoffLimitExceeded (its pods failed more often than backoffLimit allows); pod ${pod.metadata?.name}: container main exit code 1; Events: pod ${pod.metadata?.name} FailedMount: ${mountFailed}`
  )
  // The Job controller did record its Event: the line above leaves it out because the condition says it.
  const jobEvents = await coreApi().listNamespacedEvent({ namespace: ns, fieldSelector: `involvedObject.name=${name},involvedObject.kind=Job` })
  expect(jobEvents.items.map((e) => `${e.type} ${e.reason}`)).toContain('Warning BackoffLimitExceeded')
})
