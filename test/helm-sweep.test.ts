// The helm sweep plugin (plugin.yaml; docs/helm-plugin.md) on the real cluster with the real helm:
// installed from this checkout by `helm plugin install` into Helm homes of the suite's own
// (HELM_DATA_HOME, HELM_CONFIG_HOME, HELM_CACHE_HOME in a temp directory, so nothing global
// changes; Helm 4.3 installs into $HELM_DATA_HOME/plugins whatever HELM_PLUGINS says), then
// `helm sweep upgrade` as a user types it. Needs the bundle (npm run bundle): the plugin runs
// dist/plugin/helm-sweep.mjs, which runs dist/cli/job-sweeper.mjs.
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { expectSucceeded, outputNames, runAction } from './action.ts'
import { pinnedKubernetesVersion } from './cluster/cluster.ts'
import { eventually, getJob, kubectl, run, testCluster, waitForJobCondition, type CommandResult } from './cluster/testenv.ts'
import { installChart } from './preflight-demo.ts'
import { chart, helmChart, immutableJobError, release, useScenario } from './scenario.ts'

const root = join(import.meta.dirname, '..')
const installOnlyChart = join(import.meta.dirname, 'chart', 'install-only')
const preflightDemoChart = join(import.meta.dirname, 'chart', 'preflight-demo')

// Helm's homes for this suite: the plugin is installed here, not in the user's.
const home = mkdtempSync(join(tmpdir(), 'helm-sweep-home-'))
const helmEnv: Record<string, string> = {
  HELM_CONFIG_HOME: join(home, 'config'),
  HELM_CACHE_HOME: join(home, 'cache'),
  HELM_DATA_HOME: join(home, 'data')
}
const helm = (...args: string[]): CommandResult => run('helm', args, helmEnv)

/** `helm sweep <args>`, with the cluster's environment and Helm's homes above; it runs while the test goes on. */
function helmSweep(args: string[], env: Record<string, string> = {}): Promise<CommandResult> {
  const cluster = testCluster()
  const child = spawn('helm', ['sweep', ...args], {
    env: { ...process.env, KUBECONFIG: cluster.kubeconfig, PATH: `${cluster.binDir}:${process.env.PATH}`, ...helmEnv, ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()))
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()))
  return new Promise((resolve) => child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr })))
}

const newDir = (prefix: string): string => mkdtempSync(join(tmpdir(), prefix))

interface ReportJob {
  name: string
  result: string
  waited: boolean
  reason: string
  /** Saved log files, relative to logs-dir. */
  logs?: string[]
}
const report = (dir: string, phase: 'pre' | 'post'): { jobs: ReportJob[]; errors: string[] } =>
  JSON.parse(readFileSync(join(dir, `job-sweeper-${phase}.json`), 'utf8')) as { jobs: ReportJob[]; errors: string[] }

const revisions = (ns: string): { revision: number; status: string }[] =>
  JSON.parse(helm('history', release, '-n', ns, '-o', 'json').stdout || '[]') as { revision: number; status: string }[]

beforeAll(() => {
  const installed = helm('plugin', 'install', root)
  expect(installed).toMatchObject({ code: 0 })
  expect(helm('plugin', 'list').stdout).toMatch(/^sweep\s+0\.1\.0\s/m)
})

const scenario = useScenario('helm-sweep')
let ns: string
beforeEach(() => {
  ns = scenario.ns
})

test('the demo chart’s failing upgrade (changed migration Job, the old one still running) goes through with one helm sweep upgrade: waited on, log saved, -f, --set, --kube-context and --kubeconfig passed through', async () => {
  expect(helmChart('install', ns, { migrationVersion: '1', migrationRunFor: '45s' }).code).toBe(0)
  const migrate = `${release}-migrate`
  const hookUid = (await getJob(ns, `${release}-hook`))?.metadata?.uid
  expect(hookUid).toBeDefined()
  const old = await eventually(
    'the migration running',
    () => getJob(ns, migrate),
    (j) => j?.status?.active === 1
  )
  // Negative control: the plain upgrade fails on the Job.
  expect(helmChart('upgrade', ns, { migrationVersion: '2' }).stderr).toMatch(immutableJobError(ns, migrate))

  // A kubeconfig whose current context is a cluster that does not answer: only a --kube-context
  // that reaches helm and job-sweeper alike finds the release.
  const cluster = testCluster()
  const kubeconfig = join(newDir('helm-sweep-kube-'), 'config')
  writeFileSync(kubeconfig, readFileSync(cluster.kubeconfig))
  const good = kubectl('config', 'current-context', '--kubeconfig', kubeconfig).stdout.trim()
  const user = kubectl('config', 'view', '--kubeconfig', kubeconfig, '-o', `jsonpath={.contexts[?(@.name=="${good}")].context.user}`).stdout.trim()
  for (const args of [
    ['set-cluster', 'nowhere', '--server', 'https://127.0.0.1:1'],
    ['set-context', 'nowhere', '--cluster', 'nowhere', '--user', user],
    ['use-context', 'nowhere']
  ])
    expect(kubectl('config', ...args, '--kubeconfig', kubeconfig).code).toBe(0)
  const values = join(newDir('helm-sweep-values-'), 'values.yaml')
  writeFileSync(values, "migrationVersion: '2'\n")
  const logs = newDir('helm-sweep-logs-')

  const pending = helmSweep([
    'upgrade',
    release,
    chart,
    '-n',
    ns,
    '-f',
    values,
    '--set',
    'hookJob=false',
    '--kube-context',
    good,
    '--kubeconfig',
    kubeconfig,
    '--sweep-harvest-logs',
    'all',
    '--sweep-logs-dir',
    logs,
    '--sweep-wait-timeout',
    '2m'
  ])
  // While it waits, the old migration is still there, running.
  await new Promise((r) => setTimeout(r, 2000))
  expect((await getJob(ns, migrate))?.metadata?.uid).toBe(old?.metadata?.uid)
  const sweep = await pending
  expect({ code: sweep.code, stderr: sweep.stderr.slice(-3000) }).toEqual({ code: 0, stderr: expect.any(String) })

  const pre = report(logs, 'pre')
  expect(pre.jobs.filter((j) => j.result === 'pruned').map((j) => [j.name, j.waited])).toEqual([[migrate, true]])
  // Its log saved: what its pod wrote (kwok serves test/cluster/pod.log for every pod).
  const saved = pre.jobs.find((j) => j.name === migrate)?.logs ?? []
  expect(saved).toEqual([expect.stringMatching(new RegExp(`^${ns}/${migrate}/[\\w-]+/${migrate}-\\w+/migrate\\.log$`))])
  expect(readFileSync(join(logs, saved[0]), 'utf8')).toContain('migrate: connecting to database')

  // The upgrade ran with the arguments as given: -f's value, --set's, the release upgraded.
  const configMap = JSON.parse(kubectl('get', 'configmap', `${release}-config`, '-n', ns, '-o', 'json').stdout) as { data: Record<string, string> }
  expect(configMap.data.migrationVersion).toBe('2')
  expect(revisions(ns).at(-1)).toMatchObject({ status: 'deployed' })
  const now = await waitForJobCondition(ns, migrate, 'Complete')
  expect(now.metadata?.uid).not.toBe(old?.metadata?.uid)
  // --set hookJob=false reached the upgrade: the install's hook Job was not created again.
  expect((await getJob(ns, `${release}-hook`))?.metadata?.uid).toBe(hookUid)
  // post ran: the new migration has its TTL policy.
  expect(report(logs, 'post').errors).toEqual([])
  expect(now.metadata?.annotations?.['job-sweeper.io/ttl']).toBeDefined()
}, 180_000)

test('a chart whose Job renders on install only: the gate agrees with Helm, which upgrades it, where a helm template rendering would have deleted that Job', async () => {
  const helmInstall = run('helm', ['install', release, installOnlyChart, '-n', ns, '--set', 'version=1'])
  expect(helmInstall.code).toBe(0)
  const initJob = `${release}-init-db`
  await waitForJobCondition(ns, initJob, 'Complete')

  // The contrast: helm template renders the install-only Job for the upgrade too (changed), so pre
  // on that manifest plans to delete a Job the upgrade never writes (a dry run: nothing changes).
  const template = run('helm', ['template', release, installOnlyChart, '-n', ns, '--set', 'version=2', '--kube-version', pinnedKubernetesVersion()])
  const templated = join(newDir('helm-sweep-template-'), 'rendered.yaml')
  writeFileSync(templated, template.stdout)
  const dryLogs = newDir('helm-sweep-logs-')
  const dry = run(process.execPath, [
    join(root, 'dist', 'cli', 'job-sweeper.mjs'),
    'pre',
    '--release',
    release,
    '--manifest',
    templated,
    '-n',
    ns,
    '--dry-run',
    '--logs-dir',
    dryLogs
  ])
  expect(dry.code).toBe(0)
  expect(
    report(dryLogs, 'pre')
      .jobs.filter((j) => j.result === 'would-prune')
      .map((j) => j.name)
  ).toEqual([initJob])

  const logs = newDir('helm-sweep-logs-')
  const sweep = await helmSweep(['upgrade', release, installOnlyChart, '-n', ns, '--set', 'version=2', '--sweep-logs-dir', logs])
  expect({ code: sweep.code, stderr: sweep.stderr.slice(-3000) }).toEqual({ code: 0, stderr: expect.any(String) })
  // Rendered as the upgrade renders it, the Job is not in the manifest: pre leaves it, the preflight passes, Helm upgrades.
  const pre = report(logs, 'pre')
  expect(pre.errors).toEqual([])
  expect(pre.jobs.filter((j) => j.result === 'pruned')).toEqual([])
  expect(revisions(ns).map((r) => r.status)).toEqual(['superseded', 'deployed'])
})

test('an upgrade that would fail on a StatefulSet’s volumeClaimTemplates: nothing deleted, helm upgrade not run, exit non-zero naming it', async () => {
  await installChart(ns)
  const migrate = `${release}-migrate`
  const uid = (await getJob(ns, migrate))?.metadata?.uid
  const sweep = await helmSweep(['upgrade', release, preflightDemoChart, '-n', ns, '--set', 'storage=2Gi', '--set', 'migrationVersion=2'])
  expect(sweep.code).toBe(1)
  expect(sweep.stdout).toMatch(new RegExp(`fails +StatefulSet ${ns}/${release}-db +immutable: spec\\.volumeClaimTemplates\\[data\\]`))
  expect(sweep.stderr).toContain('helm sweep: pre failed with exit code 1: helm upgrade was not run')
  expect((await getJob(ns, migrate))?.metadata?.uid).toBe(uid)
  expect(revisions(ns).map((r) => r.status)).toEqual(['deployed'])
})

test('helm sweep upgrade --install of a new release; --dry-run first changes nothing', async () => {
  const dry = await helmSweep(['upgrade', '--install', release, chart, '-n', ns, '--dry-run'])
  expect(dry.code).toBe(0)
  expect(dry.stderr).toContain('helm sweep: dry run: nothing was changed; helm upgrade and post were not run')
  expect(revisions(ns)).toEqual([])

  const logs = newDir('helm-sweep-logs-')
  const sweep = await helmSweep(['upgrade', '--install', release, chart, '-n', ns, '--sweep-logs-dir', logs])
  expect({ code: sweep.code, stderr: sweep.stderr.slice(-3000) }).toEqual({ code: 0, stderr: expect.any(String) })
  expect(revisions(ns).map((r) => r.status)).toEqual(['deployed'])
  const migrate = await waitForJobCondition(ns, `${release}-migrate`, 'Complete')
  expect(report(logs, 'post').errors).toEqual([])
  expect(migrate.metadata?.annotations?.['job-sweeper.io/ttl']).toBeDefined()
  expect(existsSync(join(logs, 'job-sweeper-pre.json'))).toBe(true)
})

test('bad usage exits 2 before anything runs', async () => {
  const sweep = await helmSweep(['upgrade', release, chart, '-n', ns, '--sweep-release', 'other'])
  expect(sweep.code).toBe(2)
  expect(sweep.stderr).toContain("Invalid --sweep-release: helm sweep sets it from helm's own flags")
  const unknown = await helmSweep(['install', release, chart])
  expect([unknown.code, unknown.stderr]).toEqual([2, expect.stringContaining("Unknown command 'install': expected upgrade")])
})

describe("the action's chart input", () => {
  const withHelm = (): Record<string, string> => ({ PATH: `${testCluster().binDir}:${process.env.PATH}` })

  test('renders the chart as the upgrade will: the install-only Job is out of scope, the gate agrees with Helm', async () => {
    expect(run('helm', ['install', release, installOnlyChart, '-n', ns, '--set', 'version=1']).code).toBe(0)
    const initJob = `${release}-init-db`
    await waitForJobCondition(ns, initJob, 'Complete')
    const uid = (await getJob(ns, initJob))?.metadata?.uid
    const pre = await runAction({ release, chart: installOnlyChart, 'helm-args': "--set 'version=2'", namespace: ns }, { env: withHelm() })
    expectSucceeded(pre)
    expect(pre.stdout).toContain(`Rendering chart '${installOnlyChart}' as the upgrade will`)
    expect(outputNames(pre, 'pruned')).toEqual([])
    expect((await getJob(ns, initJob))?.metadata?.uid).toBe(uid)
    expect(run('helm', ['upgrade', release, installOnlyChart, '-n', ns, '--set', 'version=2']).code).toBe(0)
  })

  test('the changed migration is pruned and the upgrade then applies; without helm on PATH the step fails saying so, deleting nothing', async () => {
    expect(helmChart('install', ns, { migrationVersion: '1', hookJob: false }).code).toBe(0)
    const migrate = `${release}-migrate`
    const old = await waitForJobCondition(ns, migrate, 'Complete')
    const inputs = { release, chart, 'helm-args': '--set migrationVersion=2 --set hookJob=false', namespace: ns }
    const noHelm = await runAction(inputs, { env: { PATH: dirname(process.execPath) } })
    expect(noHelm.code).toBe(1)
    expect(noHelm.stdout).toContain(`::error::Invalid chart '${chart}': rendering it needs helm on PATH`)
    expect((await getJob(ns, migrate))?.metadata?.uid).toBe(old.metadata?.uid)

    const pre = await runAction(inputs, { env: withHelm() })
    expectSucceeded(pre)
    expect(outputNames(pre, 'pruned')).toEqual([migrate])
    expect(helmChart('upgrade', ns, { migrationVersion: '2', hookJob: false }).code).toBe(0)
  })
})
