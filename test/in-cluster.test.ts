/** @cluster whole: its sweep covers every namespace, and would delete other suites' finished Jobs */
// The sweep on Kubernetes itself (examples/in-cluster/): the manifests as the API server sees
// them, and the CronJob's own command, from the image (test/in-pod.ts), run as its ServiceAccount
// — with exactly the ClusterRole's rights, through the in-cluster configuration (token file, CA,
// KUBERNETES_SERVICE_HOST/PORT) — deleting exactly the expired Jobs.
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { dumpYaml, loadAllYaml, type V1Container, type V1CronJob, type V1ObjectMeta } from '@kubernetes/client-node'
import { ANNOTATION, MANAGED_LABEL } from '../src/plan/retention.ts'
import { coreApi, createJob, createNamespace, deleteNamespace, getJob, kubectl, waitForJobCondition, type PodBehaviour } from './cluster/testenv.ts'
import { createDecoys, missingDecoys, type Decoy } from './decoys.ts'
import { imageRootfs, runAsPod } from './in-pod.ts'
import { release } from './scenario.ts'
import { savedFolder } from './saved-folder.ts'

const examples = join(import.meta.dirname, '..', 'examples', 'in-cluster')
const suffix = randomBytes(3).toString('hex')

type Manifest = { kind: string; metadata: V1ObjectMeta; roleRef?: { name: string }; subjects?: { namespace?: string }[] }

/**
 * The example manifests, moved into this test's namespace, their cluster-wide names made unique:
 * a structural edit, so everything else is exactly as a user applies it.
 */
function manifestsFor(home: string): Manifest[] {
  const docs = readdirSync(examples)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .flatMap((f) => loadAllYaml(readFileSync(join(examples, f), 'utf8')) as Manifest[])
  for (const doc of docs) {
    if (doc.metadata.namespace === 'job-sweeper') doc.metadata.namespace = home
    if (doc.kind === 'ClusterRole' || doc.kind === 'ClusterRoleBinding') doc.metadata.name = `${doc.metadata.name}-${suffix}`
    if (doc.roleRef) doc.roleRef.name = `${doc.roleRef.name}-${suffix}`
    for (const s of doc.subjects ?? []) if (s.namespace === 'job-sweeper') s.namespace = home
  }
  return docs
}

let home: string
let ns: string
let otherNs: string
let decoys: Decoy[]
let manifestFile: string
let cronJob: V1CronJob

beforeAll(async () => {
  home = await createNamespace('sweeper-home')
  ns = await createNamespace('in-cluster')
  otherNs = await createNamespace('in-cluster-other')
  decoys = await createDecoys(ns, otherNs, release)
  const docs = manifestsFor(home)
  expect(docs.map((d) => d.kind)).toEqual(['CronJob', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding'])
  cronJob = docs[0] as unknown as V1CronJob
  manifestFile = join(mkdtempSync(join(tmpdir(), 'in-cluster-')), 'manifests.yaml')
  writeFileSync(manifestFile, docs.map((d) => dumpYaml(d)).join('---\n'))
})

afterAll(async () => {
  expect(await missingDecoys(decoys)).toEqual([])
  kubectl('delete', '-f', manifestFile, '--ignore-not-found')
  await Promise.all([deleteNamespace(home), deleteNamespace(ns), deleteNamespace(otherNs)])
})

test('the manifests pass kubectl apply --dry-run=server, and the CronJob is what docs/in-cluster.md promises', () => {
  const dryRun = kubectl('apply', '--dry-run=server', '-f', manifestFile)
  expect(dryRun.stderr).toBe('')
  expect(dryRun.code).toBe(0)
  expect(dryRun.stdout.trim().split('\n')).toEqual([
    `cronjob.batch/job-sweeper created (server dry run)`,
    `serviceaccount/job-sweeper created (server dry run)`,
    `clusterrole.rbac.authorization.k8s.io/job-sweeper-sweep-${suffix} created (server dry run)`,
    `clusterrolebinding.rbac.authorization.k8s.io/job-sweeper-sweep-${suffix} created (server dry run)`
  ])
  expect(kubectl('get', 'serviceaccount', 'job-sweeper', '-n', home).code).not.toBe(0) // a dry run created nothing

  const spec = cronJob.spec
  const container = spec?.jobTemplate.spec?.template.spec?.containers[0]
  expect(spec?.concurrencyPolicy).toBe('Forbid')
  expect(spec?.jobTemplate.spec?.ttlSecondsAfterFinished).toBeGreaterThan(0)
  expect(spec?.jobTemplate.spec?.template.spec?.serviceAccountName).toBe('job-sweeper')
  // job-sweeper's image by digest, its placeholder marked for the user to pin; the image's CLI as the chart runs it.
  expect(container?.image).toBe('ghcr.io/job-sweeper/job-sweeper@sha256:REPLACE-WITH-THE-RELEASE-DIGEST')
  expect(readFileSync(join(examples, 'cronjob.yaml'), 'utf8')).toContain('PIN IT: replace the')
  expect(container?.command).toEqual(['node', '/opt/job-sweeper/job-sweeper.mjs'])
  expect(container?.args?.slice(0, 2)).toEqual(['sweep', '--all-namespaces'])
  expect(Object.keys(container?.resources?.requests ?? {}).sort()).toEqual(['cpu', 'memory'])
  expect(Object.keys(container?.resources?.limits ?? {}).sort()).toEqual(['cpu', 'memory'])
})

interface Case {
  namespace: () => string
  name: string
  behaviour: PodBehaviour
  managed: boolean
  retention?: string
  swept: boolean
}

test('the CronJob’s sweep, as its ServiceAccount with only the ClusterRole, deletes exactly the expired Jobs in every namespace', async () => {
  const applied = kubectl('apply', '-f', manifestFile)
  expect(applied.stderr).toBe('')
  const sa = `--as=system:serviceaccount:${home}:job-sweeper`
  // kubectl names a subresource apart (pods --subresource=log; pods/log would be the pod named log)
  const can = (verb: string, resource: string, namespace: string): string => {
    const [kind, sub] = resource.split('/')
    return kubectl('auth', 'can-i', verb, kind, ...(sub ? [`--subresource=${sub}`] : []), '-n', namespace, sa).stdout.trim()
  }
  expect([can('list', 'jobs', ns), can('delete', 'jobs', otherNs), can('get', 'pods/log', ns), can('create', 'events', ns)]).toEqual([
    'yes',
    'yes',
    'yes',
    'yes'
  ])
  expect([can('patch', 'jobs', ns), can('create', 'jobs', ns), can('delete', 'pods', ns), can('get', 'secrets', ns)]).toEqual(['no', 'no', 'no', 'no'])
  // A sweep of all namespaces takes no Lease (docs/concurrency.md), so it may not write one.
  expect(can('create', 'leases.coordination.k8s.io', ns)).toBe('no')

  const cases: Case[] = [
    { namespace: () => ns, name: 'expired-succeeded', behaviour: 'succeed', managed: true, retention: '1s', swept: true },
    { namespace: () => ns, name: 'expired-failed', behaviour: 'fail', managed: true, retention: '1s', swept: true },
    { namespace: () => otherNs, name: 'expired-elsewhere', behaviour: 'succeed', managed: true, retention: '1s', swept: true },
    { namespace: () => ns, name: 'fresh-succeeded', behaviour: 'succeed', managed: true, retention: '1h', swept: false },
    { namespace: () => ns, name: 'failed-kept-forever', behaviour: 'fail', managed: true, retention: 'never', swept: false },
    { namespace: () => otherNs, name: 'fresh-elsewhere', behaviour: 'fail', managed: true, retention: '1h', swept: false },
    { namespace: () => ns, name: 'expired-but-running', behaviour: 'hold', managed: true, retention: '1s', swept: false },
    { namespace: () => ns, name: 'expired-not-managed', behaviour: 'succeed', managed: false, retention: '1s', swept: false }
  ]
  const uids = new Map<string, string>()
  for (const c of cases) {
    const key = c.behaviour === 'fail' ? ANNOTATION.failureGrace : ANNOTATION.ttl
    const job = await createJob({
      namespace: c.namespace(),
      name: c.name,
      behaviour: c.behaviour,
      labels: c.managed ? { [MANAGED_LABEL]: 'true' } : undefined,
      annotations: c.retention ? { [key]: c.retention } : undefined
    })
    uids.set(c.name, job.metadata?.uid ?? '')
  }
  for (const c of cases) if (c.behaviour !== 'hold') await waitForJobCondition(c.namespace(), c.name, c.behaviour === 'fail' ? 'Failed' : 'Complete')
  await new Promise((r) => setTimeout(r, 2500)) // the 1s retentions expire

  // The CronJob's command exactly as written (the image's CLI from its build context, the
  // emptyDir at /scratch a local directory), as the ServiceAccount, the way a pod runs it.
  const container = cronJob.spec?.jobTemplate.spec?.template.spec?.containers[0] as V1Container
  const rootfs = imageRootfs()
  // The image holds Node and no npm: the manifest's former `npx` command would not run in it.
  await expect(runAsPod(home, 'job-sweeper', { ...container, command: ['npx', '--yes', 'job-sweeper@0'] }, rootfs)).rejects.toThrow(
    "runs 'npx': expected one of node (what the image holds)"
  )
  // Another program, by the override: what the pod's environment holds (in-cluster variables, no kubeconfig).
  const env = await runAsPod(home, 'job-sweeper', { name: 'env', command: ['env'], env: container.env }, rootfs, [], { env: '/usr/bin/env' })
  expect(env.stdout).toMatch(/^KUBERNETES_SERVICE_HOST=/m)
  expect(env.stdout).toContain('TMPDIR=/scratch\n')
  expect(env.stdout).not.toMatch(/^KUBECONFIG=/m)
  const run = await runAsPod(home, 'job-sweeper', container, rootfs, ['--json'])
  expect(run.stderr).not.toContain(run.token)
  expect(run.stdout).not.toContain(run.token)
  expect(run.stderr).not.toContain('warning:')
  expect(run.code).toBe(0)

  const result = JSON.parse(run.stdout) as { pruned: { namespace: string; name: string }[]; errors: string[]; warnings: string[] }
  expect(result.errors).toEqual([])
  expect(result.warnings).toEqual([])
  const mine = (jobs: { namespace: string; name: string }[]): string[] =>
    jobs.filter((j) => j.namespace === ns || j.namespace === otherNs).map((j) => `${j.namespace}/${j.name}`)
  const expected = cases.filter((c) => c.swept).map((c) => `${c.namespace()}/${c.name}`)
  expect(mine(result.pruned).sort()).toEqual(expected.sort())
  for (const c of cases) {
    const job = await getJob(c.namespace(), c.name)
    expect([c.name, job?.metadata?.uid]).toEqual([c.name, c.swept ? undefined : uids.get(c.name)])
  }
  // Saving a failed Job's logs and recording an Event took the pods/log and events rights.
  const logs = savedFolder(join(run.mounts.get('/scratch') ?? '-', 'logs'), ns, 'expired-failed', uids.get('expired-failed'))
  const [pod] = existsSync(logs) ? readdirSync(logs).filter((f) => f !== 'job.json') : []
  expect(readFileSync(join(logs, pod ?? '-', 'main.log'), 'utf8')).toContain('migrate: ERROR: relation "tuples" already exists') // kwok's pod.log
  const events = await coreApi().listNamespacedEvent({ namespace: ns, fieldSelector: 'reason=JobSwept' })
  expect(events.items.map((e) => e.involvedObject.name).sort()).toEqual(['expired-failed', 'expired-succeeded'])
})
