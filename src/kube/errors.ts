// client-node's errors: ApiException carries the HTTP code and a body that is a JSON string
// (a Kubernetes Status); network failures are plain errors without a code.

/**
 * The HTTP status of an API error (ApiException's `code`, a watch error's `statusCode`), or
 * undefined for network and other errors. A DOMException's numeric `code` (23 for the TimeoutError
 * of a request's deadline) is no HTTP status: taken for one, a timed-out request would look final
 * and never be retried.
 */
export function statusCode(e: unknown): number | undefined {
  if (e instanceof DOMException) return undefined
  const { code, statusCode } = (e ?? {}) as { code?: unknown; statusCode?: unknown }
  const status = typeof code === 'number' ? code : statusCode
  return typeof status === 'number' && status >= 100 && status <= 599 ? status : undefined
}

/** The Kubernetes Status message of an API error, else the error's own message. */
export function apiErrorMessage(e: unknown): string {
  const body = (e as { body?: unknown } | undefined)?.body
  if (typeof body === 'string') {
    try {
      const status = JSON.parse(body) as { message?: string }
      if (status.message) return status.message
    } catch {
      // not JSON: fall through
    }
  } else if (body && typeof body === 'object' && 'message' in body && typeof body.message === 'string') {
    return body.message
  }
  if (!(e instanceof Error)) return String(e)
  // Network failures (fetch failed) carry the reason, like ECONNREFUSED, in their cause.
  const cause = (e as { cause?: unknown }).cause
  return cause instanceof Error && !e.message.includes(cause.message) ? `${e.message} (${cause.message})` : e.message
}
