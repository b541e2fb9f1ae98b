// A Secret's verdict names the keys that change and never a value, in any encoding, in any string
// of it (paths, fields, messages): what the step log, the job summary, --json and the report file
// serialize. A ConfigMap's change still shows before → after.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { KubeObject } from '../../src/kube/manifest-client.ts'
import { classifyAccepted, classifyRefusal } from '../../src/preflight/classify.ts'
import { reasonOf, type Verdict } from '../../src/preflight/verdict.ts'

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64')

/** Values no output may carry: distinctive, so that a piece of one is found too. */
const OLD = 'Zq7!vX-old-password'
const NEW = 'Wm3#kP-new-password'
const TOKEN = 'Tn8$rQ-api-token'
const GONE = 'Yb2%hL-dropped-key'
const CERT = '-----BEGIN CERTIFICATE-----\nMIIBkTCB+wIJAKHHIG11kO3wMA0GCSqGSIb3DQEBCwUA\n-----END CERTIFICATE-----\n'

/**
 * Every string of the verdict's JSON and of its reason, each checked for the value as is, in
 * base64, in base64 of base64, and the first 8 characters of each (what a cut `show()` keeps).
 */
function leaked(verdict: Verdict, ...values: string[]): string[] {
  const texts: string[] = [reasonOf(verdict)]
  JSON.stringify(verdict, (_, v: unknown) => {
    if (typeof v === 'string') texts.push(v)
    return v
  })
  const forms = values.flatMap((v) => [v, b64(v), b64(b64(v))]).flatMap((f) => [f, f.slice(0, 8)])
  return texts.filter((t) => forms.some((f) => t.includes(f)))
}

const secret = (fields: Partial<KubeObject>, annotations?: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'creds', namespace: 'shop', ...(annotations ? { annotations } : {}) },
  type: 'Opaque',
  ...fields
})

const status = (code: number, message: string, causes?: { reason: string; message: string; field: string }[]): { status: number; body: string } => ({
  status: code,
  body: JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    message,
    code,
    ...(causes ? { details: { name: 'creds', kind: 'secrets', causes } } : {})
  })
})

/** What the API server answers a write that changes an immutable Secret's data (ValidateSecretUpdate), captured from Kubernetes 1.37. */
const immutableData = ((): { status: number; body: string } => {
  const body = readFileSync(join(import.meta.dirname, 'fixtures', 'preflight', 'secret-immutable.json'), 'utf8')
  return { status: 422, body }
})()

test('an accepted write that changes, adds and removes keys of data: each key named, no value', () => {
  const live = secret({ data: { password: b64(OLD), old: b64(GONE), 'tls.crt': b64(CERT) } })
  // The API server writes stringData into data: the answer holds data alone.
  const answer = secret({ data: { password: b64(NEW), token: b64(TOKEN), 'tls.crt': b64(`${CERT}\n`) } })
  const v = classifyAccepted(live, answer)
  expect(v).toEqual({ kind: 'changes', paths: ['data.old: removed', 'data.password: changed', 'data[tls.crt]: changed', 'data.token: added'] })
  expect(leaked(v, OLD, NEW, TOKEN, GONE, CERT)).toEqual([])
})

test('a Secret new to data (none before): its keys named as added, not the object shown whole', () => {
  const v = classifyAccepted(secret({}), secret({ data: { token: b64(TOKEN) } }))
  expect(v).toEqual({ kind: 'changes', paths: ['data.token: added'] })
  expect(leaked(v, TOKEN)).toEqual([])
})

test('an immutable Secret whose data (set by data and by stringData) changes: the keys named, no value', () => {
  const live = secret({ immutable: true, data: { password: b64(OLD), user: b64('app-user'), old: b64(GONE), 'api.key': b64(TOKEN) } })
  const rendered = secret({
    immutable: true,
    data: { password: b64(NEW), extra: b64(TOKEN), user: b64('ignored: stringData sets it') },
    stringData: { user: 'other-user', 'api.key': NEW, fresh: OLD }
  })
  // Helm 3's three-way patch removes `old`, which the previous revision set.
  const v = classifyRefusal(immutableData, live, rendered, [{ path: 'data.old', before: b64(GONE) }])
  expect(v).toMatchObject({
    kind: 'immutable',
    fields: [
      'data.extra: added',
      'data.password: changed',
      'stringData[api.key]: changed',
      'stringData.fresh: added',
      'stringData.user: changed',
      'data.old: removed'
    ]
  })
  expect(leaked(v, OLD, NEW, TOKEN, GONE, 'other-user', 'app-user')).toEqual([])
})

test('a refusal whose message quotes a value: redacted wherever it appears, the reason kept', () => {
  const live = secret({ data: { password: b64(OLD) } })
  const rendered = secret({ stringData: { password: NEW } })
  const webhook = status(400, `admission webhook "pw.example.test" denied the request: password "${NEW}" (was ${b64(OLD)}) is too weak`)
  const denied = classifyRefusal(webhook, live, rendered)
  expect(denied).toEqual({ kind: 'denied', by: 'admission webhook pw.example.test', message: 'password "<redacted>" (was <redacted>) is too weak' })
  const invalid = status(422, `Secret "creds" is invalid: data[password]: Invalid value: "${b64(NEW)}": must be shorter`, [
    { reason: 'FieldValueInvalid', message: `Invalid value: "${b64(NEW)}": must be shorter`, field: 'data[password]' }
  ])
  const unavailable = status(503, `the server is unavailable while writing ${NEW}`)
  // A read refused before any write is classified with no live object, as check.ts's look() does.
  for (const v of [denied, classifyRefusal(invalid, live, rendered), classifyRefusal(unavailable, undefined, rendered)]) {
    expect(JSON.stringify(v)).toContain('<redacted>')
    expect(leaked(v, OLD, NEW)).toEqual([])
  }
})

test('kubectl’s last-applied-configuration annotation, which holds every value: its change named, not shown', () => {
  const lastApplied = (pw: string): string => JSON.stringify({ apiVersion: 'v1', data: { a: b64(pw) }, kind: 'Secret', metadata: { name: 'creds' } })
  const live = secret({ data: { a: b64(OLD) } }, { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied(OLD), team: 'payments' })
  const answer = secret({ data: { a: b64(NEW) } }, { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied(NEW), team: 'billing' })
  const v = classifyAccepted(live, answer)
  // Other metadata of a Secret still shows its values.
  expect(v).toEqual({
    kind: 'changes',
    paths: [
      'data.a: changed',
      'metadata.annotations[kubectl.kubernetes.io/last-applied-configuration]: changed',
      'metadata.annotations.team: payments → billing'
    ]
  })
  expect(leaked(v, OLD, NEW)).toEqual([])
  // Added with the first annotations the object has, it is named too.
  const added = classifyAccepted(secret({ data: { a: b64(NEW) } }), answer)
  expect(added).toEqual({
    kind: 'changes',
    paths: ['metadata.annotations[kubectl.kubernetes.io/last-applied-configuration]: added', 'metadata.annotations.team: added (billing)']
  })
  expect(leaked(added, NEW)).toEqual([])
})

test('control: a ConfigMap’s change, and a message quoting its value, still show the value', () => {
  const configMap = (mode: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg' }, data: { mode } })
  expect(classifyAccepted(configMap('fast-mode'), configMap('slow-mode'))).toEqual({ kind: 'changes', paths: ['data.mode: fast-mode → slow-mode'] })
  const immutable = status(422, 'ConfigMap "cfg" is invalid: data: Forbidden: field is immutable when `immutable` is set', [
    { reason: 'FieldValueForbidden', message: 'Forbidden: field is immutable when `immutable` is set', field: 'data' }
  ])
  expect(classifyRefusal(immutable, configMap('fast-mode'), configMap('slow-mode'))).toMatchObject({
    kind: 'immutable',
    fields: ['data.mode: fast-mode → slow-mode']
  })
  const webhook = status(400, 'admission webhook "modes.example.test" denied the request: mode slow-mode is not allowed')
  expect(classifyRefusal(webhook, configMap('fast-mode'), configMap('slow-mode'))).toMatchObject({ message: 'mode slow-mode is not allowed' })
})
