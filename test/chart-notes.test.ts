// The chart's first hour: what `helm install` prints (templates/NOTES.txt) names the objects it
// installed and the command that runs a sweep now, with the release's own names; the chart refuses
// a Kubernetes older than the supported 1.34 (Chart.yaml's kubeVersion) before it installs anything.
import { join } from 'node:path'
import { helm } from './cluster/testenv.ts'

const chart = join(import.meta.dirname, '..', 'charts', 'job-sweeper')

/** What `helm install --dry-run=client` prints after `NOTES:`. */
function notes(...sets: string[]): string {
  const install = helm('install', 'sweeper', chart, '--namespace', 'ops', '--dry-run=client', ...sets.flatMap((s) => ['--set', s]))
  expect([install.code, install.stderr]).toEqual([0, ''])
  return install.stdout.split('\nNOTES:\n')[1] ?? ''
}

test('the install notes name the CronJob, its schedule and scope, where logs go, and how to run a sweep now', () => {
  const text = notes('allNamespaces=true')
  expect(text).toContain("The sweep: CronJob sweeper-job-sweeper, schedule '17 * * * *'.")
  expect(text).toContain("matching 'job-sweeper.io/managed=true' in every namespace")
  expect(text).toContain("the pod's scratch volume only (gone with the pod; set logs.s3 to keep them)")
  expect(text).toContain('kubectl create job --from=cronjob/sweeper-job-sweeper sweeper-job-sweeper-manual -n ops')
  expect(text).not.toContain('The keeper:')
})

test('with the keeper and namespaces, the notes name the keeper, its bucket and its Lease, and the namespaces', () => {
  const text = notes('keeper.enabled=true', 'logs.s3=s3://archive/jobs', 'namespaces={prod,jobs}', 'selector=team=db')
  expect(text).toContain("matching 'team=db' in prod, jobs")
  expect(text).toContain('Logs of the failed Jobs it deletes: s3://archive/jobs.')
  expect(text).toContain('The keeper: Deployment sweeper-job-sweeper-keeper (2 replicas, one leads).')
  expect(text).toContain('kubectl get lease job-sweeper-keeper -n ops')
  expect(text).not.toContain('match the default selector')
})

test("the chart refuses a Kubernetes older than 1.34 (Chart.yaml's kubeVersion) and renders for 1.34", () => {
  const old = helm('template', 'x', chart, '--kube-version', '1.33.9')
  expect([old.code, old.stderr]).toEqual([1, expect.stringContaining('chart requires kubeVersion: >=1.34.0-0 which is incompatible with Kubernetes v1.33.9')])
  expect(helm('template', 'x', chart, '--kube-version', '1.34.0', '--set', 'namespaces={jobs}').code).toBe(0)
})
