// The fault proxy's rules: which requests a fault applies to, and how often it fires.

/** A Kubernetes Status response instead of the real one (the request never reaches the server). */
export interface StatusFault {
  kind: 'status'
  /** HTTP status, e.g. 429, 500, 503. */
  code: number
  /** Sent as the Retry-After header and as details.retryAfterSeconds, as kube-apiserver does. */
  retryAfterSeconds?: number
  /** Status.reason; defaults from the code (TooManyRequests, InternalError, ServiceUnavailable…). */
  reason?: string
  /** Status.message; defaults to a sentence naming the injected fault. */
  message?: string
}

/**
 * A TCP reset (RST) of the client's connection: `before` forwarding (the server never sees the
 * request), or `after` the server has answered (it acted, the client never learns how).
 */
export interface ResetFault {
  kind: 'reset'
  when: 'before' | 'after'
}

/**
 * The real response, cut short: after `afterBytes` bytes of body, or after `afterEvents` complete
 * newline-terminated lines (watch events in JSON) plus `plusBytes` bytes of the next one
 * (default 20: inside `{"type":"MODIFIED","object":…`). Both set: whichever comes first.
 */
export interface CutFault {
  kind: 'cut'
  afterBytes?: number
  afterEvents?: number
  plusBytes?: number
  /**
   * How the stream ends: `close` (default) closes the connection without the final chunk, as a
   * dying server or a proxy timeout does; `reset` sends a TCP RST; `end` ends the response
   * cleanly (terminating chunk), so the client sees a normal end with a truncated last line.
   */
  how?: 'close' | 'reset' | 'end'
}

/** The real response, `ms` milliseconds late (the request is held before it is forwarded). */
export interface DelayFault {
  kind: 'delay'
  ms: number
}

export type Fault = StatusFault | ResetFault | CutFault | DelayFault

/** Which requests: every field given must match. */
export interface RequestMatch {
  /** HTTP method, any case. */
  method?: string
  /** The URL path without the query: a RegExp to test, or a string to equal. */
  path?: RegExp | string
  /** Query parameters that must be present, each equal to a string or matching a RegExp. */
  query?: Record<string, string | RegExp>
}

/** A fault, the requests it applies to, and how often. */
export interface FaultRule extends RequestMatch {
  fault: Fault
  /** Let the first `skip` matching requests through untouched (e.g. fail only the 3rd DELETE). */
  skip?: number
  /** Fire at most this many times, then let requests through (default: no limit). */
  times?: number
  /** Fire on each eligible request with this probability (default 1), from the proxy's seeded random. */
  probability?: number
}

/** A rule added to a proxy: how it has fired so far, and a way to remove it. */
export interface RuleHandle {
  readonly rule: FaultRule
  /** Requests that matched the rule (fired or not). */
  readonly matched: number
  /** Requests the fault was applied to. */
  readonly fired: number
  /** Stops the rule from applying to later requests. */
  remove(): void
}

/** The parts of a request a rule looks at. */
export interface RequestKey {
  method: string
  path: string
  query: URLSearchParams
}

export function matches(match: RequestMatch, req: RequestKey): boolean {
  if (match.method && match.method.toUpperCase() !== req.method.toUpperCase()) return false
  if (typeof match.path === 'string' && match.path !== req.path) return false
  if (match.path instanceof RegExp && !match.path.test(req.path)) return false
  for (const [name, want] of Object.entries(match.query ?? {})) {
    const got = req.query.get(name)
    if (got === null) return false
    if (typeof want === 'string' ? got !== want : !want.test(got)) return false
  }
  return true
}

/** A match in words, for error messages. */
export function describeMatch(match: RequestMatch): string {
  const query = Object.entries(match.query ?? {}).map(([k, v]) => `${k}=${String(v)}`)
  return `${match.method ?? 'any method'} ${match.path ?? 'any path'}${query.length ? `?${query.join('&')}` : ''}`
}

/** A rule's state inside the proxy. */
export class ActiveRule implements RuleHandle {
  matched = 0
  fired = 0
  removed = false
  readonly rule: FaultRule

  constructor(rule: FaultRule) {
    if (rule.probability !== undefined && !(rule.probability >= 0 && rule.probability <= 1))
      throw new Error(`Invalid fault rule probability '${rule.probability}': expected a number from 0 to 1`)
    this.rule = rule
  }

  remove(): void {
    this.removed = true
  }

  /** Counts a request against the rule; true when the fault applies to it. */
  fires(req: RequestKey, random: () => number): boolean {
    if (this.removed || !matches(this.rule, req)) return false
    this.matched++
    if (this.matched <= (this.rule.skip ?? 0)) return false
    if (this.fired >= (this.rule.times ?? Infinity)) return false
    if (random() >= (this.rule.probability ?? 1)) return false
    this.fired++
    return true
  }
}

/** mulberry32: a small seeded generator, so a probabilistic fault run can be repeated. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'Conflict',
  410: 'Expired',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout'
}

/** The body kube-apiserver would send with such a status (a metav1.Status). */
export function statusBody(fault: StatusFault): string {
  const details = fault.retryAfterSeconds === undefined ? undefined : { retryAfterSeconds: fault.retryAfterSeconds }
  return JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: fault.message ?? `injected by the fault proxy: HTTP ${fault.code}`,
    reason: fault.reason ?? REASONS[fault.code] ?? 'Unknown',
    details,
    code: fault.code
  })
}
