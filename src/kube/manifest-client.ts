// ManifestClient: what preflight needs from Kubernetes for any kind of object, beside JobsClient
// (which is about Jobs): discovery of the kind's resource, a read of the live object, Helm's
// release record (its apply method and manifest), the OpenAPI document a strategic merge patch is
// built from, the three dry-run writes an upgrade can make, and one real write: pre's orphaning
// delete of a StatefulSet (recreate-statefulsets).
// KubeManifestClient is its one real implementation, a part of the client (client.ts) through the
// same rate limiter and retries.
import { promisify } from 'node:util'
import { gunzip } from 'node:zlib'
import { apiErrorMessage, statusCode } from './errors.ts'
import type { Call, DeleteResult, Precondition, Send } from './objects.ts'
import { ApiError, seg } from './rest.ts'
import type { KubeObject } from '../settings/kube-object.ts'

export type { KubeObject }

/** The REST resource that serves a kind in one API version. */
export interface ApiResource {
  /** `apps/v1`, or `v1` for the core group. */
  apiVersion: string
  kind: string
  /** The resource's plural name in paths: `statefulsets`. */
  name: string
  namespaced: boolean
}

/** The API server refused a request: its HTTP status and body (a Status as JSON text, or plain text). */
export interface Refusal {
  status: number
  body: string
}

/** A dry-run write's answer: the object as the write would leave it, or the refusal. */
export type WriteAnswer = { accepted: true; object: KubeObject } | ({ accepted: false } & Refusal)

/** A read's answer: the live object, absent (404), or refused (403 and other 4xx). */
export type ReadAnswer = { found: KubeObject } | { absent: true } | { refused: Refusal }

/** The statuses of a Helm revision that mean an operation on the release has not ended (Status.IsPending). */
export const PENDING_STATUSES: ReadonlySet<string> = new Set(['pending-install', 'pending-upgrade', 'pending-rollback'])

/** One revision of a Helm release: its number and status (the storage Secret's labels), how it was written, and its manifest. */
export interface Revision {
  revision: number
  /** `deployed`, `failed`, `superseded`, `pending-upgrade`, … */
  status: string
  /** Helm 4 records `apply_method` `ssa` or `csa`; Helm 3 nothing. */
  method: 'ssa' | 'csa' | ''
  /** What that revision rendered (hooks apart). */
  manifest: string
}

/**
 * A Helm release as `helm upgrade` reads it (pkg/action/upgrade.go): `last`, the newest revision of
 * any status (Releases.Last: a pending one makes Helm refuse the upgrade, and its apply method
 * decides whether Helm 4 applies server-side), and `current`, the revision the upgrade is computed
 * from: the newest deployed one, or else the last if it failed or was superseded (none: Helm
 * refuses, "has no deployed releases"). Absent: no revision, or the last was uninstalled
 * (`helm upgrade --install` installs then).
 */
export type ReleaseHistory = { last: Revision; current?: Revision } | { absent: true } | { refused: Refusal }

/** The Helm 3 patch types: strategic merge for built-in kinds, JSON merge for the rest (custom resources). */
export type PatchType = 'strategic' | 'merge'

export interface ManifestClient {
  /** The namespace used for an object whose manifest names none: the context's, else `default`. */
  readonly defaultNamespace: string
  /** The resource serving `kind` in `apiVersion`, or `not-served` when the cluster lacks the group/version or the kind; discovery is cached. */
  resourceFor(apiVersion: string, kind: string): Promise<ApiResource | 'not-served'>
  /** The live object. */
  read(resource: ApiResource, namespace: string | undefined, name: string): Promise<ReadAnswer>
  /** The live objects named in `names`, by one paged list of the resource in the namespace (others are dropped as each page arrives), or the refusal. */
  listNamed(
    resource: ApiResource,
    namespace: string | undefined,
    names: ReadonlySet<string>
  ): Promise<{ found: Map<string, KubeObject> } | { refused: Refusal }>
  /** The release's revisions as Helm's upgrade reads them (its Secrets, storage driver `secret`). */
  releaseHistory(namespace: string, release: string): Promise<ReleaseHistory>
  /** The OpenAPI v3 document of `apiVersion`'s group/version (`/openapi/v3/apis/apps/v1`), cached; undefined when the server does not publish it or refuses it. */
  openApi(apiVersion: string): Promise<object | undefined>
  /** `POST ?dryRun=All`, as Helm creates an object new to a client-side release (no fieldValidation: Helm sends none there). */
  dryRunCreate(resource: ApiResource, namespace: string | undefined, object: KubeObject, fieldManager: string): Promise<WriteAnswer>
  /** Server-side apply, `?dryRun=All`, `fieldValidation=Strict`, as Helm 4 creates and updates the objects of a release it applies server-side. */
  dryRunApply(resource: ApiResource, namespace: string | undefined, object: KubeObject, fieldManager: string, force: boolean): Promise<WriteAnswer>
  /** A patch of type `type`, `?dryRun=All`, as Helm 3 (and Helm 4 on a client-side release) upgrades (no fieldValidation, as Helm sends none). */
  dryRunPatch(resource: ApiResource, namespace: string | undefined, name: string, patch: object, type: PatchType, fieldManager: string): Promise<WriteAnswer>
  /** Deletes the object if it still has this uid and resourceVersion, leaving its dependents (propagationPolicy Orphan). */
  deleteOrphaning(resource: ApiResource, namespace: string | undefined, name: string, precondition: Precondition): Promise<DeleteResult>
}

const CONTENT_TYPE: Record<PatchType | 'apply', string> = {
  strategic: 'application/strategic-merge-patch+json',
  merge: 'application/merge-patch+json',
  apply: 'application/apply-patch+yaml'
}

const groupPath = (apiVersion: string): string => (apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`)

function objectPath(resource: ApiResource, namespace: string | undefined, name?: string): string {
  const ns = resource.namespaced ? `/namespaces/${seg(namespace ?? '')}` : ''
  return `${groupPath(resource.apiVersion)}${ns}/${resource.name}${name === undefined ? '' : `/${seg(name)}`}`
}

/**
 * A refusal that is an answer, not a transient failure to retry: every 4xx, and the 500s that
 * waiting does not change (a webhook that cannot be called, an apply body the schema refuses).
 */
function finalRefusal(e: unknown): Refusal | undefined {
  const status = statusCode(e)
  if (status === undefined) return undefined
  const body = e instanceof ApiError ? e.body : JSON.stringify({ message: apiErrorMessage(e) })
  if (status < 500 && status !== 429) return { status, body }
  if (status === 500 && /failed calling webhook|failed to create typed patch object/i.test(body)) return { status, body }
  return undefined
}

interface DiscoveryList {
  resources?: { name: string; kind: string; namespaced: boolean }[]
}

export class KubeManifestClient implements ManifestClient {
  readonly defaultNamespace: string
  private readonly call: Call
  private readonly send: Send
  private readonly discovery = new Map<string, Promise<DiscoveryList | undefined>>()
  private openApiIndex?: Promise<{ paths?: Record<string, { serverRelativeURL?: string }> }>
  private readonly openApiDocs = new Map<string, Promise<object | undefined>>()

  constructor(call: Call, send: Send, defaultNamespace: string) {
    this.call = call
    this.send = send
    this.defaultNamespace = defaultNamespace
  }

  resourceFor(apiVersion: string, kind: string): Promise<ApiResource | 'not-served'> {
    let list = this.discovery.get(apiVersion)
    if (!list) {
      list = this.call(`discover ${apiVersion}`, () => this.send<DiscoveryList>('GET', groupPath(apiVersion))).catch((e: unknown) => {
        // 404 with a Status (a removed version) or plain text (`404 page not found`, an unknown group).
        if (statusCode(e) === 404) return undefined
        throw e
      })
      this.discovery.set(apiVersion, list)
    }
    return list.then((l) => {
      // Subresources (`deployments/scale`) serve other kinds under the same list.
      const found = l?.resources?.find((r) => r.kind === kind && !r.name.includes('/'))
      return found ? { apiVersion, kind, name: found.name, namespaced: found.namespaced } : 'not-served'
    })
  }

  async read(resource: ApiResource, namespace: string | undefined, name: string): Promise<ReadAnswer> {
    try {
      return { found: await this.call(`read ${resource.kind} ${name}`, () => this.send<KubeObject>('GET', objectPath(resource, namespace, name))) }
    } catch (e) {
      const refusal = finalRefusal(e)
      if (refusal?.status === 404) return { absent: true }
      if (refusal) return { refused: refusal }
      throw e
    }
  }

  async listNamed(
    resource: ApiResource,
    namespace: string | undefined,
    names: ReadonlySet<string>
  ): Promise<{ found: Map<string, KubeObject> } | { refused: Refusal }> {
    type Page = { items?: KubeObject[]; metadata?: { continue?: string } }
    const found = new Map<string, KubeObject>()
    let next: string | undefined
    try {
      do {
        const from = next
        const page = await this.call(`list ${resource.name}`, () =>
          this.send<Page>('GET', objectPath(resource, namespace), { query: { limit: 500, continue: from } })
        )
        // A list's items name neither apiVersion nor kind: put them back, as a GET returns them.
        for (const item of page.items ?? [])
          if (names.has(item.metadata?.name ?? '')) found.set(item.metadata?.name ?? '', { apiVersion: resource.apiVersion, kind: resource.kind, ...item })
        next = page.metadata?.continue || undefined
      } while (next)
    } catch (e) {
      const refusal = finalRefusal(e)
      if (refusal) return { refused: refusal }
      throw e
    }
    return { found }
  }

  openApi(apiVersion: string): Promise<object | undefined> {
    let doc = this.openApiDocs.get(apiVersion)
    if (!doc) {
      type Index = { paths?: Record<string, { serverRelativeURL?: string }> }
      this.openApiIndex ??= this.call('read the OpenAPI index', () => this.send<Index>('GET', '/openapi/v3')).catch(() => ({}) as Index)
      doc = this.openApiIndex.then(async (index) => {
        // The index's URL carries the document's hash: the server answers it from its cache.
        const url = index.paths?.[groupPath(apiVersion).slice(1)]?.serverRelativeURL
        if (!url) return undefined
        const [path, query] = url.split('?')
        return this.call(`read the OpenAPI document of ${apiVersion}`, () =>
          this.send<object>('GET', path, { query: Object.fromEntries(new URLSearchParams(query ?? '')) })
        ).catch(() => undefined)
      })
      this.openApiDocs.set(apiVersion, doc)
    }
    return doc
  }

  async releaseHistory(namespace: string, release: string): Promise<ReleaseHistory> {
    type Secret = { metadata?: { labels?: Record<string, string> }; data?: { release?: string } }
    let list: { items?: Secret[] }
    try {
      // Every revision: their labels say which is the newest and which are deployed; only those two are decoded.
      list = await this.call(`read the release records of ${release} in ${namespace}`, () =>
        this.send<{ items?: Secret[] }>('GET', `/api/v1/namespaces/${seg(namespace)}/secrets`, { query: { labelSelector: `owner=helm,name=${release}` } })
      )
    } catch (e) {
      const refusal = finalRefusal(e)
      if (refusal) return { refused: refusal }
      throw e
    }
    const version = (s: Secret): number => Number(s.metadata?.labels?.version ?? 0)
    const status = (s: Secret): string => s.metadata?.labels?.status ?? ''
    const newestFirst = (list.items ?? []).filter((s) => s.data?.release).sort((a, b) => version(b) - version(a))
    const last = newestFirst[0]
    if (!last || status(last) === 'uninstalled') return { absent: true }
    const decode = async (s: Secret): Promise<Revision> => {
      // The Secret's data is base64 of Helm's own base64 of the gzipped release JSON.
      const gzipped = Buffer.from(Buffer.from(s.data?.release ?? '', 'base64').toString(), 'base64')
      const record = JSON.parse((await promisify(gunzip)(gzipped)).toString()) as { apply_method?: string; version?: number; manifest?: string }
      return {
        revision: record.version ?? version(s),
        status: status(s),
        method: record.apply_method === 'ssa' || record.apply_method === 'csa' ? record.apply_method : '',
        manifest: record.manifest ?? ''
      }
    }
    try {
      const lastRevision = await decode(last)
      if (lastRevision.status === 'deployed') return { last: lastRevision, current: lastRevision }
      const deployed = newestFirst.find((s) => status(s) === 'deployed')
      if (deployed) return { last: lastRevision, current: await decode(deployed) }
      return { last: lastRevision, current: lastRevision.status === 'failed' || lastRevision.status === 'superseded' ? lastRevision : undefined }
    } catch {
      // Not the parser's message: it may quote the record, which holds the chart's values.
      return { refused: { status: 0, body: `a release record of ${release} could not be decoded (not gzipped JSON in Helm's format)` } }
    }
  }

  dryRunCreate(resource: ApiResource, namespace: string | undefined, object: KubeObject, fieldManager: string): Promise<WriteAnswer> {
    return this.write(`dry-run create ${resource.kind} ${object.metadata?.name}`, () =>
      this.send('POST', objectPath(resource, namespace), { body: object, query: { dryRun: 'All', fieldManager } })
    )
  }

  dryRunApply(resource: ApiResource, namespace: string | undefined, object: KubeObject, fieldManager: string, force: boolean): Promise<WriteAnswer> {
    const name = object.metadata?.name ?? ''
    return this.write(`dry-run apply ${resource.kind} ${name}`, () =>
      this.send('PATCH', objectPath(resource, namespace, name), {
        body: object,
        contentType: CONTENT_TYPE.apply,
        query: { dryRun: 'All', fieldManager, force, fieldValidation: 'Strict' }
      })
    )
  }

  dryRunPatch(resource: ApiResource, namespace: string | undefined, name: string, patch: object, type: PatchType, fieldManager: string): Promise<WriteAnswer> {
    return this.write(`dry-run patch ${resource.kind} ${name}`, () =>
      this.send('PATCH', objectPath(resource, namespace, name), { body: patch, contentType: CONTENT_TYPE[type], query: { dryRun: 'All', fieldManager } })
    )
  }

  async deleteOrphaning(resource: ApiResource, namespace: string | undefined, name: string, precondition: Precondition): Promise<DeleteResult> {
    try {
      await this.call(`delete ${resource.kind} ${name} (orphaning its dependents)`, () =>
        this.send('DELETE', objectPath(resource, namespace, name), { body: { propagationPolicy: 'Orphan', preconditions: precondition } })
      )
      return 'deleted'
    } catch (e) {
      if (statusCode(e) === 404) return 'gone'
      if (statusCode(e) === 409) return 'conflict'
      throw e
    }
  }

  private async write(what: string, request: () => Promise<unknown>): Promise<WriteAnswer> {
    return this.call(what, async (): Promise<WriteAnswer> => {
      try {
        return { accepted: true, object: (await request()) as KubeObject }
      } catch (e) {
        const refusal = finalRefusal(e)
        if (refusal) return { accepted: false, ...refusal }
        throw e
      }
    })
  }
}
