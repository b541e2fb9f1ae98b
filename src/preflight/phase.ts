// The preflight phase, start to end: the rendered release (parsed with the settings) checked
// against the cluster the settings name, through its own client. Changes nothing: every write is a
// dry run, and no Lease is taken. Shared by the action (main.ts) and the CLI (cli.ts).
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { KubeJobsClient } from '../kube/client.ts'
import { loadKubeConfig } from '../kube/kubeconfig.ts'
import type { ManifestClient } from '../kube/manifest-client.ts'
import type { Console, PhaseOptions } from '../report/console.ts'
import type { RenderedRelease } from '../settings/rendered-release.ts'
import type { Settings } from '../settings/settings.ts'
import { checkRelease } from './check.ts'
import type { PreflightResult } from './report.ts'
import { withRemedies } from './verdict.ts'

export async function runPreflight(settings: Settings, options: Pick<PhaseOptions, 'console' | 'mask' | 'signal'>): Promise<PreflightResult> {
  const kube = new KubeJobsClient(loadKubeConfig(settings.kubeconfig, settings.context, options.mask), {
    signal: options.signal,
    onCredential: options.mask
  })
  try {
    return { ...(await checkRendered(kube.manifestClient(), settings, options.console)), apiRequests: kube.requests }
  } finally {
    await kube.close()
  }
}

/** The rendered release checked through `client`, with the remedies the settings choose marked; shared with pre's gate (gate.ts). */
export async function checkRendered(client: ManifestClient, settings: Settings, console: Console): Promise<PreflightResult> {
  const rendered: RenderedRelease = settings.manifestObjects ?? { objects: [], hooks: [], crds: [], renderer: 'yaml' }
  const namespace = settings.namespace ?? client.defaultNamespace
  const checked = await console.group(`Preflight: ${rendered.objects.length} object(s) of the rendered release`, () =>
    checkRelease(client, rendered.objects, {
      namespace,
      release: settings.scope.release,
      concurrency: settings.concurrency,
      hooks: rendered.hooks,
      crds: rendered.crds,
      preScope: { namespace, ...settings.scope, includeHooks: settings.includeHooks }
    })
  )
  console.info(`Writes: ${checked.mode.why}`)
  return {
    namespace,
    release: settings.scope.release,
    renderer: rendered.renderer,
    ...checked,
    verdicts: withRemedies(checked.verdicts, settings.recreateStatefulSets),
    hooks: rendered.hooks.map((h) => `${h.kind}/${h.metadata?.name}`)
  }
}

/** Writes <logs-dir>/job-sweeper-preflight.json (0600), every object and its verdict, and returns its path. */
export async function writePreflightReport(result: PreflightResult, logsDir: string): Promise<string> {
  await mkdir(logsDir, { recursive: true, mode: 0o700 })
  const file = join(logsDir, 'job-sweeper-preflight.json')
  await writeFile(file, `${JSON.stringify(result, null, 1)}\n`, { mode: 0o600 })
  return file
}
