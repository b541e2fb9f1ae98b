// Requests to the API server as plain JSON, over the kubeconfig's connection settings and
// credentials (client-node's KubeConfig applies both), through one shared connection pool.
//
// Hand-written rather than client-node's generated API classes: those bring a model class and a
// serializer entry for every Kubernetes type, 1.8 MB of the bundle and 12 MB of resident memory
// before the first request, and copy every response into model instances, garbage on every
// request of a run that needs a few fields of each. The engine uses a dozen endpoints; the paths
// below are the API's own.
import type { Readable } from 'node:stream'
import { getCACertificates } from 'node:tls'
import { HttpMethod, RequestContext, type KubeConfig } from '@kubernetes/client-node'

/**
 * A refused request: the HTTP status (`code`), the Kubernetes Status as JSON text (`body`) and
 * the response headers, the shape of client-node's ApiException (errors.ts reads either).
 */
export class ApiError extends Error {
  override name = 'ApiError'
  readonly code: number
  readonly body: string
  readonly headers: Record<string, string>

  constructor(code: number, body: string, headers: Record<string, string>, what: string) {
    super(`${what}: HTTP ${code}`)
    this.code = code
    this.body = body
    this.headers = headers
  }
}

/** The HTTP methods the engine's requests use. */
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

/** What a request sends besides its method and path. */
export interface RestOptions {
  query?: Record<string, string | number | boolean | undefined>
  body?: unknown
  /** Of the body: JSON unless said (a merge patch, a server-side apply). */
  contentType?: string
  /** What to answer with; JSON unless said (a metadata-only list). */
  accept?: string
  signal?: AbortSignal
}

/** The part of undici's Dispatcher this uses: client-node's Agent has it. */
interface Dispatcher {
  request(options: { origin: string; path: string; method: string; headers: Record<string, string>; body?: string; signal?: AbortSignal }): Promise<Answer>
  destroy(): Promise<void>
}

/** undici's answer: the body is a stream that can also be read whole. */
interface Answer {
  statusCode: number
  headers: Record<string, string | string[] | undefined>
  body: Readable & { text(): Promise<string> }
}

export class Rest {
  private readonly kc: KubeConfig
  private readonly server: string
  private pool: Dispatcher | undefined
  private readonly onCredential: (secret: string) => void
  private lastCredential = ''

  /** `onCredential` is called with each new bearer token the kubeconfig's auth yields. */
  constructor(kc: KubeConfig, onCredential: (secret: string) => void = () => {}) {
    this.kc = kc
    this.server = (kc.getCurrentCluster()?.server ?? '').replace(/\/+$/, '')
    this.onCredential = onCredential
  }

  /** Sends one request; resolves with the parsed JSON answer, rejects with ApiError on a 4xx/5xx. */
  async request<T>(method: Method, path: string, options: RestOptions = {}): Promise<T> {
    const text = await (await this.send(method, path, options)).body.text()
    return (text ? JSON.parse(text) : {}) as T
  }

  /**
   * A GET whose answer is streamed (a pod's log): resolves with the body once the API server
   * answered 2xx, rejects with ApiError on a 4xx/5xx, whose `body` is the API server's Status
   * (client-node's Log drops it, and with it the reason: `container "main" … is waiting to start`).
   */
  async stream(path: string, options: RestOptions = {}): Promise<Readable> {
    return (await this.send('GET', path, { accept: 'application/json, */*', ...options })).body
  }

  private async send(method: Method, path: string, options: RestOptions): Promise<Answer> {
    const url = new URL(this.server + path)
    for (const [key, value] of Object.entries(options.query ?? {})) if (value !== undefined && value !== '') url.searchParams.set(key, String(value))
    // The credentials (a token, an exec plugin's, a client certificate) and TLS settings, as
    // client-node's own requests get them; its pool for those settings serves every request.
    const context = new RequestContext(url.toString(), HttpMethod[method])
    await this.kc.applySecurityAuthentication(context)
    this.pool ??= (context.getDispatcher() as Dispatcher | undefined) ?? this.defaultPool()
    const headers: Record<string, string> = { ...context.getHeaders(), Accept: options.accept ?? 'application/json' }
    // A token that exists only now (an exec plugin's, a service-account token the kubelet rotated)
    // is a secret the kubeconfig never held: masked before anything could print it.
    const credential = /^Bearer\s+(.+)$/i.exec(headers.Authorization ?? headers.authorization ?? '')?.[1]
    if (credential && credential !== this.lastCredential) {
      this.lastCredential = credential
      this.onCredential(credential)
    }
    if (options.body !== undefined) headers['Content-Type'] = options.contentType ?? 'application/json'
    const response = await this.pool.request({
      origin: url.origin,
      path: url.pathname + url.search,
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: options.signal
    })
    if (response.statusCode >= 400) {
      const text = await response.body.text()
      const flat = Object.fromEntries(Object.entries(response.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]))
      throw new ApiError(response.statusCode, text, flat, `${method} ${url.pathname}`)
    }
    return response
  }

  /**
   * A pool for a kubeconfig that sets no TLS option (no CA, no client certificate: a server with a
   * publicly trusted certificate), for which client-node leaves requests to fetch's global
   * dispatcher: one made the same way, with Node's default trust (its CAs, NODE_EXTRA_CA_CERTS).
   */
  private defaultPool(): Dispatcher {
    const kc = this.kc as unknown as { createDispatcher(cluster: unknown, options: { ca: string[] }): Dispatcher | undefined }
    const pool = kc.createDispatcher(this.kc.getCurrentCluster(), { ca: getCACertificates('default') })
    if (!pool) throw new Error(`no connection settings for ${this.server}`)
    return pool
  }

  /** Closes the pool, and any connection still being made. */
  async close(): Promise<void> {
    const pool = this.pool
    this.pool = undefined
    await pool?.destroy().catch(() => undefined)
  }
}

/** A path segment, escaped. */
export const seg = (s: string): string => encodeURIComponent(s)
