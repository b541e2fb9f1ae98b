// Looking an object up before its dry run: the kind's resource (discovery), and the live object,
// read by one paged list where the release has many of a kind in a namespace, else by a GET.
import type { ApiResource, KubeObject, ManifestClient, ReadAnswer } from '../kube/manifest-client.ts'
import { classifyRefusal } from './classify.ts'
import type { Verdict } from './verdict.ts'

/** One object, resolved and read. */
export interface Looked {
  object: KubeObject
  resource?: ApiResource
  namespace?: string
  read?: ReadAnswer
  verdict?: Verdict
}

/** From this many objects of one kind in one namespace, one list reads them all instead of a GET each. */
const LIST_FROM = 10

export type Read = (resource: ApiResource, namespace: string | undefined, name: string) => Promise<ReadAnswer>

/**
 * Reads the live objects: a kind the release has many of in a namespace by one paged list (a
 * release of 300 objects needs a handful of requests, not 300), the others by a GET each. A list
 * the credentials may not make (a Role may grant get alone) falls back to the GETs.
 */
export function liveReader(client: ManifestClient, objects: KubeObject[], defaultNamespace: string): Read {
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

export async function look(client: ManifestClient, readLive: Read, object: KubeObject, defaultNamespace: string): Promise<Looked> {
  const resource = await client.resourceFor(object.apiVersion ?? '', object.kind ?? '')
  if (resource === 'not-served') return { object, verdict: { kind: 'not-served', what: `${object.kind} in ${object.apiVersion}` } }
  const namespace = resource.namespaced ? (object.metadata?.namespace ?? defaultNamespace) : undefined
  const read = await readLive(resource, namespace, object.metadata?.name ?? '')
  if ('refused' in read) return { object, resource, namespace, read, verdict: classifyRefusal(read.refused, undefined, object) }
  return { object, resource, namespace, read }
}

/** A GET each: for the few objects outside the rendered release's lists (hooks, crds/ CRDs). */
export const readEach =
  (client: ManifestClient): Read =>
  (resource, namespace, name) =>
    client.read(resource, namespace, name)
