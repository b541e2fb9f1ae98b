// What every scenario test shares: the sample chart and its release, and a pair of namespaces
// with decoys that must survive each test.
import { join } from 'node:path'
import { createJob, createNamespace, deleteNamespace, helm, helmAnnotations, helmMajor, waitForJobCondition, type CommandResult } from './cluster/testenv.ts'
import { createDecoys, missingDecoys, type Decoy } from './decoys.ts'

export const chart = join(import.meta.dirname, 'chart', 'migrate-demo')
export const release = 'app'

/** The annotations Helm puts on every object of `release` in `namespace`. */
export const releaseAnnotations = (namespace: string): Record<string, string> => helmAnnotations(release, namespace)

/** helm install|upgrade|template of the sample chart as `release`, with `--set` values. */
export function helmChart(
  verb: 'install' | 'upgrade' | 'template',
  namespace: string,
  values: Record<string, string | boolean>,
  ...flags: string[]
): CommandResult {
  const sets = Object.entries(values).flatMap(([k, v]) => ['--set', `${k}=${v}`])
  return helm(verb, release, chart, '-n', namespace, ...sets, ...flags)
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/**
 * How the running helm reports an upgrade that changes Job `name`'s pod template: Helm 3 patches
 * (`cannot patch`), Helm 4 applies server-side (`server-side apply failed for object`).
 */
export function immutableJobError(namespace: string, name: string): RegExp {
  const invalid = `Job\\.batch "${escape(name)}" is invalid: spec\\.template: .*field is immutable`
  return helmMajor() === 4
    ? new RegExp(`UPGRADE FAILED: server-side apply failed for object ${escape(namespace)}/${escape(name)} batch/v1, Kind=Job: ${invalid}`)
    : new RegExp(`UPGRADE FAILED: cannot patch "${escape(name)}" with kind Job: ${invalid}`)
}

/** A Job of the release, as Helm would have left it, run to completion. */
export async function finishedReleaseJob(namespace: string, name: string): Promise<void> {
  await createJob({ namespace, name, annotations: releaseAnnotations(namespace) })
  await waitForJobCondition(namespace, name, 'Complete')
}

export interface Scenario {
  /** The namespace the scenario works in. */
  readonly ns: string
  /** Another namespace, holding a decoy with the same name and release. */
  readonly otherNs: string
  /** The decoys that must survive; a test that sweeps one on purpose takes it out of this list. */
  decoys: Decoy[]
}

/**
 * Creates fresh namespaces and decoys before each test, and checks after it that every decoy
 * survived (and `check`, if given, holds for them) before the namespaces are deleted.
 */
export function useScenario(prefix: string, check?: (decoys: Decoy[]) => Promise<void>): Scenario {
  const scenario = { ns: '', otherNs: '', decoys: [] as Decoy[] }
  beforeEach(async () => {
    scenario.ns = await createNamespace(prefix)
    scenario.otherNs = await createNamespace(`${prefix}-other`)
    scenario.decoys = await createDecoys(scenario.ns, scenario.otherNs, release)
  })
  afterEach(async () => {
    expect(await missingDecoys(scenario.decoys)).toEqual([])
    await check?.(scenario.decoys)
    await Promise.all([deleteNamespace(scenario.ns), deleteNamespace(scenario.otherNs)])
  })
  return scenario
}
