// The second line of defence: every value a Secret holds, in each form an output may carry it, is
// found and replaced, whatever string of a verdict it is in.
import { REDACTED, redactSecretValues, secretValues } from '../../src/preflight/secret-values.ts'

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64')

test('the values collected: data as base64 and decoded, stringData and its base64, last-applied’s, a removed key’s; none shorter than 4', () => {
  const live = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ data: { pw: b64('applied-once') } }) } },
    data: { pw: b64('live-value'), short: b64('ab') }
  }
  const rendered = { apiVersion: 'v1', kind: 'Secret', stringData: { pw: 'rendered-value' } }
  const removed = [
    { path: 'stringData.gone', before: 'removed-value' },
    { path: 'data', before: { all: b64('whole-map-value') } }
  ]
  const values = secretValues([live, rendered], removed)
  for (const v of ['live-value', 'applied-once', 'rendered-value', 'removed-value', 'whole-map-value'])
    for (const form of [v, b64(v), b64(b64(v))]) expect(values).toContain(form)
  expect(values).not.toContain('ab')
  expect(values.every((v) => v.length >= 4)).toBe(true)
})

test('redaction: every string, nested or in a list; a value inside another is not left half redacted; a quoted multi-line value too', () => {
  const pem = 'line-one-of-key\nline-two-of-key'
  const secrets = secretValues([{ apiVersion: 'v1', kind: 'Secret', stringData: { a: 'abcd', b: 'xxabcdxx', pem } }])
  const verdict = { kind: 'invalid', fields: ['data.a'], message: `"xxabcdxx" and abcd and ${JSON.stringify(pem)} and line-two-of-key` }
  expect(redactSecretValues(verdict, secrets)).toEqual({
    kind: 'invalid',
    fields: ['data.a'],
    message: `"${REDACTED}" and ${REDACTED} and "${REDACTED}" and ${REDACTED}`
  })
  expect(redactSecretValues(verdict, [])).toBe(verdict)
})
