// recreate-statefulsets, pre's remedy for a StatefulSet whose spec change the API server refuses:
// delete it with propagationPolicy Orphan, so that its pods keep running and its PVCs stay, and let
// `helm upgrade` create it anew; the StatefulSet controller then adopts the pods (same names and
// labels). Existing PVCs are not resized: a volumeClaimTemplates change only reaches new claims.
// Runs after pre's Jobs are done, and only for an upgrade the preflight found would then apply.
import type { ApiResource, KubeObject, ManifestClient } from '../kube/manifest-client.ts'
import { realClock, type Clock } from '../kube/clock.ts'
import { INPUT, type Settings } from '../settings/settings.ts'
import { formatDuration } from '../text/duration.ts'
import { checkRelease } from './check.ts'
import { objectName } from './report.ts'
import { reasonOf, recreatedByPre, recreatedPods, type ObjectVerdict } from './verdict.ts'

/** Deletes tried when the StatefulSet changed between its read and its delete (a status update). */
const ATTEMPTS = 5
/** How often a deleted StatefulSet is read until it is gone (the garbage collector orphans its pods first). */
const POLL_MS = 500

export interface RemedyResult {
  /** What was done, a sentence per StatefulSet. */
  done: string[]
  errors: string[]
}

interface Context {
  info: (message: string) => void
  signal?: AbortSignal
  clock?: Clock
}

const uidOf = (o: KubeObject): string => String(o.metadata?.uid ?? '')

/** Helm's release annotations on the live object: only a StatefulSet of this release is deleted. */
function notTheRelease(live: KubeObject, release: string | undefined, namespace: string): string | undefined {
  const a = live.metadata?.annotations ?? {}
  const name = a['meta.helm.sh/release-name']
  if (name === undefined) return 'it has no meta.helm.sh/release-name annotation (Helm did not create it)'
  if (release !== undefined && name !== release) return `it belongs to release ${name}, not ${release}`
  if (a['meta.helm.sh/release-namespace'] !== namespace) return `its release namespace is ${a['meta.helm.sh/release-namespace']}, not ${namespace}`
  return undefined
}

async function waitUntilGone(client: ManifestClient, resource: ApiResource, namespace: string, name: string, uid: string, settings: Settings, ctx: Context) {
  const clock = ctx.clock ?? realClock
  const deadline = clock.now() + settings.waitTimeoutSeconds * 1000
  for (;;) {
    const read = await client.read(resource, namespace, name)
    if ('absent' in read || ('found' in read && uidOf(read.found) !== uid)) return true
    if (clock.now() >= deadline) return false
    await clock.sleep(POLL_MS, ctx.signal)
  }
}

/** One StatefulSet: checked again, read, deleted orphaning its dependents if it is still the one read, and waited for until gone. */
async function recreateOne(client: ManifestClient, v: ObjectVerdict, rendered: KubeObject, settings: Settings, ctx: Context): Promise<string> {
  const name = objectName(v)
  const namespace = v.namespace ?? client.defaultNamespace
  const resource = await client.resourceFor(v.apiVersion, v.kind)
  if (resource === 'not-served') throw new Error(`${name}: the cluster does not serve ${v.kind} in ${v.apiVersion}`)
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    // Act on what was planned, or re-decide: the verdict again, on the object as it is now.
    const fresh = (await checkRelease(client, [rendered], { namespace, release: settings.scope.release, concurrency: 1 })).verdicts[0]
    if (!recreatedByPre(fresh)) {
      if (fresh.verdict.kind === 'changes' || fresh.verdict.kind === 'unchanged' || fresh.verdict.kind === 'new')
        return `${name} not deleted: the upgrade can write it now (${reasonOf(fresh.verdict)})`
      throw new Error(`${name} not deleted: its preflight verdict is now ${reasonOf(fresh.verdict)}`)
    }
    const read = await client.read(resource, namespace, v.name)
    if ('absent' in read) return `${name} is gone already: the upgrade creates it`
    if ('refused' in read) throw new Error(`${name} not deleted: reading it was refused (${read.refused.status})`)
    const live = read.found
    const foreign = notTheRelease(live, settings.scope.release, namespace)
    if (foreign !== undefined) throw new Error(`${name} not deleted: ${foreign}`)
    if (settings.dryRun) return `${name} would be deleted with propagationPolicy Orphan (dry run: nothing was changed)`
    // A run cancelled by now starts no delete: the upgrade that would recreate the StatefulSet will not run.
    if (ctx.signal?.aborted) throw new Error(`${name} not deleted: the run was cancelled, and no upgrade would recreate it`)
    const uid = uidOf(live)
    const deleted = await client.deleteOrphaning(resource, namespace, v.name, { uid, resourceVersion: live.metadata?.resourceVersion })
    if (deleted === 'conflict') continue
    if (deleted === 'gone') return `${name} is gone already: the upgrade creates it`
    ctx.info(`${name}: deleted with propagationPolicy Orphan; waiting until it is gone`)
    if (!(await waitUntilGone(client, resource, namespace, v.name, uid, settings, ctx)))
      throw new Error(`${name} was deleted with propagationPolicy Orphan but is not gone after ${formatDuration(settings.waitTimeoutSeconds)}`)
    return `${name} deleted with propagationPolicy Orphan (${INPUT.recreateStatefulSets}): ${recreatedPods(fresh)}; existing PVCs keep their size`
  }
  throw new Error(`${name} not deleted: it changed between each read and its delete (${ATTEMPTS} times)`)
}

/** Every chosen StatefulSet, one after another (a release has few); a failure is an error naming it, and the next is still tried. */
export async function recreateStatefulSets(client: ManifestClient, targets: ObjectVerdict[], settings: Settings, ctx: Context): Promise<RemedyResult> {
  const result: RemedyResult = { done: [], errors: [] }
  const objects = settings.manifestObjects?.objects ?? []
  for (const v of targets) {
    const rendered = objects.find((o) => o.kind === v.kind && o.metadata?.name === v.name && (o.metadata?.namespace ?? v.namespace) === v.namespace)
    try {
      if (!rendered) throw new Error(`${objectName(v)} not deleted: it is not in ${INPUT.manifest}`)
      result.done.push(await recreateOne(client, v, rendered, settings, ctx))
    } catch (e) {
      result.errors.push(`${INPUT.recreateStatefulSets}: ${(e as Error).message}`)
    }
  }
  return result
}
