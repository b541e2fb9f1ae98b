// helm sweep benchmark: what `helm sweep upgrade` (the plugin, installed from this checkout into a
// plugins directory of its own) adds over a plain `helm upgrade` of the demo chart
// (test/chart/migrate-demo), side by side, rounds alternating: with nothing to clear (the same
// values), and with a finished migration Job that must go (a new migrationVersion each round;
// the baseline is what a user does by hand: `kubectl delete job --wait`, then `helm upgrade`).
// Needs the bundle (dist/plugin/helm-sweep.mjs). The new migration is let finish between rounds,
// untimed, so each round starts from a finished Job.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Cluster } from '../cluster/cluster.ts'
import { measure, mustSucceed, settle } from './measure.ts'
import { median } from './wait-latency.ts'

const root = join(import.meta.dirname, '..', '..')
const chart = join(root, 'test', 'chart', 'migrate-demo')

export interface HelmSweepBench {
  rounds: number
  helmVersion: string
  /** Median wall times (ms): the same values again, nothing to clear. */
  unchanged: { helm: number; sweep: number }
  /** Median wall times (ms): a changed migration whose finished Job must go. */
  changed: { kubectlAndHelm: number; sweep: number }
}

export async function benchHelmSweep(cluster: Cluster, rounds: number, log: (line: string) => void): Promise<HelmSweepBench> {
  const home = mkdtempSync(join(tmpdir(), 'job-sweeper-bench-helm-'))
  const env: Record<string, string> = {
    KUBECONFIG: cluster.kubeconfig,
    PATH: `${cluster.binDir}:${process.env.PATH ?? ''}`,
    HELM_CONFIG_HOME: join(home, 'config'),
    HELM_CACHE_HOME: join(home, 'cache'),
    HELM_DATA_HOME: join(home, 'data')
  }
  const sh = (command: string, ...args: string[]): string => {
    const r = spawnSync(command, args, { env: { ...process.env, ...env }, encoding: 'utf8' })
    if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${r.status}: ${r.stderr}`)
    return r.stdout
  }
  const helm = `${cluster.binDir}/helm`
  const kubectl = `${cluster.binDir}/kubectl`
  const namespace = `bench-helm-sweep-${Date.now()}`
  const finished = (): void => void sh(kubectl, 'wait', '-n', namespace, '--for=condition=complete', 'job/app-migrate', '--timeout=60s')
  const upgradeArgs = (version: number): string[] => [
    'upgrade',
    'app',
    chart,
    '-n',
    namespace,
    '--set',
    'hookJob=false',
    '--set',
    `migrationVersion=${version}`
  ]
  const timed = async (what: string, command: string[]): Promise<number> => mustSucceed(what, await measure(command, env)).wallMs
  try {
    sh(helm, 'plugin', 'install', root)
    sh(kubectl, 'create', 'namespace', namespace)
    sh(helm, 'install', 'app', chart, '-n', namespace, '--set', 'hookJob=false', '--set', 'migrationVersion=1')
    finished()
    await settle(log)
    const unchanged = { helm: [] as number[], sweep: [] as number[] }
    const changed = { kubectlAndHelm: [] as number[], sweep: [] as number[] }
    for (let round = 1; round <= rounds; round++) {
      log(`helm sweep round ${round}/${rounds}: nothing to clear (helm upgrade, helm sweep upgrade)`)
      unchanged.helm.push(await timed('helm upgrade', [helm, ...upgradeArgs(1)]))
      unchanged.sweep.push(await timed('helm sweep upgrade', [helm, 'sweep', ...upgradeArgs(1)]))
    }
    let version = 1
    for (let round = 1; round <= rounds; round++) {
      log(`helm sweep round ${round}/${rounds}: a finished migration to clear (kubectl delete job --wait + helm upgrade, helm sweep upgrade)`)
      version++
      const deleted = await timed('kubectl delete job --wait', [kubectl, 'delete', 'job', 'app-migrate', '-n', namespace, '--wait'])
      changed.kubectlAndHelm.push(deleted + (await timed('helm upgrade', [helm, ...upgradeArgs(version)])))
      finished()
      version++
      changed.sweep.push(await timed('helm sweep upgrade', [helm, 'sweep', ...upgradeArgs(version)]))
      finished()
    }
    return {
      rounds,
      helmVersion: cluster.helmVersion,
      unchanged: { helm: median(unchanged.helm), sweep: median(unchanged.sweep) },
      changed: { kubectlAndHelm: median(changed.kubectlAndHelm), sweep: median(changed.sweep) }
    }
  } finally {
    spawnSync(kubectl, ['delete', 'namespace', namespace, '--wait=false'], { env: { ...process.env, ...env } })
    rmSync(home, { recursive: true, force: true })
  }
}
