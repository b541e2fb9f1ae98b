// Checks every object of a rendered release against the live cluster, each by a dry run of the
// write the upgrade will make: a create for an object new to the cluster, Helm 4's server-side
// apply as field manager `helm` without force, or (a client-side release) Helm 3's three-way patch
// from the previous revision's manifest. Bounded concurrency: reads first (the release mode may
// depend on them), then the writes.
import PQueue from 'p-queue'
import type { ApiResource, KubeObject, ManifestClient, PatchType, ReadAnswer, WriteAnswer } from '../kube/manifest-client.ts'
import { renderedRelease } from '../settings/rendered-release.ts'
import { classifyAccepted, classifyRefusal } from './classify.ts'
import { decideMode, HELM_FIELD_MANAGER, type ReleaseMode } from './mode.ts'
import { patchSchemaOf, type OpenApiDocument, type PatchSchema } from './patch-schema.ts'
import { helm3Patch, type RemovedField } from './three-way.ts'
import { clearedByPre, type ObjectVerdict, type Verdict, type Write } from './verdict.ts'

export interface CheckOptions {
  /** Namespace of the objects whose manifest names none (and of the release record). */
  namespace: string
  /** The Helm release, whose record says how it was applied; undefined: decided from field managers. */
  release?: string
  /** How many objects are checked at once. */
  concurrency: number
}

export interface CheckResult {
  mode: ReleaseMode
  verdicts: ObjectVerdict[]
  warnings: string[]
}

/** One object, resolved and read. */
interface Looked {
  object: KubeObject
  resource?: ApiResource
  namespace?: string
  read?: ReadAnswer
  verdict?: Verdict
}

/** From this many objects of one kind in one namespace, one list reads them all instead of a GET each. */
const LIST_FROM = 10

type Read = (resource: ApiResource, namespace: string | undefined, name: string) => Promise<ReadAnswer>

/**
 * Reads the live objects: a kind the release has many of in a namespace by one paged list (a
 * release of 300 objects needs a handful of requests, not 300), the others by a GET each. A list
 * the credentials may not make (a Role may grant get alone) falls back to the GETs.
 */
function liveReader(client: ManifestClient, objects: KubeObject[], defaultNamespace: string): Read {
  const group = (apiVersion: string, kind: string, namespace: string | undefined): string => `${apiVersion} ${kind} ${namespace ?? ''}`
  const names = new Map<string, Set<string>>()
  for (const o of objects) {
    const key = group(o.apiVersion ?? '', o.kind ?? '', o.metadata?.namespace ?? defaultNamespace)
    names.set(key, (names.get(key) ?? new Set()).add(o.metadata?.name ?? ''))
  }
  const lists = new Map<string, Promise<{ found: Map<string, KubeObject> } | { refused: unknown }>>()
  return async (resource, namespace, name) => {
    const key = group(resource.apiVersion, resource.kind, namespace ?? defaultNamespace)
    const wanted = names.get(key)
    if (!wanted || wanted.size < LIST_FROM) return client.read(resource, namespace, name)
    let list = lists.get(key)
    if (!list) {
      list = client.listNamed(resource, namespace, wanted)
      lists.set(key, list)
    }
    const listed = await list
    if (!('found' in listed)) return client.read(resource, namespace, name)
    const found = listed.found.get(name)
    return found ? { found } : { absent: true }
  }
}

async function look(client: ManifestClient, readLive: Read, object: KubeObject, defaultNamespace: string): Promise<Looked> {
  const resource = await client.resourceFor(object.apiVersion ?? '', object.kind ?? '')
  if (resource === 'not-served') return { object, verdict: { kind: 'not-served', what: `${object.kind} in ${object.apiVersion}` } }
  const namespace = resource.namespaced ? (object.metadata?.namespace ?? defaultNamespace) : undefined
  const read = await readLive(resource, namespace, object.metadata?.name ?? '')
  if ('refused' in read) return { object, resource, namespace, read, verdict: classifyRefusal(read.refused, undefined, object) }
  return { object, resource, namespace, read }
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

/** Helm matches an object with its previous version by group, kind, namespace and name (ResourceList.Get). */
function identity(o: KubeObject, namespace: string): string {
  const apiVersion = o.apiVersion ?? ''
  const group = apiVersion.includes('/') ? apiVersion.split('/')[0] : ''
  return `${group}/${o.kind}/${o.metadata?.namespace ?? namespace}/${o.metadata?.name}`
}

function patchInputs(client: ManifestClient, previousManifest: string | undefined, namespace: string, warn: (m: string) => void): PatchInputs {
  let previous: Map<string, KubeObject> | undefined
  if (previousManifest !== undefined) {
    try {
      previous = new Map(renderedRelease(previousManifest).objects.map((o) => [identity(o, namespace), o]))
    } catch (e) {
      warn(`preflight could not parse the previous revision's manifest (${e instanceof Error ? e.message : String(e)}): a two-way patch`)
    }
  }
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
  let write: Write
  let answer: WriteAnswer
  if (!live) {
    write = 'create'
    answer = await client.dryRunCreate(resource, namespace, object, HELM_FIELD_MANAGER)
  } else if (mode.write === 'apply') {
    write = 'apply'
    // `helm upgrade --force-conflicts` forces; preflight checks the plain upgrade.
    answer = await client.dryRunApply(resource, namespace, object, HELM_FIELD_MANAGER, false)
  } else {
    write = 'patch'
    const name = object.metadata?.name ?? ''
    // An object new to the release (adopted) is compared with itself, as Helm does: nothing removed.
    const original = inputs.previous && (inputs.previous.get(identity(looked.object, options.namespace)) ?? object)
    const schema = await inputs.schema(resource.apiVersion, resource.kind)
    const send = async (type: PatchType): Promise<{ answer: WriteAnswer; removed: RemovedField[] }> => {
      const { patch, removed } = helm3Patch(original, object, type, schema)
      return { answer: await client.dryRunPatch(resource, namespace, name, patch, type, HELM_FIELD_MANAGER), removed }
    }
    let sent = await send('strategic')
    // Custom resources take no strategic merge patch (415): Helm 3 sends them a JSON merge patch.
    if (!sent.answer.accepted && sent.answer.status === 415) sent = await send('merge')
    const { answer: patched, removed } = sent
    return { write, verdict: patched.accepted ? classifyAccepted(live, patched.object) : classifyRefusal(patched, live, object, removed) }
  }
  return { write, verdict: answer.accepted ? classifyAccepted(live, answer.object) : classifyRefusal(answer, live, object) }
}

/** Every object's verdict, in the manifest's order. */
export async function checkRelease(client: ManifestClient, objects: KubeObject[], options: CheckOptions): Promise<CheckResult> {
  const queue = new PQueue({ concurrency: options.concurrency })
  const readLive = liveReader(client, objects, options.namespace)
  const looked = await Promise.all(objects.map((o) => queue.add(() => look(client, readLive, o, options.namespace))))
  const warnings: string[] = []
  const live = looked.flatMap((l) => (l.read && 'found' in l.read ? [l.read.found] : []))
  const warn = (w: string): number => warnings.push(w)
  const { mode, previousManifest } = await decideMode(client, options.namespace, options.release, live, warn)
  const inputs = patchInputs(client, previousManifest, options.namespace, warn)
  const verdicts = await Promise.all(
    looked.map((l) =>
      queue.add(async (): Promise<ObjectVerdict> => {
        const { write, verdict } = await dryRun(client, l, mode, inputs, options)
        const apiVersion = l.object.apiVersion ?? ''
        const kind = l.object.kind ?? ''
        return {
          apiVersion,
          kind,
          namespace: l.namespace,
          name: l.object.metadata?.name ?? '',
          write,
          verdict,
          clearedByPre: clearedByPre(apiVersion, kind, verdict)
        }
      })
    )
  )
  for (const v of verdicts) {
    if (v.verdict.kind === 'not-checked')
      warnings.push(`preflight could not check ${v.kind} ${v.namespace ? `${v.namespace}/` : ''}${v.name}: ${v.verdict.why}`)
  }
  return { mode, verdicts, warnings }
}
