// Public charts nobody here wrote, as the public-charts suites drive them: each comes from the Go
// module it ships in (scripts/public-charts.sh downloads the pinned versions into the machine's
// cache; no chart source is in this repository). helm install, upgrade and template of a release,
// with a values file of ours and values set one by one.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { dump } from 'js-yaml'
import { pinnedKubernetesVersion } from './cluster/cluster.ts'
import { helm, kubectl, type CommandResult } from './cluster/testenv.ts'

/** The charts scripts/public-charts.sh prepares, by name and version. */
export type PublicChart = 'loki-6.55.0' | 'metrics-server-3.12.2' | 'metrics-server-3.13.1' | 'kyverno-2.7.2' | 'kyverno-3.0.0' | 'kyverno-3.3.6'

let charts: Record<string, string> | undefined

/** The chart's directory in the machine's cache (downloaded by the script once; offline after). */
export function chartDir(chart: PublicChart): string {
  charts ??= Object.fromEntries(
    execFileSync(join(import.meta.dirname, '..', 'scripts', 'public-charts.sh'), [], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
      .trim()
      .split('\n')
      .map((line) => line.split('=') as [string, string])
  )
  const dir = charts[chart]
  if (!dir) throw new Error(`scripts/public-charts.sh printed no directory for chart '${chart}'`)
  return dir
}

/**
 * Loki's chart in its single-binary mode (one StatefulSet, deploymentMode SingleBinary) on the
 * filesystem, with what needs more than one cluster's namespace off: RBAC namespaced (no
 * ClusterRole, so releases in two namespaces do not meet), no caches, canary, self-tests or
 * sidecar, no object storage (minio).
 */
export const lokiValues = {
  deploymentMode: 'SingleBinary',
  loki: { auth_enabled: false, commonConfig: { replication_factor: 1 }, storage: { type: 'filesystem' }, useTestSchema: true },
  singleBinary: { replicas: 1 },
  backend: { replicas: 0 },
  read: { replicas: 0 },
  write: { replicas: 0 },
  chunksCache: { enabled: false },
  resultsCache: { enabled: false },
  gateway: { enabled: false },
  lokiCanary: { enabled: false },
  test: { enabled: false },
  sidecar: { rules: { enabled: false } },
  rbac: { namespaced: true },
  minio: { enabled: false }
}

/**
 * metrics-server's chart without its APIService: registering v1beta1.metrics.k8s.io for a backend
 * that never answers (kwok runs no container) would make API discovery fail for every suite on
 * the cluster, so the release is namespaced objects and its RBAC only.
 */
export const metricsServerValues = { apiService: { create: false } }

/**
 * Kyverno's chart without its CRDs: they are cluster-wide (one set for every release on the
 * cluster), and no test here creates a policy. The chart's ClusterRoles carry the release's full
 * name, so releases with different names do not meet.
 */
export const kyvernoValues = { crds: { install: false } }

/** The same for Kyverno's charts before and after 3.0, which named that value differently (installCRDs, then crds.install). */
export const kyvernoUpgradeValues = { installCRDs: false, crds: { install: false } }

/** One release of a public chart in a namespace. */
export interface PublicRelease {
  chart: PublicChart
  release: string
  namespace: string
  /** The values file's content (ours). */
  values: object
}

function valuesFile(values: object): string {
  const file = join(mkdtempSync(join(tmpdir(), 'values-')), 'values.yaml')
  writeFileSync(file, dump(values))
  return file
}

/** helm install|upgrade|template of the release, with `sets` over its values file (`--set`). */
export function publicChart(
  r: PublicRelease,
  verb: 'install' | 'upgrade' | 'template',
  sets: Record<string, string> = {},
  chart: PublicChart = r.chart,
  ...flags: string[]
): CommandResult {
  const setFlags = Object.entries(sets).flatMap(([k, v]) => ['--set', `${k}=${v}`])
  return helm(verb, r.release, chartDir(chart), '-n', r.namespace, '-f', valuesFile(r.values), ...setFlags, ...flags)
}

/** Installs the release; fails the test with helm's message when it does not install. */
export function installPublicChart(r: PublicRelease, sets: Record<string, string> = {}): void {
  const installed = publicChart(r, 'install', sets)
  if (installed.code !== 0) throw new Error(`helm install of ${r.chart} as ${r.release} failed: ${installed.stderr}`)
}

/**
 * Removes the release and what outlives its namespace: the charts' ClusterRoles and
 * ClusterRoleBindings (and a RoleBinding in kube-system), including those a failed upgrade created
 * under new names, which are in no release, so they go by the release's label. No hooks run: the
 * charts' pre-delete hooks (Kyverno's) clean up what these tests never create.
 */
export function uninstallPublicChart(r: PublicRelease): void {
  helm('uninstall', r.release, '-n', r.namespace, '--no-hooks')
  kubectl('delete', 'clusterrole,clusterrolebinding', '-l', `app.kubernetes.io/instance=${r.release}`, '--ignore-not-found')
}

/** The release rendered by `helm template` for the pinned Kubernetes version, in a file; its path. */
export function renderPublicChart(r: PublicRelease, sets: Record<string, string> = {}, chart: PublicChart = r.chart): string {
  const out = publicChart(r, 'template', sets, chart, '--kube-version', pinnedKubernetesVersion())
  if (out.code !== 0) throw new Error(`helm template of ${chart} failed: ${out.stderr}`)
  const file = join(mkdtempSync(join(tmpdir(), 'rendered-')), 'rendered.yaml')
  writeFileSync(file, out.stdout)
  return file
}
