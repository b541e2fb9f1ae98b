// Observe: read what the plan needs from the cluster (and the rendered manifest), change nothing.
import { readFile } from 'node:fs/promises'
import type { JobsClient } from '../kube/client.ts'
import type { Observed } from '../plan/plan.ts'
import { INPUT, SettingsError, type Settings } from '../settings/settings.ts'
import { renderedJobs, replacementFor } from './manifest.ts'

/** The namespace this run works in: the input, else the kubeconfig context's, else default. */
export function targetNamespace(settings: Settings, client: JobsClient): string {
  return settings.namespace ?? client.defaultNamespace
}

async function readManifest(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8')
  } catch (e) {
    throw new SettingsError(`Invalid ${INPUT.manifest} '${path}': cannot read it (${(e as NodeJS.ErrnoException).code ?? e})`)
  }
}

/**
 * Lists the candidate Jobs and, with `manifest`, asks the API server (server-side dry run) whether
 * each rendered Job could replace the live one of the same name.
 */
export async function observe(client: JobsClient, settings: Settings, warn: (message: string) => void): Promise<Observed> {
  const namespace = targetNamespace(settings, client)
  const jobs = await client.listJobs(namespace, settings.scope.selector)
  if (settings.scope.manifest === undefined) return { namespace, jobs }

  let rendered
  try {
    rendered = renderedJobs(await readManifest(settings.scope.manifest))
  } catch (e) {
    if (e instanceof SettingsError) throw e
    throw new SettingsError(`Invalid ${INPUT.manifest} '${settings.scope.manifest}': not YAML (${(e as Error).message.split('\n')[0]})`)
  }
  const manifest = new Map<string, string | undefined>()
  for (const job of rendered) {
    const name = job.metadata?.name ?? ''
    const ns = job.metadata?.namespace ?? namespace
    if (ns !== namespace) {
      warn(`${INPUT.manifest}: Job ${ns}/${name} is in another namespace than ${namespace}; left out`)
      continue
    }
    const live = jobs.find((j) => j.metadata?.name === name)
    manifest.set(name, live ? await client.dryRunReplaceJob(namespace, replacementFor(job, live)) : undefined)
  }
  if (rendered.length === 0) warn(`${INPUT.manifest} '${settings.scope.manifest}' names no batch/v1 Jobs: nothing is in scope`)
  return { namespace, jobs, manifest }
}
