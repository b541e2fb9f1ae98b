// A scripted ManifestClient: live objects by kind and name, the release's history, the kinds the
// cluster serves, and answers to dry runs (accepted with the body sent, unless scripted). It records
// every write it is asked for. It scripts answers at our interface; it imitates no HTTP.
import type { ApiResource, KubeObject, ManifestClient, PatchType, ReadAnswer, ReleaseHistory, Revision, WriteAnswer } from '../../src/kube/manifest-client.ts'

export interface SentWrite {
  verb: 'create' | 'apply' | 'patch'
  kind: string
  name: string
  body: object
  type?: PatchType
}

export interface FakeManifestOptions {
  /** Objects that exist, each with its kind and (if namespaced) namespace. */
  live?: KubeObject[]
  /** The release's history; default: none (an install). */
  history?: ReleaseHistory
  /** `apiVersion kind` pairs the cluster does not serve. */
  notServed?: string[]
  /** Kinds that refuse a strategic merge patch (415), as custom resources do. */
  custom?: string[]
  /** A scripted answer for a write of `kind/name`. */
  answers?: Record<string, WriteAnswer>
}

const key = (kind: string | undefined, name: string | undefined): string => `${kind}/${name}`

/** A history whose last revision is `last` (and current the same when deployed). */
export function history(last: Partial<Revision>, current?: Partial<Revision>): ReleaseHistory {
  const revision = (r: Partial<Revision>): Revision => ({ revision: 1, status: 'deployed', method: '', manifest: '', ...r })
  const l = revision(last)
  // As the client reads it: with no deployed revision, a failed or superseded last one is current.
  return { last: l, current: current ? revision(current) : ['deployed', 'failed', 'superseded'].includes(l.status) ? l : undefined }
}

export function fakeManifestClient(options: FakeManifestOptions = {}) {
  const sent: SentWrite[] = []
  const live = new Map((options.live ?? []).map((o) => [key(o.kind, o.metadata?.name), o]))
  const answer = (verb: SentWrite['verb'], kind: string, name: string, body: object, type?: PatchType): WriteAnswer => {
    sent.push({ verb, kind, name, body, ...(type ? { type } : {}) })
    if (verb === 'patch' && type === 'strategic' && options.custom?.includes(kind))
      return { accepted: false, status: 415, body: JSON.stringify({ message: 'the body of the request was in an unknown format' }) }
    const scripted = options.answers?.[key(kind, name)]
    if (scripted) return scripted
    const before = live.get(key(kind, name)) ?? {}
    return { accepted: true, object: verb === 'patch' ? { ...before, ...(body as KubeObject) } : (body as KubeObject) }
  }
  const client: ManifestClient = {
    defaultNamespace: 'shop',
    resourceFor: async (apiVersion, kind) =>
      options.notServed?.includes(`${apiVersion} ${kind}`)
        ? 'not-served'
        : { apiVersion, kind, name: `${kind.toLowerCase()}s`, namespaced: !kind.startsWith('Cluster') },
    read: async (r: ApiResource, _ns, name): Promise<ReadAnswer> => {
      const found = live.get(key(r.kind, name))
      return found ? { found } : { absent: true }
    },
    listNamed: async (r, _ns, names) => ({
      found: new Map([...live.values()].filter((o) => o.kind === r.kind && names.has(o.metadata?.name ?? '')).map((o) => [o.metadata?.name ?? '', o]))
    }),
    releaseHistory: async () => options.history ?? { absent: true },
    openApi: async () => undefined,
    dryRunCreate: async (r, _ns, object) => answer('create', r.kind, object.metadata?.name ?? '', object),
    dryRunApply: async (r, _ns, object) => answer('apply', r.kind, object.metadata?.name ?? '', object),
    dryRunPatch: async (r, _ns, name, patch, type) => answer('patch', r.kind, name, patch, type),
    deleteOrphaning: async () => {
      throw new Error('no delete expected')
    }
  }
  return { client, sent }
}

/** The labels and annotations Helm puts on an object of `release` in `namespace`. */
export function owned(o: KubeObject, release = 'app', namespace = 'shop'): KubeObject {
  return {
    ...o,
    metadata: {
      ...o.metadata,
      labels: { ...o.metadata?.labels, 'app.kubernetes.io/managed-by': 'Helm' },
      annotations: { ...o.metadata?.annotations, 'meta.helm.sh/release-name': release, 'meta.helm.sh/release-namespace': namespace }
    }
  }
}
