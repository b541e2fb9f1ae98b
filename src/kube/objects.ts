// The few objects beside Jobs that job-sweeper reads or writes: the namespace it works in, Helm's
// release records (metadata only) and its own coordination.k8s.io Leases. A part of the client
// (client.ts delegates here), through the same rate limiter and retries.
import type { V1Lease } from '@kubernetes/client-node'
import { statusCode } from './errors.ts'
import { FIELD_MANAGER } from './job-record.ts'
import { seg, type Method, type RestOptions } from './rest.ts'

/** Result of a delete with preconditions: `conflict` means the object changed (or was replaced) since it was read. */
export type DeleteResult = 'deleted' | 'gone' | 'conflict'

/** The object a delete or patch applies to: it must still have this uid (and resourceVersion, if set). */
export interface Precondition {
  uid: string
  resourceVersion?: string
}

/** Namespaces, Helm release records and Leases: the part of JobsClient that is not about Jobs. */
export interface ClusterObjects {
  /** Whether the namespace exists; throws on 403 (a namespaced Role cannot grant reading it). */
  namespaceExists(name: string): Promise<boolean>
  /** Whether Helm's storage of `kind` holds a record of `release` (labels owner=helm, name=<release>), reading metadata only. */
  hasHelmRecord(namespace: string, release: string, kind: 'Secret' | 'ConfigMap'): Promise<boolean>
  /** The Lease, or undefined when it does not exist. */
  getLease(namespace: string, name: string): Promise<V1Lease | undefined>
  /** Creates the Lease; `exists` when someone created it first. */
  createLease(namespace: string, lease: V1Lease): Promise<V1Lease | 'exists'>
  /** Replaces the Lease if its resourceVersion is still the body's: `conflict` (409) or `gone` otherwise. */
  replaceLease(namespace: string, lease: V1Lease): Promise<V1Lease | 'conflict' | 'gone'>
  /** Deletes the Lease if it still matches `precondition`. */
  deleteLease(namespace: string, name: string, precondition: Precondition): Promise<DeleteResult>
}

/** One API call of the client: rate-limited and retried while transient. */
export type Call = <T>(what: string, attempt: (retries: number) => Promise<T>) => Promise<T>
/** One request (one attempt) to the API server: the parsed JSON answer, or an ApiError. */
export type Send = <T>(method: Method, path: string, options?: RestOptions) => Promise<T>

/** Helm stores releases this way (the `owner=helm` label); metadata-only lists of them. */
const METADATA_ONLY = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1'

const leases = (namespace: string): string => `/apis/coordination.k8s.io/v1/namespaces/${seg(namespace)}/leases`

export class KubeClusterObjects implements ClusterObjects {
  private readonly call: Call
  private readonly send: Send

  constructor(call: Call, send: Send) {
    this.call = call
    this.send = send
  }

  async namespaceExists(name: string): Promise<boolean> {
    try {
      await this.call(`read namespace ${name}`, () => this.send('GET', `/api/v1/namespaces/${seg(name)}`))
      return true
    } catch (e) {
      if (statusCode(e) === 404) return false
      throw e
    }
  }

  async hasHelmRecord(namespace: string, release: string, kind: 'Secret' | 'ConfigMap'): Promise<boolean> {
    // The API server answers with PartialObjectMetadata, so no Secret's data ever reaches this process.
    const resource = kind === 'Secret' ? 'secrets' : 'configmaps'
    const list = await this.call(`list Helm's ${kind}s of release ${release} in ${namespace}`, () =>
      this.send<{ items?: unknown[] | null }>('GET', `/api/v1/namespaces/${seg(namespace)}/${resource}`, {
        query: { labelSelector: `owner=helm,name=${release}`, limit: 1 },
        accept: METADATA_ONLY
      })
    )
    // An empty metadata-only list comes with `items: null`.
    return (list.items ?? []).length > 0
  }

  async getLease(namespace: string, name: string): Promise<V1Lease | undefined> {
    try {
      return await this.call(`read Lease ${namespace}/${name}`, () => this.send<V1Lease>('GET', `${leases(namespace)}/${seg(name)}`))
    } catch (e) {
      if (statusCode(e) === 404) return undefined
      throw e
    }
  }

  async createLease(namespace: string, lease: V1Lease): Promise<V1Lease | 'exists'> {
    try {
      return await this.call(`create Lease ${namespace}/${lease.metadata?.name}`, () =>
        this.send<V1Lease>('POST', leases(namespace), { body: lease, query: { fieldManager: FIELD_MANAGER } })
      )
    } catch (e) {
      if (statusCode(e) === 409) return 'exists'
      throw e
    }
  }

  async replaceLease(namespace: string, lease: V1Lease): Promise<V1Lease | 'conflict' | 'gone'> {
    const name = lease.metadata?.name ?? ''
    try {
      // The body's resourceVersion makes this a compare-and-swap: 409 when anyone wrote it since.
      return await this.call(`update Lease ${namespace}/${name}`, () =>
        this.send<V1Lease>('PUT', `${leases(namespace)}/${seg(name)}`, { body: lease, query: { fieldManager: FIELD_MANAGER } })
      )
    } catch (e) {
      if (statusCode(e) === 409) return 'conflict'
      if (statusCode(e) === 404) return 'gone'
      throw e
    }
  }

  async deleteLease(namespace: string, name: string, precondition: Precondition): Promise<DeleteResult> {
    try {
      await this.call(`delete Lease ${namespace}/${name}`, () =>
        this.send('DELETE', `${leases(namespace)}/${seg(name)}`, { body: { preconditions: precondition } })
      )
      return 'deleted'
    } catch (e) {
      if (statusCode(e) === 404) return 'gone'
      if (statusCode(e) === 409) return 'conflict'
      throw e
    }
  }
}
