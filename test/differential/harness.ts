// The differential harness: a group of scenarios shares a chart written at test time, a pair of
// fresh namespaces with decoys, and releases installed side by side. A scenario makes its one
// change (values on top of the release's deployed ones, and whatever someone else does to the
// cluster first), renders the release, asks preflight, runs pre when preflight counts on it, runs
// the real helm upgrade with the same values, and compares.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pinnedKubernetesVersion } from '../cluster/cluster.ts'
import { batchApi, createNamespace, deleteNamespace, eventually, jobCondition, type CommandResult } from '../cluster/testenv.ts'
import { runCli, type CliRun } from '../bin.ts'
import { createDecoys, missingDecoys, type Decoy } from '../decoys.ts'
import { agreement, readPreflight, type Agreement, type PreflightSays } from './agreement.ts'
import { helmAsync, kubectlOk } from './commands.ts'

export type Values = Record<string, unknown>

/** What helm upgrade does on a set, found by running it: applies (with a warning matching `warns`), or fails with an error matching the pattern. */
export type Outcome = 'applies' | { warns: RegExp } | RegExp

/** The same outcome on both sets: where Helm 3's patch and Helm 4's server-side apply meet the same answer. */
export const onBoth = (outcome: Outcome): Record<3 | 4, Outcome> => ({ 3: outcome, 4: outcome })

/** A chart: templates/ (and crds/) as file name → text. */
export interface ChartFiles {
  templates: Record<string, string>
  crds?: Record<string, string>
}

/** One release of a group: its name, namespace, chart, and the values of its last deployed revision. */
export class Release {
  readonly name: string
  readonly namespace: string
  readonly chart: string
  /** The values of the last revision that deployed; a scenario's change goes on top of them. */
  deployed: Values

  constructor(name: string, namespace: string, chart: string, deployed: Values) {
    this.name = name
    this.namespace = namespace
    this.chart = chart
    this.deployed = deployed
  }

  private valuesFile(values: Values): string {
    const file = join(mkdtempSync(join(tmpdir(), `values-${this.name}-`)), 'values.json')
    writeFileSync(file, JSON.stringify(values))
    return file
  }

  /**
   * The release rendered with these values: by helm template for the pinned Kubernetes version, or
   * `exactly`, by `helm upgrade --dry-run=server` (what the upgrade itself renders); the file it wrote.
   */
  async render(values: Values, exactly: boolean, ...flags: string[]): Promise<string> {
    const file = this.valuesFile(values)
    const out = exactly
      ? await helmAsync('upgrade', this.name, this.chart, '-n', this.namespace, '-f', file, '--dry-run=server', ...flags)
      : await helmAsync('template', this.name, this.chart, '-n', this.namespace, '-f', file, '--kube-version', pinnedKubernetesVersion(), ...flags)
    if (out.code !== 0) throw new Error(`rendering ${this.name} failed: ${out.stderr}`)
    const manifest = join(mkdtempSync(join(tmpdir(), `rendered-${this.name}-`)), 'rendered.yaml')
    writeFileSync(manifest, out.stdout)
    return manifest
  }

  /** helm install|upgrade with these values (and flags); on success they become the deployed values. */
  async helm(verb: 'install' | 'upgrade', values: Values, ...flags: string[]): Promise<CommandResult> {
    const out = await helmAsync(verb, this.name, this.chart, '-n', this.namespace, '-f', this.valuesFile(values), ...flags)
    if (out.code === 0) this.deployed = values
    return out
  }

  /** The args of a helm command with these values, for one started in the background. */
  args(verb: 'install' | 'upgrade', values: Values, ...flags: string[]): string[] {
    return [verb, this.name, this.chart, '-n', this.namespace, '-f', this.valuesFile(values), ...flags]
  }
}

/** What a group's scenarios see. */
export interface GroupEnv {
  ns: string
  /** Another namespace: decoys live there, and a chart may put an object there. */
  otherNs: string
  /** A name unique to this run, for cluster-scoped objects (CRDs, policies). */
  runId: string
  chart: string
  releases: Map<string, Release>
  decoys: Decoy[]
}

export interface DiffScenario {
  /** The one change, as the test's name. */
  name: string
  /** The group's release it upgrades (default: the first). */
  release?: string
  /** The values it changes, on top of the release's deployed values. */
  values?: Values | ((env: GroupEnv, release: Release) => Values | Promise<Values>)
  /** What happens to the cluster first (drift, a policy, a cancelled deploy). */
  before?: (env: GroupEnv, release: Release) => Promise<void>
  /** A first install: rendered with --include-crds, and run as helm upgrade --install. */
  firstInstall?: boolean
  /** What helm upgrade does on each set (Helm 3 on the oldest, Helm 4 on the newest), found by running it. */
  helm: Record<3 | 4, Outcome>
  /** Preflight counts on pre to clear a Job, and pre runs and goes on (exit 0) before the upgrade. */
  preRuns?: boolean
  /** Once helm upgrade applied: what the cluster must then hold, which shows the change was the one named (a problem, or undefined). */
  applied?: (env: GroupEnv, release: Release) => Promise<string | undefined>
}

export interface Group {
  title: string
  /** The prefix of its namespaces. */
  prefix: string
  chart: (env: GroupEnv) => ChartFiles
  /** The releases, each installed before the scenarios (unless `install: false`) with these values; the first one's Jobs get the decoys. */
  releases: { name: string; values: (env: GroupEnv) => Values; install?: boolean; flags?: string[] }[]
  /** Before the installs (a CRD the chart's objects need). */
  setup?: (env: GroupEnv) => Promise<void>
  /** Its scenarios render as the upgrade renders (helm upgrade --dry-run=server), not by helm template. */
  exactRendering?: boolean
  /** After the scenarios, before the namespaces go (cluster-scoped objects). */
  teardown?: (env: GroupEnv) => Promise<void>
  scenarios: DiffScenario[]
}

function writeChart(name: string, files: ChartFiles): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'differential-')), name)
  mkdirSync(join(dir, 'templates'), { recursive: true })
  writeFileSync(join(dir, 'Chart.yaml'), `apiVersion: v2\nname: ${name}\nversion: 0.1.0\n`)
  for (const [file, text] of Object.entries(files.templates)) writeFileSync(join(dir, 'templates', file), text)
  if (files.crds) {
    mkdirSync(join(dir, 'crds'))
    for (const [file, text] of Object.entries(files.crds)) writeFileSync(join(dir, 'crds', file), text)
  }
  return dir
}

/** Waits until every Job of the release that the Job controller runs has finished, so that pre meets no running Job of the install. */
async function jobsFinished(env: GroupEnv, release: string): Promise<void> {
  for (const namespace of [env.ns, env.otherNs]) {
    await eventually(
      `the Jobs of release ${release} in ${namespace} to finish`,
      async () => (await batchApi().listNamespacedJob({ namespace })).items,
      (jobs) =>
        jobs.filter((j) => j.metadata?.annotations?.['meta.helm.sh/release-name'] === release && !j.spec?.managedBy).every((j) => jobCondition(j) !== undefined)
    )
  }
}

/** Namespaces, decoys, chart and releases for a group: before its scenarios; gone after. */
export async function startGroup(group: Group, runId: string): Promise<GroupEnv> {
  const ns = await createNamespace(group.prefix)
  const otherNs = await createNamespace(`${group.prefix}-other`)
  const env: GroupEnv = { ns, otherNs, runId, chart: '', releases: new Map(), decoys: [] }
  env.decoys = await createDecoys(ns, otherNs, group.releases[0].name)
  env.chart = writeChart(group.prefix, group.chart(env))
  await group.setup?.(env)
  await Promise.all(
    group.releases.map(async (r) => {
      // A release not installed yet starts from its values too: a scenario's first install adds its change.
      const release = new Release(r.name, ns, env.chart, r.values(env))
      env.releases.set(r.name, release)
      if (r.install === false) return
      const installed = await release.helm('install', release.deployed, ...(r.flags ?? []))
      if (installed.code !== 0) throw new Error(`helm install ${r.name} failed: ${installed.stderr}`)
      await jobsFinished(env, r.name)
    })
  )
  return env
}

export async function stopGroup(group: Group, env: GroupEnv | undefined): Promise<void> {
  if (!env) return
  await group.teardown?.(env)
  await Promise.all([deleteNamespace(env.ns), deleteNamespace(env.otherNs)])
}

/** The decoys gone or replaced (expected: none), checked after each scenario. */
export const lostDecoys = (env: GroupEnv): Promise<string[]> => missingDecoys(env.decoys)

/** One scenario's run: preflight, pre (if it ran), helm upgrade, and whether they agree. */
export interface ScenarioRun {
  preflight: CliRun
  says?: PreflightSays
  pre?: CliRun
  upgrade: CommandResult
  agreement: Agreement
  /** What `applied` found wrong after an upgrade that applied. */
  appliedWrong?: string
}

export async function runScenario(env: GroupEnv, scenario: DiffScenario, exactRendering = false): Promise<ScenarioRun> {
  const release = env.releases.get(scenario.release ?? [...env.releases.keys()][0])
  if (!release) throw new Error(`scenario '${scenario.name}': no release ${scenario.release} in its group`)
  await scenario.before?.(env, release)
  const change = typeof scenario.values === 'function' ? await scenario.values(env, release) : (scenario.values ?? {})
  const values = { ...release.deployed, ...change }
  const manifest = await release.render(values, exactRendering, ...(scenario.firstInstall ? (exactRendering ? ['--install'] : ['--include-crds']) : []))
  const preflight = await runCli(['preflight', '--manifest', manifest, '--namespace', env.ns, '--release', release.name, '--json'])
  let says: PreflightSays | undefined
  let unreadable: string | undefined
  try {
    says = readPreflight(JSON.parse(preflight.stdout))
  } catch (e) {
    unreadable = `preflight's output is no verdict (exit ${preflight.code}): ${(e as Error).message}`
  }
  // A deploy runs pre before the upgrade; it matters when preflight counts on pre to clear Jobs.
  const pre = says && says.cleared.length > 0 ? await runCli(['pre', '--manifest', manifest, '--namespace', env.ns, '--release', release.name]) : undefined
  const upgrade = await release.helm('upgrade', values, ...(scenario.firstInstall ? ['--install'] : []))
  const agreed = says ? agreement(says, upgrade) : { agrees: false, why: [unreadable as string] }
  const appliedWrong = upgrade.code === 0 ? await scenario.applied?.(env, release) : undefined
  return { preflight, says, pre, upgrade, agreement: agreed, appliedWrong }
}

/** For `applied`: the live field at `path` (kubectl's jsonpath) of the object in the group's namespace must read `expected`. */
export function reads(kind: string, name: string, path: string, expected: string): NonNullable<DiffScenario['applied']> {
  return async (env) => {
    const live = (await kubectlOk('get', kind, name, '-n', env.ns, '-o', `jsonpath={${path}}`)).trim()
    return live === expected ? undefined : `${kind} ${name} has ${path} = '${live}', not '${expected}'`
  }
}
