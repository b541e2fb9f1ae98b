// A secret that exists only at run time is masked: an exec credential plugin that asks the cluster
// for a fresh service-account token each time it runs (`kubectl create token`) returns a token no
// kubeconfig holds. The action registers it with the runner (`::add-mask::<token>` on standard
// output, under GITHUB_ACTIONS=true) as soon as it is obtained, and it appears nowhere else: not in
// the rest of the log, the summary, the outputs or logs-dir.
import { chmodSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expectSucceeded, outputNames, runAction, WORKFLOW_RUN_ENV } from './action.ts'
import { kubeConfig, testCluster } from './cluster/testenv.ts'
import { finishedReleaseJob, release, useScenario } from './scenario.ts'
import { createServiceAccount } from './service-account.ts'

const scenario = useScenario('runtime-token')

/** Every file under `dir`, as text. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile())
    .map((f) => readFileSync(f, 'utf8'))
}

test('an exec plugin’s token, made at run time: ::add-mask:: as soon as it is obtained, and nowhere else', async () => {
  const ns = scenario.ns
  await finishedReleaseJob(ns, `${release}-seed`)
  // The plugin's identity: a ServiceAccount with every right in the namespace (cluster-admin, bound there).
  await createServiceAccount(ns, 'deployer', { clusterRole: 'cluster-admin' })
  const dir = mkdtempSync(join(tmpdir(), 'runtime-token-'))
  const issued = join(dir, 'issued-tokens')
  const plugin = join(dir, 'credential-plugin.sh')
  // Everything the plugin needs is in the script: exec env values and args are masked (kubeconfig.ts).
  writeFileSync(
    plugin,
    [
      '#!/bin/sh',
      `token=$('${join(testCluster().binDir, 'kubectl')}' --kubeconfig '${testCluster().kubeconfig}' create token deployer -n '${ns}' --duration 10m) || exit 1`,
      `printf '%s\\n' "$token" >> '${issued}'`,
      `printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}' "$token"`,
      ''
    ].join('\n')
  )
  chmodSync(plugin, 0o755)
  const server = kubeConfig().getCurrentCluster()
  const kubeconfig = join(dir, 'kubeconfig')
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'test', cluster: { server: server?.server, 'certificate-authority-data': server?.caData } }],
      users: [{ name: 'deployer', user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: plugin, interactiveMode: 'Never' } } }],
      contexts: [{ name: 'deployer', context: { cluster: 'test', user: 'deployer', namespace: ns } }],
      'current-context': 'deployer'
    })
  )
  const logsDir = join(dir, 'logs')
  const run = await runAction({ kubeconfig, release, 'logs-dir': logsDir, 'harvest-logs': 'all' }, { env: { ...WORKFLOW_RUN_ENV, KUBECONFIG: '/nonexistent' } })
  expectSucceeded(run)
  expect(outputNames(run, 'pruned')).toEqual([`${release}-seed`]) // the plugin's token worked
  const tokens = readFileSync(issued, 'utf8').split('\n').filter(Boolean)
  expect(tokens.length).toBeGreaterThanOrEqual(1)
  const log = run.stdout.split('\n')
  for (const token of tokens) {
    // Registered before the first request's answer is printed: the line comes before the Observe group.
    const mask = log.indexOf(`::add-mask::${token}`)
    expect(mask).toBeGreaterThanOrEqual(0)
    // Once, though every request carries it.
    expect(log.filter((l) => l === `::add-mask::${token}`)).toHaveLength(1)
    expect(mask).toBeLessThan(log.indexOf('::group::Observe'))
    const elsewhere = [...log.filter((l) => l !== `::add-mask::${token}`), run.stderr, run.summary, JSON.stringify(run.outputs), ...filesUnder(logsDir)]
    expect(elsewhere.filter((text) => text.includes(token))).toEqual([])
  }
})
