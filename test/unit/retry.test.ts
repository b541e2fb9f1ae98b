// What the retry policy takes for transient, and how it gives up: no cluster needed.
import { ApiException } from '@kubernetes/client-node'
import { apiErrorMessage, statusCode } from '../../src/kube/errors.ts'
import { ClusterUnreachable, isTransient, RetriesExhausted, sleep, withRetry } from '../../src/kube/retry.ts'

const api = (code: number): ApiException<string> => new ApiException(code, 'x', JSON.stringify({ message: `HTTP ${code}` }), {})
const network = (code: string): Error => Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error(`read ${code}`), { code }) })

test.each([
  ['429', true, api(429)],
  ['500', true, api(500)],
  ['503', true, api(503)],
  ['501 Not Implemented', false, api(501)],
  ['400', false, api(400)],
  ['403', false, api(403)],
  ['404', false, api(404)],
  ['409', false, api(409)],
  ['422', false, api(422)],
  ['a watch answered 403', false, Object.assign(new Error('Forbidden'), { statusCode: 403 })],
  ['a watch answered 503', true, Object.assign(new Error('Service Unavailable'), { statusCode: 503 })],
  ['connection reset', true, network('ECONNRESET')],
  ['connection refused', true, network('ECONNREFUSED')],
  [
    'the request deadline (a DOMException TimeoutError, code 23)',
    true,
    AbortSignal.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')).reason
  ],
  ['a plain error', false, new Error('bug')]
])('%s: transient %s', (_, transient, error) => {
  expect(isTransient(error)).toBe(transient)
})

test('a DOMException’s legacy numeric code is not an HTTP status', () => {
  expect(statusCode(new DOMException('x', 'TimeoutError'))).toBeUndefined()
  expect(statusCode(api(404))).toBe(404)
})

const fast = { budgetMs: 300, baseDelayMs: 1, maxDelayMs: 5 }

test('withRetry retries what is transient and returns the first success', async () => {
  const errors = [api(503), network('ECONNRESET'), AbortSignal.abort(new DOMException('t', 'TimeoutError')).reason]
  let calls = 0
  await expect(
    withRetry(
      'read',
      async () => {
        if (calls < errors.length) throw errors[calls++]
        return 'ok'
      },
      fast
    )
  ).resolves.toBe('ok')
  expect(calls).toBe(3)
})

test('withRetry gives up at once on a final answer', async () => {
  let calls = 0
  await expect(
    withRetry(
      'delete',
      async () => {
        calls++
        throw api(422)
      },
      fast
    )
  ).rejects.toMatchObject({ code: 422 })
  expect(calls).toBe(1)
})

test('withRetry says "cluster unreachable" once the budget is spent', async () => {
  const started = Date.now()
  const e = await withRetry(
    'list Jobs in a',
    async () => {
      throw network('ECONNREFUSED')
    },
    fast
  ).catch((x: unknown) => x)
  expect(e).toBeInstanceOf(ClusterUnreachable)
  expect((e as Error).message).toMatch(/^cluster unreachable: list Jobs in a kept failing for \ds over \d+ attempt\(s\) \(last: read ECONNREFUSED\)$/)
  expect(Date.now() - started).toBeLessThan(5000)
})

test('withRetry blames the request, not the cluster, when the API server answered others since its first failure', async () => {
  const firstFailures: number[] = []
  const e = await withRetry(
    'read the log of a/p/main',
    async () => {
      throw network('UND_ERR_SOCKET')
    },
    fast,
    (since) => {
      firstFailures.push(since)
      return true
    }
  ).catch((x: unknown) => x)
  expect(e).toBeInstanceOf(RetriesExhausted)
  expect((e as Error).message).toMatch(
    /^read the log of a\/p\/main kept failing for \ds over \d+ attempt\(s\), while the API server answered other requests \(last: /
  )
  expect(firstFailures).toHaveLength(1)
})

test('an API error reads as its Status message', () => {
  expect(apiErrorMessage(api(404))).toBe('HTTP 404')
})

test('a background sleep (a Lease renewal, a progress line) does not keep the process alive; an ordinary one does', async () => {
  const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length
  const before = timers()
  const stop = new AbortController()
  const background = sleep(60_000, stop.signal, true).catch(() => undefined)
  expect(timers()).toBe(before)
  const ordinary = sleep(60_000, stop.signal).catch(() => undefined) // positive control
  expect(timers()).toBe(before + 1)
  stop.abort()
  await Promise.all([background, ordinary])
})
