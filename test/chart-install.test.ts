/** @cluster whole: its sweep covers every namespace, and would delete other suites' finished Jobs */
// The Helm chart charts/job-sweeper on a real API server: helm lint, helm install (allNamespaces
// with a ClusterRole; listed namespaces with a Role in each, pods and logs readable there only;
// neither refused at rendering), and the CronJob's command as the
// installed release renders it, run as its ServiceAccount through the in-cluster configuration
// from the image's build context (kwok runs no containers). Its RBAC is the least: the sweep works
// with it, and with any one verb of the ClusterRole removed it is refused with a 403 naming it.
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type V1ClusterRole, type V1Container, type V1CronJob, type V1Deployment, type V1Job, type V1PolicyRule } from '@kubernetes/client-node'
import { S3Client } from '@aws-sdk/client-s3'
import { parseAllDocuments } from 'yaml'
import { ANNOTATION, MANAGED_LABEL } from '../src/plan/retention.ts'
import {
  batchApi,
  coreApi,
  createJob,
  createNamespace,
  deleteNamespace,
  eventually,
  getJob,
  helm,
  kubectl,
  run as runTool,
  waitForJobCondition,
  type PodBehaviour
} from './cluster/testenv.ts'
import { pinnedKubernetesVersion } from './cluster/cluster.ts'
import { createDecoys, missingDecoys, type Decoy } from './decoys.ts'
import { imageRootfs, runAsPod, type PodRun } from './in-pod.ts'
import { keysUnder, objectBytes } from './s3-objects.ts'
import { release } from './scenario.ts'
import { savedFolder } from './saved-folder.ts'

const chart = join(import.meta.dirname, '..', 'charts', 'job-sweeper')
const suffix = randomBytes(3).toString('hex')
const allRelease = `sweep-all-${suffix}`
const listedRelease = `sweep-listed-${suffix}`
const s3Release = `sweep-s3-${suffix}`
const pvcRelease = `sweep-pvc-${suffix}`
const keeperRelease = `keeper-all-${suffix}`
const keeperOffRelease = `keeper-off-${suffix}`

type Doc = { kind: string; metadata: { name: string; namespace?: string } }

let home: string
let ns: string
let otherNs: string
let unlistedNs: string
let decoys: Decoy[]
let rootfs: string

beforeAll(async () => {
  home = await createNamespace('chart-home')
  ns = await createNamespace('chart')
  otherNs = await createNamespace('chart-other')
  unlistedNs = await createNamespace('chart-unlisted')
  decoys = await createDecoys(ns, otherNs, release)
  rootfs = imageRootfs()
})

afterAll(async () => {
  expect(await missingDecoys(decoys)).toEqual([])
  for (const r of [allRelease, listedRelease, s3Release, pvcRelease, keeperRelease, keeperOffRelease]) helm('uninstall', r, '-n', home, '--ignore-not-found')
  await Promise.all([home, ns, otherNs, unlistedNs].map((n) => deleteNamespace(n)))
})

// Helm 3 keeps a document a template renders empty (rbac.yaml's scope check leaves one); client-node's
// loadAllYaml throws on it, so the documents are parsed here.
const documents = (yaml: string): Doc[] =>
  parseAllDocuments(yaml)
    .map((d) => d.toJS() as Doc | null)
    .filter((d): d is Doc => d !== null && d !== undefined)

/** Installs the chart as `releaseName` (once: a test run alone installs what it needs). */
function install(releaseName: string, ...flags: string[]): void {
  if (helm('status', releaseName, '-n', home).code === 0) return
  const installed = helm('install', releaseName, chart, '-n', home, ...flags)
  expect({ code: installed.code, stderr: installed.stderr }).toMatchObject({ code: 0 })
}

/** The objects of an installed release, as Helm rendered and applied them (helm get manifest). */
function installed(releaseName: string): Doc[] {
  const got = helm('get', 'manifest', releaseName, '-n', home)
  expect(got.code).toBe(0)
  return documents(got.stdout)
}

const sweepContainer = (docs: Doc[]): V1Container => {
  const cronJob = docs.find((d) => d.kind === 'CronJob') as unknown as V1CronJob
  return cronJob.spec?.jobTemplate.spec?.template.spec?.containers[0] as V1Container
}

const serviceAccountOf = (docs: Doc[]): string =>
  (docs.find((d) => d.kind === 'CronJob') as unknown as V1CronJob).spec?.jobTemplate.spec?.template.spec?.serviceAccountName ?? ''

interface Result {
  pruned: { namespace: string; name: string }[]
  errors: string[]
  warnings: string[]
}
const resultOf = (run: PodRun): Result => JSON.parse(run.stdout) as Result

/** An expired, labelled Job in `namespace` (failed ones have pods with a log to save), finished. */
async function expiredJob(namespace: string, name: string, behaviour: PodBehaviour = 'fail', managed = true): Promise<string> {
  const key = behaviour === 'fail' ? ANNOTATION.failureGrace : ANNOTATION.ttl
  const job = await createJob({
    namespace,
    name,
    behaviour,
    labels: managed ? { [MANAGED_LABEL]: 'true' } : undefined,
    annotations: { [key]: '1s' }
  })
  await waitForJobCondition(namespace, name, behaviour === 'fail' ? 'Failed' : 'Complete')
  return job.metadata?.uid ?? ''
}

const expire = (): Promise<void> => new Promise((r) => setTimeout(r, 2500))

test('helm lint --strict passes, and a digest in the values pins the image by it', () => {
  // helm lint takes a template's fail for a note: linted with each scope, so that it renders whole.
  for (const scope of ['namespaces={jobs,batch}', 'allNamespaces=true']) {
    const lint = helm('lint', '--strict', chart, '--set', scope)
    expect(lint.stdout).toContain('0 chart(s) failed')
    expect(lint.code).toBe(0)
  }
  const digest = `sha256:${'0123456789abcdef'.repeat(4)}`
  const rendered = helm('template', 'x', chart, '--kube-version', pinnedKubernetesVersion(), '--set', 'namespaces={jobs}', '--set', `image.digest=${digest}`)
  expect(rendered.code).toBe(0)
  expect(sweepContainer(documents(rendered.stdout)).image).toBe(`ghcr.io/job-sweeper/job-sweeper@${digest}`)
  const bad = helm('template', 'x', chart, '--kube-version', pinnedKubernetesVersion(), '--set', 'namespaces={jobs}', '--set', 'image.digest=latest')
  expect(bad.code).not.toBe(0)
  expect(bad.stderr).toContain("at '/image/digest': 'latest' does not match pattern")
})

test('the scope is asked for: no namespaces and no allNamespaces is refused naming both values, both at once too; listed namespaces render no cluster-wide rights (the sweep, the keeper, its hook); allNamespaces renders the ClusterRoles', () => {
  const render = (...sets: string[]) => helm('template', 'x', chart, '--kube-version', pinnedKubernetesVersion(), ...sets.flatMap((s) => ['--set', s]))
  const keeper = ['keeper.enabled=true', 'logs.s3=s3://archive/jobs']
  for (const sets of [[], keeper]) {
    const refused = render(...sets)
    expect([refused.code, refused.stdout]).toEqual([1, ''])
    expect(refused.stderr).toContain('namespaces is empty: expected the namespaces to sweep (and keep)')
    expect(refused.stderr).toContain(
      "or allNamespaces=true for a ClusterRole that lists every pod and reads every pod's log in the cluster, kube-system included"
    )
  }
  const both = render('allNamespaces=true', 'namespaces={jobs}')
  expect([both.code, both.stderr]).toEqual([1, expect.stringContaining('allNamespaces: true with namespaces ["jobs"]: expected one of them')])

  const kinds = (out: { code: number; stdout: string }): string[] => {
    expect(out.code).toBe(0)
    return documents(out.stdout).map((d) => `${d.kind} ${d.metadata.name}`)
  }
  // helm template renders the post-delete hook too (helm get hooks is what an install ran).
  const listed = kinds(render('namespaces={jobs,batch}', ...keeper))
  expect(listed.filter((k) => k.startsWith('Role ')).length).toBeGreaterThanOrEqual(6) // sweep, keeper, hook: in each of two
  expect(listed.filter((k) => k.startsWith('Cluster'))).toEqual([])
  const all = kinds(render('allNamespaces=true', ...keeper))
  expect(all.filter((k) => k.startsWith('ClusterRole ')).sort()).toEqual(
    ['ClusterRole default-x-job-sweeper', 'ClusterRole default-x-job-sweeper-keeper', 'ClusterRole default-x-job-sweeper-keeper-let-go'].sort()
  )
})

test('keeper.shutdownGraceSeconds: the keeper gets it as --shutdown-grace, and its pod a terminationGracePeriodSeconds 10 s longer (the launcher ends it 5 s after the grace)', () => {
  const keeperPod = (...sets: string[]): V1Deployment['spec'] => {
    const out = helm(
      'template',
      'x',
      chart,
      '--kube-version',
      pinnedKubernetesVersion(),
      ...['namespaces={jobs}', 'keeper.enabled=true', 'logs.s3=s3://archive/jobs', ...sets].flatMap((s) => ['--set', s])
    )
    expect(out.code).toBe(0)
    return (documents(out.stdout).find((d) => d.kind === 'Deployment') as unknown as V1Deployment).spec
  }
  for (const [sets, grace] of [
    [[], 20],
    [['keeper.shutdownGraceSeconds=45'], 45]
  ] as const) {
    const spec = keeperPod(...sets)?.template.spec
    expect(spec?.terminationGracePeriodSeconds).toBe(grace + 10)
    const args = spec?.containers[0].args ?? []
    expect(args[args.indexOf('--shutdown-grace') + 1]).toBe(`${grace}s`)
  }
  const bad = helm('template', 'x', chart, '--kube-version', pinnedKubernetesVersion(), '--set', 'namespaces={jobs}', '--set', 'keeper.shutdownGraceSeconds=-1')
  expect(bad.code).not.toBe(0)
  expect(bad.stderr).toContain("at '/keeper/shutdownGraceSeconds': minimum: got -1, want 0")
})

test('scripts/chart-package.sh packages a copy with the release’s version and the image by its digest, and leaves the chart as it was', () => {
  const before = readFileSync(join(chart, 'values.yaml'), 'utf8')
  const digest = `sha256:${'fedcba9876543210'.repeat(4)}`
  const out = mkdtempSync(join(tmpdir(), 'chart-package-'))
  const packaged = runTool(join(import.meta.dirname, '..', 'scripts', 'chart-package.sh'), ['9.8.7-rc.1', digest, out])
  expect(packaged.code).toBe(0)
  const tgz = packaged.stdout.trim()
  expect(tgz).toBe(join(out, 'job-sweeper-9.8.7-rc.1.tgz'))
  expect(helm('show', 'chart', tgz).stdout).toMatch(/^appVersion: 9\.8\.7-rc\.1$[\s\S]*^version: 9\.8\.7-rc\.1$/m)
  const rendered = helm('template', 'x', tgz, '--kube-version', pinnedKubernetesVersion(), '--set', 'namespaces={jobs}')
  expect(sweepContainer(documents(rendered.stdout)).image).toBe(`ghcr.io/job-sweeper/job-sweeper@${digest}`)
  expect(readFileSync(join(chart, 'values.yaml'), 'utf8')).toBe(before)
  const refused = runTool(join(import.meta.dirname, '..', 'scripts', 'chart-package.sh'), ['9.8.7', 'latest', out])
  expect([refused.code, refused.stderr.trim()]).toEqual([2, "chart: digest 'latest': expected sha256:<64 hex digits>"])
})

test('installed for all namespaces: the CronJob’s command, as its ServiceAccount with the ClusterRole, sweeps exactly the expired labelled Jobs everywhere', async () => {
  install(allRelease, '--set', 'allNamespaces=true')
  const docs = installed(allRelease)
  expect(docs.map((d) => d.kind).sort()).toEqual(['ClusterRole', 'ClusterRoleBinding', 'CronJob', 'ServiceAccount'])
  const container = sweepContainer(docs)
  // The chart runs what the image's ENTRYPOINT runs.
  const entrypoint = /^ENTRYPOINT (.*)$/m.exec(readFileSync(join(import.meta.dirname, '..', 'image', 'Containerfile'), 'utf8'))?.[1] ?? ''
  expect(container.command).toEqual(JSON.parse(entrypoint))
  expect(container.args?.slice(0, 2)).toEqual(['sweep', '--all-namespaces'])
  expect(container.resources?.limits?.memory).toBe('512Mi')
  expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false })
  // The same rights as the plain manifests' ClusterRole (examples/in-cluster/rbac.yaml).
  const example = documents(readFileSync(join(import.meta.dirname, '..', 'examples', 'in-cluster', 'rbac.yaml'), 'utf8')).find((d) => d.kind === 'ClusterRole')
  expect((docs.find((d) => d.kind === 'ClusterRole') as unknown as V1ClusterRole).rules).toEqual((example as unknown as V1ClusterRole).rules)

  const swept = [
    { namespace: ns, name: 'expired-failed', uid: await expiredJob(ns, 'expired-failed') },
    { namespace: otherNs, name: 'expired-succeeded', uid: await expiredJob(otherNs, 'expired-succeeded', 'succeed') }
  ]
  const kept = [
    { namespace: ns, name: 'expired-not-labelled', uid: await expiredJob(ns, 'expired-not-labelled', 'succeed', false) },
    {
      namespace: ns,
      name: 'fresh',
      uid: (await createJob({ namespace: ns, name: 'fresh', labels: { [MANAGED_LABEL]: 'true' }, annotations: { [ANNOTATION.ttl]: '1h' } })).metadata?.uid
    }
  ]
  await waitForJobCondition(ns, 'fresh', 'Complete')
  await expire()

  const run = await runAsPod(home, serviceAccountOf(docs), container, rootfs, ['--json'])
  expect(run.stderr).not.toContain(run.token)
  expect(run.stdout).not.toContain(run.token)
  expect(run.stderr).not.toContain('warning:')
  expect(run.code).toBe(0)
  const result = resultOf(run)
  expect([result.errors, result.warnings]).toEqual([[], []])
  const mine = result.pruned.filter((j) => [ns, otherNs].includes(j.namespace)).map((j) => `${j.namespace}/${j.name}`)
  expect(mine.sort()).toEqual(swept.map((j) => `${j.namespace}/${j.name}`).sort())
  for (const j of swept) expect(await getJob(j.namespace, j.name)).toBeUndefined()
  for (const j of kept) expect([j.name, (await getJob(j.namespace, j.name))?.metadata?.uid]).toEqual([j.name, j.uid])
  // The failed Job's log went to the CronJob's scratch volume (--logs-dir /scratch/logs).
  const logs = savedFolder(join(run.mounts.get('/scratch') ?? '-', 'logs'), ns, 'expired-failed', swept.find((j) => j.name === 'expired-failed')?.uid)
  const [pod] = existsSync(logs) ? readdirSync(logs).filter((f) => f !== 'job.json') : []
  expect(readFileSync(join(logs, pod ?? '-', 'main.log'), 'utf8')).toContain('migrate: ERROR: relation "tuples" already exists') // kwok's pod.log
})

test('the ClusterRole is the least: with any one of its verbs removed, the sweep is refused (403 Forbidden) naming that verb and resource', async () => {
  install(allRelease, '--set', 'allNamespaces=true')
  const docs = installed(allRelease)
  const role = docs.find((d) => d.kind === 'ClusterRole') as unknown as V1ClusterRole
  const original = role.rules ?? []
  const container = sweepContainer(docs)
  const account = serviceAccountOf(docs)
  const can = (verb: string, resource: string): Promise<string> => {
    const [kind, subresource] = resource.split('/') // kubectl names a subresource apart: pods --subresource=log
    const sub = subresource ? [`--subresource=${subresource}`] : []
    return Promise.resolve(kubectl('auth', 'can-i', verb, kind, ...sub, '-n', ns, `--as=system:serviceaccount:${home}:${account}`).stdout.trim())
  }
  const file = join(mkdtempSync(join(tmpdir(), 'chart-rbac-')), 'clusterrole.yaml')
  /** The installed ClusterRole with `rules` instead of its own (a whole replacement, as an edit would be). */
  const replaceRules = (rules: V1PolicyRule[]): void => {
    writeFileSync(file, JSON.stringify({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: role.metadata, rules }))
    const replaced = kubectl('replace', '-f', file)
    expect(replaced.stderr).toBe('')
  }
  const verbs = original.flatMap((rule, index) =>
    (rule.verbs ?? []).map((verb) => ({ index, verb, resource: rule.resources?.[0] ?? '', group: rule.apiGroups?.[0] ?? '' }))
  )
  expect(verbs.map((v) => `${v.verb} ${v.resource}`)).toEqual(['get jobs', 'list jobs', 'delete jobs', 'list pods', 'get pods/log', 'create events'])

  const refused: string[] = []
  try {
    for (const [n, { index, verb, resource, group }] of verbs.entries()) {
      const rules = original
        .map((rule, i) => (i === index ? { ...rule, verbs: rule.verbs.filter((v) => v !== verb) } : rule))
        .filter((rule) => rule.verbs.length > 0)
      replaceRules(rules)
      const qualified = group === '' ? resource : resource.replace(/^[^/]+/, (kind) => `${kind}.${group}`)
      await eventually(
        `RBAC without ${verb} on ${qualified}`,
        () => can(verb, qualified),
        (answer) => answer === 'no'
      )
      // A failed, expired Job: the sweep lists and watches Jobs, reads its pods and their log,
      // deletes it, records an Event, and waits until it is gone.
      await expiredJob(ns, `least-${n}`)
      await expire()
      // A Job is read again (get) only when its delete met a changed resourceVersion (409): keep
      // this one changing while the sweep runs, so that it does.
      let churning = verb === 'get' && resource === 'jobs'
      const churn = async (): Promise<void> => {
        for (let i = 0; churning; i++) {
          const body = [{ op: 'add', path: '/metadata/annotations/job-sweeper.test~1churn', value: String(i) }]
          await batchApi()
            .patchNamespacedJob({ name: `least-${n}`, namespace: ns, body })
            // Only the Job's deletion ends it: a patch refused under load (a 429, a 409 of the
            // server's own retries) would otherwise stop the churn, and the delete then need no get.
            .catch((e: { code?: number }) => {
              if (e.code === 404) churning = false
            })
        }
      }
      const churned = churn()
      const run = await runAsPod(home, account, container, rootfs, ['--json']).finally(() => (churning = false))
      await churned
      const said = `${run.stdout}\n${run.stderr}`.replaceAll('\\"', '"') // the JSON's quotes as the API server wrote them
      const names = said.includes(`is forbidden: User "system:serviceaccount:${home}:${account}" cannot ${verb} resource "${resource}"`)
      const warned = run.code === 0 && (JSON.parse(run.stdout) as Result).warnings.length > 0
      if (names && (run.code !== 0 || warned)) refused.push(`${verb} ${resource}`)
      else refused.push(`${verb} ${resource}: not refused (exit ${run.code}): ${said.slice(0, 2000)}`)
    }
  } finally {
    replaceRules(original)
  }
  expect(refused).toEqual(verbs.map((v) => `${v.verb} ${v.resource}`))
})

test('installed for listed namespaces: a Role in each (Leases too), and the sweep clears those namespaces and may not touch another', async () => {
  install(listedRelease, '--set', `namespaces={${ns},${otherNs}}`)
  const docs = installed(listedRelease)
  expect(docs.map((d) => `${d.kind} ${d.metadata.namespace ?? ''}`).sort()).toEqual(
    [`CronJob ${home}`, `Role ${ns}`, `Role ${otherNs}`, `RoleBinding ${ns}`, `RoleBinding ${otherNs}`, `ServiceAccount ${home}`].sort()
  )
  const container = sweepContainer(docs)
  expect(container.args?.slice(0, 3)).toEqual(['sweep', '--namespace', `${ns},${otherNs}`])
  const account = `--as=system:serviceaccount:${home}:${serviceAccountOf(docs)}`
  const can = (verb: string, resource: string, namespace: string): string => kubectl('auth', 'can-i', verb, resource, '-n', namespace, account).stdout.trim()
  expect([can('delete', 'jobs', ns), can('create', 'leases.coordination.k8s.io', otherNs)]).toEqual(['yes', 'yes'])
  expect([can('delete', 'jobs', unlistedNs), can('list', 'jobs', unlistedNs), can('patch', 'jobs', ns)]).toEqual(['no', 'no', 'no'])
  // Pods and their logs only where it sweeps: not kube-system's, nor another namespace's.
  const canLog = (namespace: string): string => kubectl('auth', 'can-i', 'get', 'pods', '--subresource=log', '-n', namespace, account).stdout.trim()
  expect([can('list', 'pods', ns), canLog(otherNs)]).toEqual(['yes', 'yes'])
  expect(['kube-system', unlistedNs].flatMap((n) => [can('list', 'pods', n), canLog(n)])).toEqual(['no', 'no', 'no', 'no'])

  await expiredJob(ns, 'listed-expired')
  await expiredJob(otherNs, 'listed-expired-other', 'succeed')
  const unlistedUid = await expiredJob(unlistedNs, 'unlisted-expired', 'succeed')
  await expire()
  const run = await runAsPod(home, serviceAccountOf(docs), container, rootfs, ['--json'])
  expect(run.stderr).not.toContain('warning:') // no "no lock": the Roles allow the Leases
  expect(run.code).toBe(0)
  const result = resultOf(run)
  expect([result.errors, result.warnings]).toEqual([[], []])
  // (What the least-privilege test's refused runs left behind is swept too: not counted here.)
  const pruned = result.pruned.filter((j) => !j.name.startsWith('least-')).map((j) => `${j.namespace}/${j.name}`)
  expect(pruned.sort()).toEqual([`${ns}/listed-expired`, `${otherNs}/listed-expired-other`].sort())
  expect((await getJob(unlistedNs, 'unlisted-expired'))?.metadata?.uid).toBe(unlistedUid)
})

test('logs.s3: the CronJob’s sweep saves the failed Job’s log and job.json to the bucket (the cluster’s versitygw), with credentials from a Secret, before it deletes the Job', async () => {
  const endpoint = process.env.JOB_SWEEPER_S3_ENDPOINT ?? ''
  const Bucket = process.env.JOB_SWEEPER_S3_BUCKET ?? ''
  const prefix = `chart-${suffix}`
  await coreApi().createNamespacedSecret({
    namespace: home,
    body: {
      metadata: { name: 'sweep-logs-s3' },
      stringData: { AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID ?? '', AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY ?? '' }
    }
  })
  install(
    s3Release,
    '--set',
    `namespaces={${ns}}`,
    '--set',
    `logs.s3=s3://${Bucket}/${prefix}`,
    '--set',
    `logs.s3Endpoint=${endpoint}`,
    '--set',
    `logs.region=${process.env.AWS_REGION ?? ''}`,
    '--set',
    'logs.credentialsSecret=sweep-logs-s3'
  )
  const docs = installed(s3Release)
  const container = sweepContainer(docs)
  expect(container.args).toEqual(expect.arrayContaining(['--logs-dir', `s3://${Bucket}/${prefix}`, '--s3-endpoint', endpoint]))
  const s3Uid = await expiredJob(ns, 's3-expired')
  await expire()
  const run = await runAsPod(home, serviceAccountOf(docs), container, rootfs, ['--json'])
  expect(run.code).toBe(0)
  const result = resultOf(run)
  expect([result.errors, result.warnings]).toEqual([[], []])
  expect(result.pruned.map((j) => `${j.namespace}/${j.name}`)).toContain(`${ns}/s3-expired`)
  expect(`${run.stdout}\n${run.stderr}`).not.toContain(process.env.AWS_SECRET_ACCESS_KEY ?? '-')
  const s3 = new S3Client({ endpoint, forcePathStyle: true })
  try {
    const keys = await keysUnder(s3, Bucket, `${prefix}/${ns}/s3-expired/`)
    expect(keys.some((k) => k.endsWith('/main.log'))).toBe(true)
    expect(keys).toContain(`${prefix}/${ns}/s3-expired/${s3Uid}/job.json`)
    const log = keys.find((k) => k.endsWith('/main.log')) ?? ''
    expect((await objectBytes(s3, Bucket, log)).toString()).toContain('migrate: ERROR: relation "tuples" already exists') // kwok's pod.log
    // On the scratch volume, only the report file (TMPDIR/job-sweeper-<uid>/logs, the user's own): no log.
    const own = `job-sweeper-${process.getuid?.()}`
    expect(
      readdirSync(run.mounts.get('/scratch') ?? '-', { recursive: true })
        .map(String)
        .sort()
    ).toEqual([own, `${own}/logs`, `${own}/logs/job-sweeper-sweep.json`].sort())
  } finally {
    s3.destroy()
  }
})

test('logs.persistence: a claim the chart creates (kept on uninstall), mounted at /logs, where the sweep saves the logs; or a claim of yours; never with a bucket too', async () => {
  const render = (...sets: string[]) =>
    helm('template', 'x', chart, '--kube-version', pinnedKubernetesVersion(), ...['namespaces={jobs}', ...sets].flatMap((s) => ['--set', s]))
  const own = render('logs.persistence.existingClaim=team-logs', 'logs.persistence.enabled=true')
  expect(own.code).toBe(0)
  expect(documents(own.stdout).map((d) => d.kind)).not.toContain('PersistentVolumeClaim')
  const ownCronJob = documents(own.stdout).find((d) => d.kind === 'CronJob') as unknown as V1CronJob
  expect(ownCronJob.spec?.jobTemplate.spec?.template.spec?.volumes?.find((v) => v.name === 'logs')?.persistentVolumeClaim?.claimName).toBe('team-logs')
  const both = render('logs.persistence.enabled=true', 'logs.s3=s3://bucket/logs')
  expect([both.code, both.stderr]).toEqual([
    1,
    expect.stringContaining('logs.s3 and logs.persistence.enabled: expected one place for the logs, a bucket or a claim')
  ])

  install(pvcRelease, '--set', `namespaces={${ns}}`, '--set', 'logs.persistence.enabled=true', '--set', 'logs.persistence.size=2Gi')
  const docs = installed(pvcRelease)
  const claim = docs.find((d) => d.kind === 'PersistentVolumeClaim') as unknown as {
    metadata: { name: string; annotations?: Record<string, string> }
    spec: { resources: { requests: { storage: string } } }
  }
  expect([claim.metadata.annotations?.['helm.sh/resource-policy'], claim.spec.resources.requests.storage]).toEqual(['keep', '2Gi'])
  const container = sweepContainer(docs)
  expect(container.args).toEqual(expect.arrayContaining(['--logs-dir', '/logs']))
  const podSpec = (docs.find((d) => d.kind === 'CronJob') as unknown as V1CronJob).spec?.jobTemplate.spec?.template.spec
  expect(podSpec?.securityContext?.fsGroup).toBe(1000)
  expect(podSpec?.volumes?.find((v) => v.name === 'logs')?.persistentVolumeClaim?.claimName).toBe(claim.metadata.name)

  const pvcUid = await expiredJob(ns, 'pvc-expired')
  await expire()
  const run = await runAsPod(home, serviceAccountOf(docs), container, rootfs, ['--json'])
  expect(run.code).toBe(0)
  expect(resultOf(run).pruned.map((j) => `${j.namespace}/${j.name}`)).toContain(`${ns}/pvc-expired`)
  // The log is on the claim; the scratch volume holds nothing of it.
  const logs = savedFolder(run.mounts.get('/logs') ?? '-', ns, 'pvc-expired', pvcUid)
  const [pod] = existsSync(logs) ? readdirSync(logs).filter((f) => f !== 'job.json') : []
  expect(readFileSync(join(logs, pod ?? '-', 'main.log'), 'utf8')).toContain('migrate: ERROR: relation "tuples" already exists')
  expect(existsSync(join(logs, 'job.json'))).toBe(true)
  expect(existsSync(join(run.mounts.get('/scratch') ?? '-', 'logs'))).toBe(false)
})

test('keeper.enabled with allNamespaces: the keeper keeps every namespace (--all-namespaces, a ClusterRole of its rights, no delete); its post-delete hook’s command, as the keeper, lets go of a Job held in any namespace; helm uninstall runs the hook and leaves nothing', async () => {
  await coreApi().createNamespacedSecret({
    namespace: home,
    body: {
      metadata: { name: 'keeper-logs-s3' },
      stringData: { AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID ?? '', AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY ?? '' }
    }
  })
  const logs = `s3://${process.env.JOB_SWEEPER_S3_BUCKET ?? ''}/chart-keeper-${suffix}`
  install(
    keeperRelease,
    '--set',
    'allNamespaces=true',
    '--set',
    'keeper.enabled=true',
    '--set',
    `logs.s3=${logs}`,
    '--set',
    `logs.s3Endpoint=${process.env.JOB_SWEEPER_S3_ENDPOINT ?? ''}`,
    '--set',
    'logs.credentialsSecret=keeper-logs-s3',
    '--set',
    `logs.region=${process.env.AWS_REGION ?? ''}`
  )
  const docs = installed(keeperRelease)
  const deployment = docs.find((d) => d.kind === 'Deployment') as unknown as V1Deployment
  const args = deployment.spec?.template.spec?.containers[0].args ?? []
  expect(args).toContain('--all-namespaces')
  expect(args).not.toContain('--namespace')
  const keeperAccount = deployment.spec?.template.spec?.serviceAccountName ?? ''
  const as = `--as=system:serviceaccount:${home}:${keeperAccount}`
  const can = (...what: string[]): string => kubectl('auth', 'can-i', ...what, as).stdout.trim()
  expect([
    can('watch', 'jobs.batch', '--all-namespaces'),
    can('patch', 'jobs.batch', '-n', otherNs),
    can('get', 'pods', '--subresource=log', '-n', ns)
  ]).toEqual(['yes', 'yes', 'yes'])
  expect([can('delete', 'jobs.batch', '-n', ns), can('patch', 'pods', '-n', ns)]).toEqual(['no', 'no'])

  // A running Job the keeper held in a namespace no value names; the keeper is gone (no Lease).
  const held = await createJob({ namespace: otherNs, name: 'keeper-held', behaviour: 'hold', labels: { [MANAGED_LABEL]: 'true' } })
  expect(
    kubectl('patch', 'job', 'keeper-held', '-n', otherNs, '--type=merge', '-p', JSON.stringify({ metadata: { finalizers: ['job-sweeper.io/logs'] } })).code
  ).toBe(0)
  const hooks = documents(helm('get', 'hooks', keeperRelease, '-n', home).stdout)
  const hook = hooks.find((d) => d.kind === 'Job') as unknown as V1Job
  const container = hook.spec?.template.spec?.containers[0] as V1Container
  expect(container.args).toEqual(expect.arrayContaining(['--all-namespaces', '--let-go']))
  const run = await runAsPod(home, keeperAccount, container, rootfs)
  expect({ code: run.code, stderr: run.stderr }).toMatchObject({ code: 0 })
  expect(run.stderr).toContain(`released ${otherNs}/keeper-held unarchived: the keeper is being removed (--let-go) while it still runs`)
  expect(run.stderr).not.toContain(run.token)
  const after = await getJob(otherNs, 'keeper-held')
  expect([after?.metadata?.uid, after?.metadata?.finalizers ?? []]).toEqual([held.metadata?.uid, []])

  // The CronJob's sweep beside the keeper: told where its Lease is, with patch on Jobs (to let go of
  // a hold) and get on that one Lease, no more.
  const sweep = sweepContainer(docs)
  expect(sweep.args).toEqual(expect.arrayContaining(['--keeper-namespace', home]))
  const sweepAs = `--as=system:serviceaccount:${home}:${serviceAccountOf(docs)}`
  const sweepCan = (...what: string[]): string => kubectl('auth', 'can-i', ...what, sweepAs).stdout.trim()
  expect([
    sweepCan('patch', 'jobs.batch', '-n', otherNs),
    sweepCan('get', 'leases.coordination.k8s.io/job-sweeper-keeper', '-n', home),
    sweepCan('get', 'leases.coordination.k8s.io/another', '-n', home),
    sweepCan('update', 'jobs.batch', '-n', otherNs)
  ]).toEqual(['yes', 'yes', 'no', 'no'])
  // No keeper runs (no Lease): a held Job kubectl deleted is saved to the bucket by the sweep, and let go.
  const narrowed = { [MANAGED_LABEL]: 'true', 'job-sweeper.test/chart': suffix } // suites share the cluster: this test's Jobs only
  const orphan = await createJob({ namespace: otherNs, name: 'keeper-orphan', behaviour: 'fail', labels: narrowed })
  await waitForJobCondition(otherNs, 'keeper-orphan', 'Failed')
  expect(
    kubectl('patch', 'job', 'keeper-orphan', '-n', otherNs, '--type=merge', '-p', JSON.stringify({ metadata: { finalizers: ['job-sweeper.io/logs'] } })).code
  ).toBe(0)
  expect(kubectl('delete', 'job', 'keeper-orphan', '-n', otherNs, '--wait=false').code).toBe(0)
  const selector = Object.entries(narrowed)
    .map(([k, v]) => `${k}=${v}`)
    .join(',')
  const sweepArgs = sweep.args?.map((a, i) => (sweep.args?.[i - 1] === '--selector' ? selector : a))
  const swept = await runAsPod(home, serviceAccountOf(docs), { ...sweep, args: sweepArgs }, rootfs)
  expect({ code: swept.code, stderr: swept.stderr }).toMatchObject({ code: 0 })
  expect(swept.stdout + swept.stderr).toContain(
    `let go of the keeper's hold on Job ${otherNs}/keeper-orphan (no keeper: no Lease job-sweeper-keeper in ${home})`
  )
  await eventually(
    'the held Job to go',
    () => getJob(otherNs, 'keeper-orphan'),
    (j) => j === undefined
  )
  const store = new S3Client({ endpoint: process.env.JOB_SWEEPER_S3_ENDPOINT, forcePathStyle: true })
  try {
    expect(await keysUnder(store, process.env.JOB_SWEEPER_S3_BUCKET ?? '', `chart-keeper-${suffix}/${otherNs}/keeper-orphan/`)).toContain(
      `chart-keeper-${suffix}/${otherNs}/keeper-orphan/${orphan.metadata?.uid}/job.json`
    )
  } finally {
    store.destroy()
  }

  // helm uninstall runs the hook (kwok completes its pod), then deletes its objects.
  const clusterRoles = (): string => kubectl('get', 'clusterroles', '-l', `app.kubernetes.io/instance=${keeperRelease}`, '-o', 'name').stdout.trim()
  expect(clusterRoles()).toContain('-job-sweeper-keeper') // positive control: the keeper's, before
  const uninstalled = helm('uninstall', keeperRelease, '-n', home)
  expect({ code: uninstalled.code, stderr: uninstalled.stderr }).toMatchObject({ code: 0 })
  const left = kubectl('get', 'jobs,serviceaccounts,roles,rolebindings', '-n', home, '-l', `app.kubernetes.io/instance=${keeperRelease}`, '-o', 'name')
  expect(left.stdout.trim()).toBe('')
  expect(clusterRoles()).toBe('')
  await batchApi().deleteNamespacedJob({ namespace: otherNs, name: 'keeper-held', propagationPolicy: 'Background' })
})

test('helm upgrade that drops namespaces the keeper kept, then turns it off, leaves no finalizer there: a post-upgrade hook (keeper --let-go, with rights in those namespaces only) lets go of what it held; a namespace still kept, and one never kept, stay held; helm template renders no such hook', async () => {
  await coreApi()
    .createNamespacedSecret({
      namespace: home,
      body: {
        metadata: { name: 'keeper-logs-s3' },
        stringData: { AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID ?? '', AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY ?? '' }
      }
    })
    .catch(() => undefined) // the keeper test above made it
  const values = (namespaces: string[], enabled = true): string[] => [
    '--set',
    `keeper.enabled=${enabled}`,
    '--set',
    `namespaces={${namespaces.join(',')}}`,
    '--set',
    `logs.s3=s3://${process.env.JOB_SWEEPER_S3_BUCKET ?? ''}/chart-keeper-off-${suffix}`,
    '--set',
    `logs.s3Endpoint=${process.env.JOB_SWEEPER_S3_ENDPOINT ?? ''}`,
    '--set',
    'logs.credentialsSecret=keeper-logs-s3',
    '--set',
    `logs.region=${process.env.AWS_REGION ?? ''}`
  ]
  install(keeperOffRelease, ...values([ns, otherNs]))
  // The keeper reads pods and their logs only where it keeps: not kube-system's, nor another namespace's.
  const keeperDeployment = installed(keeperOffRelease).find((d) => d.kind === 'Deployment') as unknown as V1Deployment
  const keeperAs = `--as=system:serviceaccount:${home}:${keeperDeployment.spec?.template.spec?.serviceAccountName ?? ''}`
  const keeperCan = (namespace: string, ...what: string[]): string => kubectl('auth', 'can-i', ...what, '-n', namespace, keeperAs).stdout.trim()
  const reads = (n: string): string[] => [keeperCan(n, 'list', 'pods'), keeperCan(n, 'get', 'pods', '--subresource=log'), keeperCan(n, 'list', 'jobs.batch')]
  expect([...reads(ns), ...reads(otherNs)]).toEqual(['yes', 'yes', 'yes', 'yes', 'yes', 'yes'])
  expect(['kube-system', unlistedNs].flatMap(reads)).toEqual(['no', 'no', 'no', 'no', 'no', 'no'])
  // It deletes the pods of a held Job deleted while they ran (their last lines followed), there only.
  expect([ns, otherNs, 'kube-system', unlistedNs].map((n) => keeperCan(n, 'delete', 'pods'))).toEqual(['yes', 'yes', 'no', 'no'])
  // Running Jobs the keeper held (kwok runs no keeper: the finalizer put as it puts it), and one in a
  // namespace this keeper never kept (another keeper's hold: a decoy).
  const labels = { [MANAGED_LABEL]: 'true', 'job-sweeper.test/chart': `off-${suffix}` }
  const hold = async (namespace: string, name: string): Promise<string> => {
    const job = await createJob({ namespace, name, behaviour: 'hold', labels })
    const patched = kubectl('patch', 'job', name, '-n', namespace, '--type=merge', '-p', JSON.stringify({ metadata: { finalizers: ['job-sweeper.io/logs'] } }))
    expect(patched.code).toBe(0)
    return job.metadata?.uid ?? ''
  }
  await hold(ns, 'off-kept')
  await hold(otherNs, 'off-dropped')
  await hold(unlistedNs, 'off-decoy')
  const finalizers = async (namespace: string, name: string): Promise<string[]> => (await getJob(namespace, name))?.metadata?.finalizers ?? []

  /** The upgrade's post-upgrade hook: its Job's container, run with the hook's own rights (kwok only completed its pod). */
  const upgradeHook = async (): Promise<{ args: string[]; run: PodRun; mayPatch: string[] }> => {
    const hooks = documents(helm('get', 'hooks', keeperOffRelease, '-n', home).stdout).filter((d) => d.metadata.name.includes('keeper-let-go-upgrade'))
    const job = hooks.find((d) => d.kind === 'Job') as unknown as V1Job
    expect((job.metadata?.annotations ?? {})['helm.sh/hook']).toBe('post-upgrade')
    const container = job.spec?.template.spec?.containers[0] as V1Container
    // Helm deleted the hook's ServiceAccount and Roles once it succeeded: made again as rendered, for the run.
    const rights = join(mkdtempSync(join(tmpdir(), 'keeper-off-')), 'rights.json')
    const namespaced = new Set(['ServiceAccount', 'Role', 'RoleBinding'])
    const items = hooks
      .filter((d) => d.kind !== 'Job')
      .map((d) => (namespaced.has(d.kind) ? { ...d, metadata: { ...d.metadata, namespace: d.metadata.namespace ?? home } } : d))
    writeFileSync(rights, JSON.stringify({ apiVersion: 'v1', kind: 'List', items }))
    const applied = kubectl('apply', '-f', rights)
    expect({ code: applied.code, stderr: applied.code === 0 ? '' : applied.stderr }).toEqual({ code: 0, stderr: '' })
    try {
      const account = job.spec?.template.spec?.serviceAccountName ?? ''
      const run = await runAsPod(home, account, container, rootfs)
      expect(run.stderr).not.toContain(run.token)
      // Where its rights let it patch Jobs (let go of a hold).
      const as = `--as=system:serviceaccount:${home}:${account}`
      const mayPatch = [ns, otherNs, unlistedNs].filter((n) => kubectl('auth', 'can-i', 'patch', 'jobs.batch', '-n', n, as).stdout.trim() === 'yes')
      return { args: container.args ?? [], run, mayPatch }
    } finally {
      kubectl('delete', '-f', rights, '--ignore-not-found')
    }
  }

  // namespaces shrunk to one: the keeper stays, and lets go of nothing in the namespace it dropped.
  const shrunk = helm('upgrade', keeperOffRelease, chart, '-n', home, ...values([ns]))
  expect({ code: shrunk.code, stderr: shrunk.stderr }).toMatchObject({ code: 0 })
  const dropped = await upgradeHook()
  expect(dropped.args).toEqual(expect.arrayContaining(['--namespace', otherNs, '--let-go']))
  expect(dropped.args).not.toContain(ns)
  expect({ code: dropped.run.code, stderr: dropped.run.stderr }).toMatchObject({ code: 0 })
  expect(dropped.run.stderr).toContain(`released ${otherNs}/off-dropped unarchived: the keeper is being removed (--let-go) while it still runs`)
  expect(await finalizers(otherNs, 'off-dropped')).toEqual([])
  expect(await finalizers(ns, 'off-kept')).toEqual(['job-sweeper.io/logs']) // still kept: left to the keeper
  expect(dropped.mayPatch).toEqual([otherNs]) // the hook's rights: the namespace dropped, no other

  // The keeper turned off: the post-upgrade hook lets go of what it held in the namespace it kept.
  const off = helm('upgrade', keeperOffRelease, chart, '-n', home, ...values([ns], false))
  expect({ code: off.code, stderr: off.stderr }).toMatchObject({ code: 0 })
  expect(documents(helm('get', 'manifest', keeperOffRelease, '-n', home).stdout).filter((d) => d.kind === 'Deployment')).toEqual([])
  const turnedOff = await upgradeHook()
  expect(turnedOff.args).toEqual(expect.arrayContaining(['--namespace', ns, '--let-go']))
  expect(turnedOff.mayPatch).toEqual([ns])
  expect({ code: turnedOff.run.code, stderr: turnedOff.run.stderr }).toMatchObject({ code: 0 })
  expect(await finalizers(ns, 'off-kept')).toEqual([])
  // The Lease let-go took while it worked is released.
  expect(kubectl('get', 'lease', 'job-sweeper-keeper', '-n', home).code).not.toBe(0)
  // Nothing holds them: deleted, they go.
  for (const [namespace, name] of [
    [ns, 'off-kept'],
    [otherNs, 'off-dropped']
  ]) {
    await batchApi().deleteNamespacedJob({ namespace, name, propagationPolicy: 'Background' })
    await eventually(
      `${namespace}/${name} gone`,
      () => getJob(namespace, name),
      (j) => j === undefined
    )
  }
  // The decoy, in a namespace this keeper never kept, is still held; the other decoys are checked after all.
  expect(await finalizers(unlistedNs, 'off-decoy')).toEqual(['job-sweeper.io/logs'])
  kubectl('patch', 'job', 'off-decoy', '-n', unlistedNs, '--type=merge', '-p', JSON.stringify({ metadata: { finalizers: [] } }))
  await batchApi().deleteNamespacedJob({ namespace: unlistedNs, name: 'off-decoy', propagationPolicy: 'Background' })

  // helm template reads nothing from the cluster: no upgrade hook.
  const rendered = helm('template', keeperOffRelease, chart, '-n', home, '--kube-version', pinnedKubernetesVersion(), ...values([ns], false))
  expect(rendered.code).toBe(0)
  expect(rendered.stdout).not.toContain('keeper-let-go-upgrade')
})
