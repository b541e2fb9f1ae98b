// Preflight benchmark: a release of 300 objects (ConfigMaps, Services, Deployments, a few
// StatefulSets and Jobs; two thirds installed by helm, one third new, 50 of the installed changed)
// checked by `job-sweeper preflight` at its default concurrency, beside what a user would run
// instead: `kubectl apply --server-side --dry-run=server` of the rendered file as Helm's field
// manager. Twice: a release Helm 4 applied server-side (a dry-run apply per object) and one
// installed client-side (Helm 3's three-way patch, with the previous manifest and the OpenAPI
// documents read). Requests are counted by each client (job-sweeper's api-requests, kubectl's -v=6
// log). The figures count only if the verdicts are right and nothing in the cluster moved.
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { dump } from 'js-yaml'
import type { Cluster } from '../cluster/cluster.ts'
import { CLI, measure, mustSucceed, settle, type Measured } from './measure.ts'

/** How many objects of each kind; two thirds exist before the check, one third is new. */
const KINDS = { ConfigMap: 150, Service: 60, Deployment: 72, StatefulSet: 9, Job: 9 }
/** Installed objects the rendering changes (mutable fields only: the upgrade would apply). */
const CHANGED = { ConfigMap: 30, Deployment: 20 }

type Kind = keyof typeof KINDS

function object(kind: Kind, i: number, version: 1 | 2): object {
  const name = `${kind.toLowerCase()}-${i}`
  const labels = { app: name }
  const pod = (image: string, restartPolicy?: string): object => ({
    metadata: { labels },
    spec: { ...(restartPolicy ? { restartPolicy } : {}), containers: [{ name: 'main', image, ports: [{ containerPort: 8080 }] }] }
  })
  switch (kind) {
    case 'ConfigMap':
      return { apiVersion: 'v1', kind, metadata: { name }, data: { setting: `value-${version}`, other: 'same' } }
    case 'Service':
      return { apiVersion: 'v1', kind, metadata: { name }, spec: { selector: labels, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } }
    case 'Deployment':
      return {
        apiVersion: 'apps/v1',
        kind,
        metadata: { name },
        spec: { replicas: 1, selector: { matchLabels: labels }, template: pod(`example.invalid/web:${version}`) }
      }
    case 'StatefulSet':
      return {
        apiVersion: 'apps/v1',
        kind,
        metadata: { name },
        spec: {
          serviceName: name,
          replicas: 1,
          selector: { matchLabels: labels },
          template: pod('example.invalid/db:1'),
          volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }]
        }
      }
    case 'Job':
      // Suspended: the Job controller leaves it (and the check's verdict) alone.
      return { apiVersion: 'batch/v1', kind, metadata: { name }, spec: { suspend: true, template: pod('example.invalid/migrate:1', 'Never') } }
  }
}

/** The installed set (version 1) and the rendering checked (installed ones, some changed, and the new ones). */
function release(): { installed: object[]; rendered: object[] } {
  const installed: object[] = []
  const rendered: object[] = []
  for (const [kind, count] of Object.entries(KINDS) as [Kind, number][]) {
    const existing = Math.round((count * 2) / 3)
    const changed = (CHANGED as Partial<Record<Kind, number>>)[kind] ?? 0
    for (let i = 0; i < count; i++) {
      if (i < existing) installed.push(object(kind, i, 1))
      rendered.push(object(kind, i, i < changed ? 2 : 1))
    }
  }
  return { installed, rendered }
}

const yaml = (objects: object[]): string => objects.map((o) => `---\n${dump(o)}`).join('')

/** What one run of the preflight benchmark measured. */
export interface PreflightFigures {
  objects: number
  existing: number
  changed: number
  setupMs: number
  rounds: number
  /** The median round of each (its slowest beside it). */
  apply: Measured & { requests: number; maxMs: number }
  patch: Measured & { requests: number; maxMs: number }
  kubectl: Measured & { requests: number; maxMs: number }
}

function sh(command: string, args: string[], env: Record<string, string>): string {
  const r = spawnSync(command, args, { env: { ...process.env, ...env }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
  if (r.status !== 0) throw new Error(`${command} ${args.slice(0, 3).join(' ')} exited ${r.status}: ${r.stderr.slice(-2000)}`)
  return r.stdout
}

/** resourceVersion of every object in the namespace (and the release records): proof a check changed nothing. */
function versions(kubectl: string, namespace: string, env: Record<string, string>): string {
  return sh(
    kubectl,
    [
      'get',
      'configmaps,services,deployments,statefulsets,jobs,secrets',
      '-n',
      namespace,
      '-o',
      'jsonpath={range .items[*]}{.metadata.name}={.metadata.resourceVersion} {end}'
    ],
    env
  )
}

interface Verdicts {
  wouldApply: boolean
  'api-requests': number
  objects: { verdict: { kind: string } }[]
}

/** Checks the verdicts: every new object new, the changed ones changes, the rest unchanged. */
function checkVerdicts(what: string, run: Measured, expected: Record<string, number>): number {
  const json = JSON.parse(run.stdout) as Verdicts
  const counts: Record<string, number> = {}
  for (const o of json.objects) counts[o.verdict.kind] = (counts[o.verdict.kind] ?? 0) + 1
  const same = Object.keys({ ...counts, ...expected }).every((k) => counts[k] === expected[k])
  if (!json.wouldApply || !same)
    throw new Error(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(counts)} (would apply: ${json.wouldApply})`)
  return json['api-requests']
}

export async function benchPreflight(cluster: Cluster, rounds: number, log: (line: string) => void): Promise<PreflightFigures> {
  const env = { KUBECONFIG: cluster.kubeconfig }
  const kubectl = `${cluster.binDir}/kubectl`
  const helm = `${cluster.binDir}/helm`
  const stamp = Date.now()
  const [nsApply, nsPatch] = ['apply', 'patch'].map((how) => `bench-preflight-${how}-${stamp}`)
  const dir = mkdtempSync(join(tmpdir(), 'job-sweeper-bench-preflight-'))
  const { installed, rendered } = release()
  const chart = join(dir, 'chart')
  mkdirSync(join(chart, 'templates'), { recursive: true })
  writeFileSync(join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: bench\nversion: 0.1.0\n')
  writeFileSync(join(chart, 'templates', 'release.yaml'), yaml(installed))
  const manifest = join(dir, 'rendered.yaml')
  writeFileSync(manifest, yaml(rendered))
  const changed = Object.values(CHANGED).reduce((a, b) => a + b, 0)
  const expected = { changes: changed, new: rendered.length - installed.length, unchanged: installed.length - changed }
  try {
    const setupStarted = performance.now()
    for (const [namespace, flags] of [
      [nsApply, []],
      [nsPatch, cluster.helmVersion.startsWith('v4') ? ['--server-side=false'] : []]
    ] as const) {
      sh(kubectl, ['create', 'namespace', namespace], env)
      sh(helm, ['install', 'bench', chart, '-n', namespace, ...flags], env)
    }
    const setupMs = performance.now() - setupStarted
    log(`2 releases of ${installed.length} objects installed in ${(setupMs / 1000).toFixed(1)}s`)

    const preflight = async (namespace: string): Promise<Measured & { requests: number }> => {
      await settle(log)
      const before = versions(kubectl, namespace, env)
      const run = mustSucceed(
        `job-sweeper preflight in ${namespace}`,
        await measure([...CLI, 'preflight', '--manifest', manifest, '--namespace', namespace, '--release', 'bench', '--logs-dir', dir, '--json'], env)
      )
      const requests = checkVerdicts(`job-sweeper preflight in ${namespace}`, run, expected)
      if (versions(kubectl, namespace, env) !== before) throw new Error(`job-sweeper preflight changed objects in ${namespace}`)
      return { ...run, requests }
    }
    const kubectlRun = async (): Promise<Measured & { requests: number }> => {
      await settle(log)
      const before = versions(kubectl, nsApply, env)
      const run = mustSucceed(
        'kubectl apply --dry-run=server',
        await measure([kubectl, 'apply', '--server-side', '--dry-run=server', '--field-manager=helm', '-n', nsApply, '-f', manifest, '-v=6'], env)
      )
      if (versions(kubectl, nsApply, env) !== before) throw new Error(`kubectl's dry run changed objects in ${nsApply}`)
      return { ...run, requests: run.stderr.split('\n').filter((l) => l.includes('"Response"')).length }
    }
    // Rounds in turn, the median of each kept: on a loaded machine one run is noise.
    const runs: Record<'apply' | 'patch' | 'kubectl', (Measured & { requests: number })[]> = { apply: [], patch: [], kubectl: [] }
    for (let round = 1; round <= rounds; round++) {
      log(`round ${round}/${rounds}: job-sweeper preflight (server-side release, client-side release), kubectl apply --dry-run=server …`)
      runs.apply.push(await preflight(nsApply))
      runs.patch.push(await preflight(nsPatch))
      runs.kubectl.push(await kubectlRun())
    }
    const median = (ms: (Measured & { requests: number })[]): Measured & { requests: number; maxMs: number } => {
      const sorted = [...ms].sort((a, b) => a.wallMs - b.wallMs)
      return { ...sorted[Math.floor(sorted.length / 2)], maxMs: sorted[sorted.length - 1].wallMs }
    }
    const [apply, patch, kubectlFigures] = [median(runs.apply), median(runs.patch), median(runs.kubectl)]
    return { objects: rendered.length, existing: installed.length, changed, setupMs, rounds, apply, patch, kubectl: kubectlFigures }
  } finally {
    for (const namespace of [nsApply, nsPatch]) spawnSync(kubectl, ['delete', 'namespace', namespace, '--wait=false'], { env: { ...process.env, ...env } })
    rmSync(dir, { recursive: true, force: true })
  }
}
