// The chart test/chart/preflight-demo as the preflight suites drive it: helm install, upgrade and
// template of the release in a namespace, with values set one by one.
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pinnedKubernetesVersion } from './cluster/cluster.ts'
import { helm, waitForJobCondition } from './cluster/testenv.ts'
import { release } from './scenario.ts'

const chart = join(import.meta.dirname, 'chart', 'preflight-demo')

export function chartCommand(
  namespace: string,
  verb: 'install' | 'upgrade' | 'template',
  values: Record<string, string>,
  ...flags: string[]
): ReturnType<typeof helm> {
  const sets = Object.entries(values).flatMap(([k, v]) => ['--set', `${k}=${v}`])
  return helm(verb, release, chart, '-n', namespace, ...sets, ...flags)
}

/** Installs the release and waits for its migration Job to complete. */
export async function installChart(namespace: string, values: Record<string, string> = {}, ...flags: string[]): Promise<void> {
  const installed = chartCommand(namespace, 'install', values, ...flags)
  if (installed.code !== 0) throw new Error(`helm install failed: ${installed.stderr}`)
  await waitForJobCondition(namespace, `${release}-migrate`, 'Complete')
}

/** The release rendered with `values` for the pinned Kubernetes version, in a file; its path. */
export function renderChart(namespace: string, values: Record<string, string>): string {
  const out = chartCommand(namespace, 'template', values, '--kube-version', pinnedKubernetesVersion())
  expect(out.stderr).toBe('')
  const file = join(mkdtempSync(join(tmpdir(), 'rendered-')), 'rendered.yaml')
  writeFileSync(file, out.stdout)
  return file
}

/** The three, bound to a namespace that is read at each call (a scenario's, new in each test). */
export function preflightDemo(namespace: () => string) {
  return {
    chartCommand: (verb: 'install' | 'upgrade' | 'template', values: Record<string, string>, ...flags: string[]) =>
      chartCommand(namespace(), verb, values, ...flags),
    install: (values: Record<string, string> = {}, ...flags: string[]) => installChart(namespace(), values, ...flags),
    rendered: (values: Record<string, string>) => renderChart(namespace(), values)
  }
}
