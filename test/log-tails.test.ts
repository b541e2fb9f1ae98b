// Failed Jobs' log tails in the summary go through the run's secret masker when mask-log-tails is
// true (the default), and are shown as they are when it is false. The secret is a password of a
// user in the kubeconfig input that kwok's pod log happens to print (test/cluster/pod.log).
import { outputNames, runAction } from './action.ts'
import { createJob, eventually, getJob, kubeConfig, waitForJobCondition } from './cluster/testenv.ts'
import { release, releaseAnnotations, useScenario } from './scenario.ts'

const scenario = useScenario('tails')
const secret = '0042_add_tuples_index' // in the pod log: "migrate: applying 0042_add_tuples_index"

function kubeconfigWithSecret(): string {
  const admin = kubeConfig()
  const cluster = admin.getCurrentCluster()
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'test', cluster: { server: cluster?.server, 'certificate-authority-data': cluster?.caData } }],
    contexts: [{ name: 'admin', context: { cluster: 'test', user: 'admin', namespace: scenario.ns } }],
    'current-context': 'admin',
    users: [
      { name: 'admin', user: { token: admin.getCurrentUser()?.token } },
      { name: 'unused', user: { username: 'deployer', password: secret } }
    ]
  })
}

test.each([
  ['true', 'migrate: applying ***'],
  ['false', `migrate: applying ${secret}`]
])('mask-log-tails: %s', async (mask, shown) => {
  const ns = scenario.ns
  await createJob({ namespace: ns, name: `${release}-migrate`, annotations: releaseAnnotations(ns), behaviour: 'fail' })
  await waitForJobCondition(ns, `${release}-migrate`, 'Failed')
  const run = await runAction({ kubeconfig: kubeconfigWithSecret(), release, 'mask-log-tails': mask }, { env: { KUBECONFIG: '/nonexistent' } })
  expect(run.code).toBe(0)
  expect(outputNames(run, 'pruned')).toEqual([`${release}-migrate`])
  expect(run.summary).toContain(`Last lines of failed Job ${release}-migrate`)
  expect(run.summary).toContain(shown)
  expect(run.summary.includes(secret)).toBe(mask === 'false')
})

test('the tail budget (20 Jobs) goes to failed Jobs: 21 running Jobs deleted with on-running: delete do not crowd out a failed one’s tail', async () => {
  const ns = scenario.ns
  const running = Array.from({ length: 21 }, (_, i) => `${release}-run-${String(i).padStart(2, '0')}`)
  await Promise.all(running.map((name) => createJob({ namespace: ns, name, annotations: releaseAnnotations(ns), behaviour: 'hold' })))
  // Sorted after the running ones, and taken one at a time: it comes last.
  const failed = `${release}-z-failed`
  await createJob({ namespace: ns, name: failed, annotations: releaseAnnotations(ns), behaviour: 'fail' })
  await waitForJobCondition(ns, failed, 'Failed')
  for (const name of running) {
    await eventually(
      `${name} running`,
      () => getJob(ns, name),
      (j) => j?.status?.active === 1
    )
  }
  const run = await runAction({ release, namespace: ns, 'on-running': 'delete', concurrency: '1' })
  expect(run.code).toBe(0)
  expect(outputNames(run, 'pruned')).toEqual([...running, failed])
  // The running Jobs' logs so far were saved (harvest-logs: failed counts them interrupted)…
  expect(run.stdout).toContain(`saved 1 log file(s) of running Job ${ns}/${running[0]}`)
  // …but only the failed Job's tail was read, and it is in the summary.
  expect(run.summary).toContain(`Last lines of failed Job ${failed}`)
  expect(run.summary.match(/Last lines of failed Job/g)).toHaveLength(1)
})
