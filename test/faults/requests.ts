// What the fault proxy saw: every request, counted by method and path pattern or by route, so a
// test can assert a fault was served and a benchmark can report API requests per Job.
import { describeMatch, matches, type Fault, type RequestMatch } from './rules.ts'

/** One request the proxy received, and what became of it. */
export interface ProxiedRequest {
  method: string
  path: string
  /** The query string without '?', as sent. */
  query: string
  /** The fault applied to it, if any. */
  fault?: Fault['kind']
  /** The HTTP status the client got (undefined if it got none: reset, or still waiting). */
  status?: number
}

export class RequestLog {
  /** Every request since the last reset(), in arrival order. */
  readonly all: ProxiedRequest[] = []
  private readonly waiters = new Set<{ check: () => boolean; resolve: () => void }>()

  /** @internal Called by the proxy for each request it receives. */
  record(entry: ProxiedRequest): void {
    this.all.push(entry)
    for (const waiter of this.waiters) {
      if (!waiter.check()) continue
      this.waiters.delete(waiter)
      waiter.resolve()
    }
  }

  /** How many requests matched `match` (all requests when omitted), faulted ones included. */
  count(match: RequestMatch = {}): number {
    return this.all.filter((r) => matches(match, { method: r.method, path: r.path, query: new URLSearchParams(r.query) })).length
  }

  /** Requests per route (`GET /apis/batch/v1/namespaces/{namespace}/jobs/{name}`…), most frequent first. */
  countByRoute(): [route: string, count: number][] {
    const counts = new Map<string, number>()
    for (const r of this.all) {
      const route = routeOf(r.method, r.path)
      counts.set(route, (counts.get(route) ?? 0) + 1)
    }
    return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
  }

  /**
   * Resolves once `n` requests matching `match` have arrived (since the last reset), e.g. to
   * kill the API server in the middle of a run's deletes.
   */
  waitFor(match: RequestMatch, n: number, timeoutMs = 60_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const waiter = { check: () => this.count(match) >= n, resolve }
      if (waiter.check()) return resolve()
      this.waiters.add(waiter)
      setTimeout(() => {
        if (!this.waiters.delete(waiter)) return
        reject(new Error(`timed out after ${timeoutMs / 1000}s waiting for ${n} requests like ${describeMatch(match)}; ${this.count(match)} arrived`))
      }, timeoutMs).unref()
    })
  }

  /** Forgets the requests seen so far. */
  reset(): void {
    this.all.length = 0
  }
}

/**
 * A request's route: its API path with namespace and object names as placeholders, e.g.
 * `DELETE /apis/batch/v1/namespaces/{namespace}/jobs/{name}`; other paths (/readyz) as they are.
 */
export function routeOf(method: string, path: string): string {
  const segments = path.split('/').filter(Boolean)
  // /api/v1/… (the core group) or /apis/<group>/<version>/…
  const prefix = segments[0] === 'api' ? 2 : segments[0] === 'apis' ? 3 : segments.length
  const rest = segments.slice(prefix)
  let at = 0
  if (rest[0] === 'namespaces' && rest.length > 2) {
    rest[1] = '{namespace}'
    at = 2
  }
  if (rest.length > at + 1) rest[at + 1] = '{name}'
  return `${method.toUpperCase()} /${[...segments.slice(0, prefix), ...rest].join('/')}`
}
