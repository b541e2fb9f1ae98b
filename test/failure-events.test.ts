// Why a waited Job failed, with its Events, on the real control plane: the Job controller's own
// BackoffLimitExceeded Event (which the Job's condition already says: not repeated) and the real
// kubelet's Event on its pod (on the real node: a Secret volume missing until the test creates
// it), through the bundled action as the runner runs it, with decoys that must survive.
import { expectSucceeded, outputNames, runAction } from './action.ts'
import { realNodePod } from './cluster/node.ts'
import { batchApi, coreApi, eventually, getJob, realNode, testOnRealNode } from './cluster/testenv.ts'
import { releaseAnnotations, useScenario } from './scenario.ts'

const scenario = useScenario('failure-events')

testOnRealNode(
  'pre waits on a migration that fails: the log says why, from its condition, its pod and the kubelet’s Event, not the Event its condition repeats',
  async () => {
    const { ns } = scenario
    const name = 'app-migrate'
    // Its Secret volume is missing: the kubelet cannot mount it and says so in an Event, until the
    // Secret comes; then the container runs 5s and exits 1 (backoffLimit 0: the Job fails).
    await batchApi().createNamespacedJob({
      namespace: ns,
      body: {
        metadata: { name, annotations: releaseAnnotations(ns) },
        spec: {
          backoffLimit: 0,
          template: {
            spec: realNodePod({
              restartPolicy: 'Never',
              volumes: [{ name: 'db-ca', secret: { secretName: 'db-ca' } }],
              containers: [
                {
                  name: 'main',
                  image: realNode.image,
                  command: ['sh', '-c', 'echo migrating; sleep 5; exit 1'],
                  volumeMounts: [{ name: 'db-ca', mountPath: '/ca' }]
                }
              ]
            })
          }
        }
      }
    })
    const mountFailed = 'MountVolume.SetUp failed for volume "db-ca" : secret "db-ca" not found'
    const [event] = await eventually(
      `the kubelet's FailedMount Event for ${name}`,
      async () => (await coreApi().listNamespacedEvent({ namespace: ns, fieldSelector: 'reason=FailedMount' })).items,
      (events) => events.some((e) => e.message === mountFailed)
    )
    const pod = { metadata: { name: event.involvedObject.name } }
    await coreApi().createNamespacedSecret({ namespace: ns, body: { metadata: { name: 'db-ca' }, data: { 'ca.crt': Buffer.from('ca').toString('base64') } } })

    const run = await runAction({ release: 'app', namespace: ns, 'on-running': 'wait', 'wait-timeout': '3m', 'harvest-logs': 'none' })
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
  }
)
