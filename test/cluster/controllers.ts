// The cluster's clients of the API server — kube-controller-manager, kube-scheduler and kwok —
// started again after a test that restarted the API server.
//
// They reconnect by themselves, with client-go's reflector backoff: it doubles with each failed
// attempt and only resets after 2 minutes without one. Measured here: a Job runs ~4 s after a
// first restart, ~30 s after a second one a minute later, ~80 s after a third. A test file that
// restarts the API server therefore leaves the tests after it a cluster that looks stuck, unless
// it restarts these three at its end.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { KubeConfig } from '@kubernetes/client-node'
import { probeJob, type Cluster } from './cluster.ts'
import { startProcess, startProcessAgain, stopProcesses, type ProcessCommand } from './processes.ts'

/** Process names (under <dir>/pids, <dir>/logs, <dir>/commands) of the API server's clients. */
export const CONTROLLERS = ['3-kube-controller-manager', '4-kube-scheduler', '5-kwok']

/**
 * Stops the controller manager, scheduler and kwok and starts them again with their recorded
 * commands (fresh informers, no backoff), then waits until a probe Job runs to completion.
 */
export async function restartControllers(cluster: Cluster): Promise<void> {
  await stopProcesses(cluster.dir, 5000, CONTROLLERS)
  for (const name of CONTROLLERS) startProcessAgain(cluster.dir, name)
  const kc = new KubeConfig()
  kc.loadFromFile(cluster.kubeconfig)
  await probeJob(kc, cluster.dir)
}

/** The StatefulSet controller, apart from the cluster's controller manager (which does not run it). */
const STATEFULSET_CONTROLLER = '6-statefulset-controller'

/**
 * Starts a StatefulSet controller: the controller manager's recorded command with only that
 * controller. It acts on every namespace, so a suite that starts it says `@cluster whole`.
 * Returns its stop.
 */
export function startStatefulSetController(cluster: Cluster): () => Promise<void> {
  const manager = JSON.parse(readFileSync(join(cluster.dir, 'commands', '3-kube-controller-manager.json'), 'utf8')) as ProcessCommand
  const args = manager.args.map((a) => (a.startsWith('--controllers=') ? '--controllers=statefulset-controller' : a))
  startProcess(cluster.dir, STATEFULSET_CONTROLLER, manager.command, args, manager.env)
  return async () => void (await stopProcesses(cluster.dir, 5000, [STATEFULSET_CONTROLLER]))
}
