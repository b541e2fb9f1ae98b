// Checks a rendered release against the live cluster as `helm upgrade` will meet it: the release
// first (a pending operation, the previous revision's kinds: mode.ts, previous.ts), then each
// object by a dry run of the write the upgrade will make (Helm 4's server-side apply as field
// manager `helm` without force; or a create, or Helm 3's three-way patch from the previous
// revision, a JSON merge patch for custom resources), after the ownership check Helm makes of an
// object new to the release; then the hooks an earlier run left and, on an install, the crds/
// CRDs. Bounded concurrency: reads first (the release mode may depend on them), then the writes.
import { generate as jsonMergePatch } from 'json-merge-patch'
import PQueue from 'p-queue'
import type { KubeObject, ManifestClient, PatchType } from '../kube/manifest-client.ts'
import { classifyAccepted, classifyRefusal } from './classify.ts'
import { liveReader, look, readEach, type Looked } from './look.ts'
import { failedJob, hooksToCheck, leftOverWhy, upgradeEvents } from './hooks.ts'
import { decideMode, HELM_FIELD_MANAGER, type ReleaseMode } from './mode.ts'
import { patchSchemaOf, type OpenApiDocument, type PatchSchema } from './patch-schema.ts'
import { preLeaves, type PreScope } from './pre-scope.ts'
import { byIdentity, identity, newToRelease, ownershipProblem, previousObjects, unservedInPrevious, type PreviousObjects } from './previous.ts'
import { helm3Patch, HelmRefuses, Unmatched, type Helm3Patch, type RemovedField } from './three-way.ts'
import { clearableByPre, type ObjectVerdict, type Verdict, type Write } from './verdict.ts'

export interface CheckOptions {
  /** Namespace of the objects whose manifest names none (and of the release record). */
  namespace: string
  /** The Helm release, whose record says how it was applied; undefined: decided from field managers. */
  release?: string
  /** How many objects are checked at once. */
  concurrency: number
  /** The rendering's hooks: those the upgrade runs are looked up, for a namesake an earlier run left. */
  hooks?: KubeObject[]
  /** The CRDs of the chart's crds/ directory: an install creates the absent ones first, an upgrade leaves them alone. */
  crds?: KubeObject[]
  /** Which Jobs pre deletes; by default the release's Jobs in `namespace`, hooks apart. */
  preScope?: PreScope
}

export interface CheckResult {
  mode: ReleaseMode
  verdicts: ObjectVerdict[]
  /** Why Helm refuses the upgrade before it writes any object (a pending revision, a previous revision it cannot build). */
  blocked: string[]
  warnings: string[]
}

/**
 * The object as Helm writes it: Helm adds its label and annotations to every object of the release
 * (pkg/action/validate.go setMetadataVisitor), which `helm template` leaves out; without them the
 * dry run would remove them, a change the upgrade never makes. The release is the input's, else
 * the one the live object's annotations name.
 */
function asHelmWrites(
  object: KubeObject,
  namespace: string | undefined,
  live: KubeObject | undefined,
  release: string | undefined,
  releaseNamespace: string
): KubeObject {
  const annotations = live?.metadata?.annotations ?? {}
  const name = release ?? annotations['meta.helm.sh/release-name']
  const metadata = { ...object.metadata, namespace }
  if (name === undefined) return { ...object, metadata }
  return {
    ...object,
    metadata: {
      ...metadata,
      labels: { ...object.metadata?.labels, 'app.kubernetes.io/managed-by': 'Helm' },
      annotations: {
        ...object.metadata?.annotations,
        'meta.helm.sh/release-name': name,
        'meta.helm.sh/release-namespace': release !== undefined ? releaseNamespace : (annotations['meta.helm.sh/release-namespace'] ?? releaseNamespace)
      }
    }
  }
}

/** What a patch is computed from: the previous revision's objects (undefined: unknown, a two-way patch) and the kinds' patch schemas. */
interface PatchInputs {
  previous?: Map<string, KubeObject>
  schema(apiVersion: string, kind: string): Promise<PatchSchema | undefined>
}

function patchInputs(client: ManifestClient, previous: PreviousObjects | undefined): PatchInputs {
  const schemas = new Map<string, Promise<PatchSchema | undefined>>()
  return {
    previous,
    schema(apiVersion, kind) {
      const key = `${apiVersion} ${kind}`
      let schema = schemas.get(key)
      if (!schema) {
        schema = client.openApi(apiVersion).then((doc) => (doc ? patchSchemaOf(doc as OpenApiDocument, apiVersion, kind) : undefined))
        schemas.set(key, schema)
      }
      return schema
    }
  }
}

/** The dry run of the write the upgrade makes, and its verdict. */
async function dryRun(
  client: ManifestClient,
  looked: Looked,
  mode: ReleaseMode,
  inputs: PatchInputs,
  options: CheckOptions
): Promise<{ write: Write; verdict: Verdict }> {
  const { resource, namespace, read } = looked
  if (looked.verdict || !resource || !read) return { write: 'none', verdict: looked.verdict ?? { kind: 'not-checked', why: 'not read' } }
  const live = 'found' in read ? read.found : undefined
  // The body names the namespace it is written to, as Helm's does.
  const object = asHelmWrites(looked.object, namespace, live, options.release, options.namespace)
  const name = object.metadata?.name ?? ''
  if (mode.write === 'apply') {
    // Helm 4 creates and updates alike by server-side apply (makeCreateApplyFunc); `--force-conflicts` is not modelled.
    const answer = await client.dryRunApply(resource, namespace, object, HELM_FIELD_MANAGER, false)
    return { write: 'apply', verdict: answer.accepted ? classifyAccepted(live, answer.object) : classifyRefusal(answer, live, object) }
  }
  if (!live) {
    const answer = await client.dryRunCreate(resource, namespace, object, HELM_FIELD_MANAGER)
    return { write: 'create', verdict: answer.accepted ? classifyAccepted(live, answer.object) : classifyRefusal(answer, live, object) }
  }
  // An object new to the release (adopted) is compared with itself, as Helm does: nothing removed.
  // Helm's builder gives the previous revision's objects their namespace too (DefaultNamespace).
  const before = inputs.previous?.get(identity(looked.object, options.namespace))
  const original = inputs.previous && (before ? { ...before, metadata: { ...before.metadata, namespace } } : object)
  const send = async (type: PatchType, patch: object, removed: RemovedField[]) => ({
    answer: await client.dryRunPatch(resource, namespace, name, patch, type, HELM_FIELD_MANAGER),
    removed
  })
  const schema = await inputs.schema(resource.apiVersion, resource.kind)
  let strategic: Helm3Patch | Error
  try {
    strategic = helm3Patch(original, object, live, schema)
  } catch (e) {
    if (!(e instanceof Unmatched || e instanceof HelmRefuses)) throw e
    strategic = e
  }
  // Sent even when Helm would send nothing (empty), or none it can make: the answer says whether
  // the kind takes a strategic merge patch at all (415: a custom resource, which Helm patches otherwise).
  let sent = await send('strategic', strategic instanceof Error ? {} : strategic.patch, strategic instanceof Error ? [] : strategic.removed)
  // Custom resources take no strategic merge patch (415). Helm sends them a two-way JSON merge patch
  // from the previous revision's object to the rendered one, blind to the live object (createPatch):
  // drift the chart does not touch stays, and an empty patch is no request at all.
  if (!sent.answer.accepted && sent.answer.status === 415) {
    const patch = original !== undefined ? (jsonMergePatch(original, object) as KubeObject | undefined) : object
    if (patch === undefined) return { write: 'patch', verdict: { kind: 'unchanged' } }
    sent = await send('merge', patch, [])
  } else if (strategic instanceof HelmRefuses) {
    return { write: 'patch', verdict: { kind: 'invalid', fields: [], message: `Helm 3 cannot make its patch (failed to create patch): ${strategic.message}` } }
  } else if (strategic instanceof Error) {
    return { write: 'patch', verdict: { kind: 'not-checked', why: `Helm 3's patch of it cannot be reproduced here: ${strategic.message}` } }
  } else if (Object.keys(strategic.patch).length === 0) {
    // Helm sends no empty patch ("Looks like there are no changes"): nothing is written.
    return { write: 'patch', verdict: { kind: 'unchanged' } }
  }
  const { answer, removed } = sent
  return { write: 'patch', verdict: answer.accepted ? classifyAccepted(live, answer.object) : classifyRefusal(answer, live, object, removed) }
}

/**
 * Helm adopts an existing object new to the release only when it carries the release's ownership
 * metadata (upgrade and install alike, without --take-ownership). Without the previous manifest,
 * only an object another release's annotations name is surely not adopted.
 */
function ownership(looked: Looked, isNew: Set<KubeObject> | undefined, options: CheckOptions): Verdict | undefined {
  const live = looked.read && 'found' in looked.read ? looked.read.found : undefined
  if (!live || options.release === undefined) return undefined
  const releaseNamespace = options.namespace
  if (isNew !== undefined) {
    if (!isNew.has(looked.object)) return undefined
    const problem = ownershipProblem(live, options.release, releaseNamespace)
    return problem ? { kind: 'not-owned', message: problem } : undefined
  }
  const other = live.metadata?.annotations?.['meta.helm.sh/release-name']
  return other !== undefined && other !== options.release
    ? { kind: 'not-owned', message: `it belongs to release ${other} (meta.helm.sh/release-name)` }
    : undefined
}

/** A hook the upgrade runs whose namesake an earlier run left: Helm 3 meets "already exists", Helm 4 applies over it. */
async function leftOverHook(
  client: ManifestClient,
  looked: Looked,
  mode: ReleaseMode,
  install: boolean
): Promise<{ write: Write; verdict: Verdict } | undefined> {
  const live = looked.read && 'found' in looked.read ? looked.read.found : undefined
  if (looked.verdict) return { write: 'none', verdict: looked.verdict }
  if (!live || !looked.resource) return undefined
  if (mode.write === 'patch') return { write: 'create', verdict: { kind: 'exists', message: leftOverWhy(looked.object, install, 'create') } }
  const hook = { ...looked.object, metadata: { ...looked.object.metadata, namespace: looked.namespace } }
  const answer = await client.dryRunApply(looked.resource, looked.namespace, hook, HELM_FIELD_MANAGER, false)
  if (!answer.accepted) return { write: 'apply', verdict: classifyRefusal(answer, live, hook) }
  if (failedJob(live)) return { write: 'apply', verdict: { kind: 'exists', message: leftOverWhy(looked.object, install, 'apply') } }
  return undefined
}

/** The CRDs of crds/ an install creates first (Helm skips those that exist), and the kinds they bring. */
async function crdsFirst(client: ManifestClient, crds: KubeObject[], mode: ReleaseMode, run: <T>(f: () => Promise<T>) => Promise<T>, options: CheckOptions) {
  type Crd = { spec?: { group?: string; names?: { kind?: string }; versions?: { name?: string; served?: boolean }[] } }
  const verdicts: ObjectVerdict[] = []
  const kinds = new Map<string, string>()
  for (const crd of crds) {
    const looked = await run(() => look(client, readEach(client), crd, options.namespace))
    if (looked.read && 'found' in looked.read) continue
    const { write, verdict } = await run(() => dryRun(client, looked, mode, { schema: async () => undefined }, options))
    verdicts.push(objectVerdict(looked, write, verdict, options))
    const spec = (crd as Crd).spec
    for (const v of spec?.versions ?? [])
      if (v.served !== false) kinds.set(`${spec?.group}/${v.name} ${spec?.names?.kind}`, `its CRD ${crd.metadata?.name} (crds/)`)
  }
  return { verdicts, kinds }
}

function objectVerdict(l: Looked, write: Write, verdict: Verdict, options: CheckOptions, hook?: string[]): ObjectVerdict {
  const apiVersion = l.object.apiVersion ?? ''
  const kind = l.object.kind ?? ''
  const live = l.read && 'found' in l.read ? l.read.found : undefined
  const scope = options.preScope ?? { namespace: options.namespace, release: options.release, includeHooks: false }
  const leaves = clearableByPre(apiVersion, kind, verdict) ? preLeaves(l.object, live, scope) : undefined
  return {
    apiVersion,
    kind,
    namespace: l.namespace,
    name: l.object.metadata?.name ?? '',
    write,
    verdict,
    clearedByPre: clearableByPre(apiVersion, kind, verdict) && leaves === undefined,
    ...(leaves !== undefined ? { preLeaves: leaves } : {}),
    ...(hook ? { hook } : {})
  }
}

/** Every object's verdict, in the manifest's order (hooks and crds/ CRDs after), and what blocks the release. */
export async function checkRelease(client: ManifestClient, objects: KubeObject[], options: CheckOptions): Promise<CheckResult> {
  const queue = new PQueue({ concurrency: options.concurrency })
  const run = <T>(f: () => Promise<T>): Promise<T> => queue.add(f) as Promise<T>
  const readLive = liveReader(client, objects, options.namespace)
  const looked = await Promise.all(objects.map((o) => run(() => look(client, readLive, o, options.namespace))))
  const warnings: string[] = []
  const live = looked.flatMap((l) => (l.read && 'found' in l.read ? [l.read.found] : []))
  const warn = (w: string): number => warnings.push(w)
  const decided = await decideMode(client, options.namespace, options.release, live, warn)
  const { mode, install } = decided
  const blocked = decided.blocked ? [decided.blocked] : []
  const previous = decided.previousManifest === undefined ? undefined : previousObjects(decided.previousManifest, warn)
  if (previous) {
    const unserved = await unservedInPrevious(client, previous, decided.previousRevision)
    if (unserved) blocked.push(unserved)
  }
  const isNew = install ? new Set(objects) : previous ? newToRelease(objects, previous, options.namespace) : undefined
  const inputs = patchInputs(client, previous && byIdentity(previous, options.namespace))
  const crds = install ? await crdsFirst(client, options.crds ?? [], mode, run, options) : { verdicts: [], kinds: new Map<string, string>() }
  if (!install && (options.crds ?? []).length > 0)
    warn(`helm upgrade installs no CRD from the chart's crds/ directory: ${options.crds?.length} CRD(s) of the manifest are left out of the check`)
  const verdicts = await Promise.all(
    looked.map((l) =>
      run(async (): Promise<ObjectVerdict> => {
        const after = l.verdict?.kind === 'not-served' ? crds.kinds.get(`${l.object.apiVersion} ${l.object.kind}`) : undefined
        if (after !== undefined) return objectVerdict(l, 'none', { kind: 'new', after }, options)
        const notOwned = ownership(l, isNew, options)
        if (notOwned) return objectVerdict(l, 'none', notOwned, options)
        const { write, verdict } = await dryRun(client, l, mode, inputs, options)
        return objectVerdict(l, write, verdict, options)
      })
    )
  )
  const hooks = hooksToCheck(options.hooks ?? [], install)
  const hookVerdicts = await Promise.all(
    hooks.map((h) =>
      run(async () => {
        const l = await look(client, readEach(client), h, options.namespace)
        const found = await leftOverHook(client, l, mode, install)
        return found ? [objectVerdict(l, found.write, found.verdict, options, upgradeEvents(h, install))] : []
      })
    )
  )
  const all = [...verdicts, ...crds.verdicts, ...hookVerdicts.flat()]
  for (const v of all) {
    if (v.verdict.kind === 'not-checked')
      warnings.push(`preflight could not check ${v.kind} ${v.namespace ? `${v.namespace}/` : ''}${v.name}: ${v.verdict.why}`)
  }
  return { mode, verdicts: all, blocked, warnings }
}
