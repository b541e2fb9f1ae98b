// Retrying what is transient, as client-go's rest client does: 429 (honouring Retry-After), 5xx,
// refused or reset connections and timeouts are retried with exponential backoff and full jitter,
// within a total budget; every other answer (400, 403, 404, 409, 422…) is final at once.
//
// Hand-written rather than p-retry: the delay must come from the server's Retry-After when it sends
// one, and an exhausted budget must say "cluster unreachable" in words, which p-retry leaves to us.
import { apiErrorMessage, statusCode } from './errors.ts'

/** How long and how often a request is retried. */
export interface RetryPolicy {
  /** Total time one request may spend retrying, in milliseconds (documented: 60 s). */
  budgetMs: number
  /** First backoff delay, doubled on each attempt up to maxDelayMs. */
  baseDelayMs: number
  maxDelayMs: number
}

export const DEFAULT_RETRY: RetryPolicy = { budgetMs: 60_000, baseDelayMs: 250, maxDelayMs: 8_000 }

/** The API server could not be reached (or kept failing) for the whole retry budget. */
export class ClusterUnreachable extends Error {
  override name = 'ClusterUnreachable'
}

/**
 * A request that got no answer at all before its deadline: the server accepted the connection and
 * never replied. Transient (its cause is the deadline's TimeoutError), and never a quiet watch.
 */
export class NoAnswer extends Error {
  override name = 'NoAnswer'
}

/**
 * The run was cancelled (SIGINT or SIGTERM forwarded by the launcher): the reason of the run's
 * AbortSignal, and what every wait and retry sleep cut short by it rejects with.
 */
export class RunCancelled extends Error {
  override name = 'RunCancelled'
}

/** The signal's RunCancelled (its reason), or one that says so when it was aborted otherwise. */
export function cancelledBy(signal: AbortSignal): RunCancelled {
  return signal.reason instanceof RunCancelled ? signal.reason : new RunCancelled('the run was cancelled')
}

/**
 * Waits `ms`; rejects with RunCancelled at once when `signal` is (or becomes) aborted. A
 * `background` wait (a renewal, a progress line) does not by itself keep the process alive.
 */
export function sleep(ms: number, signal?: AbortSignal, background = false): Promise<void> {
  if (signal?.aborted) return Promise.reject(cancelledBy(signal))
  return new Promise((resolve, reject) => {
    const done = (): void => {
      signal?.removeEventListener('abort', cancel)
      resolve()
    }
    const timer = setTimeout(done, ms)
    if (background) timer.unref()
    const cancel = (): void => {
      clearTimeout(timer)
      reject(cancelledBy(signal as AbortSignal))
    }
    signal?.addEventListener('abort', cancel, { once: true })
  })
}

/** One request kept failing for the whole budget while the API server answered others. */
export class RetriesExhausted extends Error {
  override name = 'RetriesExhausted'
}

// Connection-level failures: the request may not have reached the server, or its answer was lost.
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT'
])

/** The network error code (ECONNREFUSED…) anywhere in an error's cause chain, if any. */
export function networkCode(e: unknown): string | undefined {
  for (let cur = e, depth = 0; cur && depth < 5; cur = (cur as { cause?: unknown }).cause, depth++) {
    const code = (cur as { code?: unknown }).code
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return code
    const name = (cur as { name?: unknown }).name
    if (name === 'TimeoutError' || name === 'AbortError') return 'timeout'
  }
  return undefined
}

/** The message of the error in the chain that carries the network code: `connect ECONNREFUSED 10.0.0.1:6443`. */
export function networkMessage(e: unknown): string | undefined {
  for (let cur = e, depth = 0; cur && depth < 5; cur = (cur as { cause?: unknown }).cause, depth++) {
    const code = (cur as { code?: unknown }).code
    if (typeof code === 'string' && NETWORK_CODES.has(code) && cur instanceof Error) return cur.message.includes(code) ? cur.message : `${code}: ${cur.message}`
  }
  const code = networkCode(e)
  return code === 'timeout' ? 'timed out' : code
}

/** Whether trying the same request again may succeed. */
export function isTransient(e: unknown): boolean {
  const code = statusCode(e)
  if (code !== undefined) return code === 429 || (code >= 500 && code !== 501)
  return networkCode(e) !== undefined
}

/** The server's Retry-After, in milliseconds, when it sent one (seconds form). */
export function retryAfterMs(e: unknown): number | undefined {
  const headers = (e as { headers?: Record<string, string> } | undefined)?.headers
  const value = headers?.['retry-after'] ?? headers?.['Retry-After']
  const seconds = value === undefined ? NaN : Number(value)
  return Number.isFinite(seconds) && seconds >= 0 ? Math.min(seconds, 60) * 1000 : undefined
}

/**
 * Runs `attempt` until it succeeds, fails for good, or the budget is spent. `attempt` gets the
 * number of earlier failed attempts. `answeredSince(t)` tells whether the API server answered any
 * request since t, the first failure: if it did, the request that gave up is the problem (a log stream cut again and
 * again), not the cluster, and it fails with RetriesExhausted rather than ClusterUnreachable.
 * Once `signal` (the run's cancellation) is aborted, no retry is slept for: RunCancelled.
 */
export async function withRetry<T>(
  what: string,
  attempt: (retries: number) => Promise<T>,
  policy: RetryPolicy = DEFAULT_RETRY,
  answeredSince: (since: number) => boolean = () => false,
  signal?: AbortSignal
): Promise<T> {
  const started = Date.now()
  let failingSince: number | undefined
  for (let retries = 0; ; retries++) {
    try {
      return await attempt(retries)
    } catch (e) {
      if (!isTransient(e)) throw e
      // From the first failure: answers to requests sent before it say nothing about the outage.
      failingSince ??= Date.now()
      const spent = Date.now() - started
      const backoff = Math.random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retries)
      const delay = retryAfterMs(e) ?? backoff
      if (spent + delay > policy.budgetMs) {
        const why = statusCode(e) === undefined ? (networkMessage(e) ?? apiErrorMessage(e)) : `${statusCode(e)} ${apiErrorMessage(e)}`
        const failing = `${what} kept failing for ${Math.round(spent / 1000)}s over ${retries + 1} attempt(s)`
        // No `cause`: the message already holds the last failure, and error printers would repeat it.
        if (answeredSince(failingSince)) throw new RetriesExhausted(`${failing}, while the API server answered other requests (last: ${why})`)
        throw new ClusterUnreachable(`cluster unreachable: ${failing} (last: ${why})`)
      }
      await sleep(delay, signal)
    }
  }
}
