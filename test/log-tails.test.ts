// Failed Jobs' log tails in the summary go through the run's secret masker when mask-log-tails is
// true (the default), and are shown as they are when it is false. The secret is a password of a
// user in the kubeconfig input that kwok's pod log happens to print (test/cluster/pod.log).
import { outputNames, runAction } from './action.ts'
import { createJob, kubeConfig, waitForJobCondition } from './cluster/testenv.ts'
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
