// Pre's preflight gate, pure: what pre does with the preflight's verdicts. An object the upgrade
// cannot write that neither pre nor a chosen remedy clears fails pre before its first delete
// (`preflight: fail`) or is a warning (`warn`); recreate-statefulsets clears a StatefulSet's
// immutable change only, and runs only when nothing else fails.
import { gateDecision } from '../../src/preflight/gate.ts'
import type { PreflightResult } from '../../src/preflight/report.ts'
import { clearableByPre, withRemedies, type ObjectVerdict, type Verdict } from '../../src/preflight/verdict.ts'

const object = (apiVersion: string, kind: string, name: string, verdict: Verdict): ObjectVerdict => ({
  apiVersion,
  kind,
  namespace: 'shop',
  name,
  write: 'apply',
  verdict,
  clearedByPre: clearableByPre(apiVersion, kind, verdict)
})
const result = (verdicts: ObjectVerdict[], recreate = false): PreflightResult => ({
  namespace: 'shop',
  mode: { write: 'apply', why: 'test' },
  verdicts: withRemedies(verdicts, recreate),
  blocked: [],
  hooks: [],
  warnings: ['preflight could not read the release record of app in shop (403)']
})

const job = object('batch/v1', 'Job', 'migrate', { kind: 'immutable', fields: ['spec.template: changed'], message: '' })
const service = object('v1', 'Service', 'web', { kind: 'immutable', fields: ['spec.type: ClusterIP → NodePort'], message: '' })
const db = object('apps/v1', 'StatefulSet', 'db', {
  kind: 'immutable',
  fields: ['spec.volumeClaimTemplates[data].spec.resources.requests.storage: 1Gi → 2Gi'],
  message: ''
})
const conflicted = object('apps/v1', 'StatefulSet', 'cache', { kind: 'conflict', fields: ['.spec.replicas'], managers: ['kubectl-scale'] })

test('an immutable Service: fail stops pre with an error naming the object, its field and the input', () => {
  const d = gateDecision(result([job, service]), 'fail')
  expect(d.errors).toEqual([
    'preflight: helm upgrade would fail on 1 object(s) (2 object(s) checked, 0 unchanged), so pre deleted nothing (preflight: fail)\nService shop/web: immutable: spec.type: ClusterIP → NodePort'
  ])
  expect(d.section).toMatchObject({
    failed: true,
    rows: [
      { mark: 'fails', object: 'Service shop/web' },
      { mark: 'cleared by pre', object: 'Job shop/migrate' }
    ]
  })
  // The check's warnings stay warnings beside the error.
  expect(d.warnings).toEqual(['preflight could not read the release record of app in shop (403)'])
})

test('the same with warn: no error, a warning first that names it, and pre goes on', () => {
  const d = gateDecision(result([job, service]), 'warn')
  expect(d.errors).toEqual([])
  expect(d.warnings[0]).toMatch(
    /^preflight: helm upgrade would fail on 1 object\(s\) .*; pre goes on \(preflight: warn\)\nService shop\/web: immutable: spec\.type/
  )
})

test('only Jobs pre clears: no error, no warning of the gate (positive control of the two above)', () => {
  const d = gateDecision(result([job]), 'fail')
  expect([d.errors, d.section.failed, d.recreate]).toEqual([[], false, []])
})

test('an immutable StatefulSet fails pre without recreate-statefulsets, and is chosen for it with', () => {
  expect(gateDecision(result([job, db]), 'fail').errors[0]).toContain('StatefulSet shop/db: immutable: spec.volumeClaimTemplates[data]')
  const d = gateDecision(result([job, db], true), 'fail')
  expect(d.errors).toEqual([])
  expect(d.recreate.map((v) => v.name)).toEqual(['db'])
  expect(d.section.headline).toBe('helm upgrade would apply once pre has cleared 1 Job(s) and recreated 1 StatefulSet(s) (2 object(s) checked, 0 unchanged)')
  expect(d.section.rows.find((r) => r.object === 'StatefulSet shop/db')?.reason).toContain(
    'pre deletes this StatefulSet with propagationPolicy Orphan (recreate-statefulsets), so its pods and PVCs stay'
  )
})

test('recreate-statefulsets clears an immutable change only: a StatefulSet in conflict still fails', () => {
  const d = gateDecision(result([db, conflicted], true), 'fail')
  expect(d.errors[0]).toContain('StatefulSet shop/cache: conflict')
  expect(d.errors[0]).not.toContain('shop/db')
  expect(d.recreate).toEqual([])
})

test('recreate-statefulsets leaves a selector change failing: the new StatefulSet would not adopt the pods', () => {
  const selector = object('apps/v1', 'StatefulSet', 'db', {
    kind: 'immutable',
    fields: ['spec.volumeClaimTemplates[data].spec.resources.requests.storage: 1Gi → 2Gi', 'spec.selector.matchLabels.tier: added (front)'],
    message: ''
  })
  const unnamed = object('apps/v1', 'StatefulSet', 'cache', { kind: 'immutable', fields: [], message: 'field is immutable' })
  const d = gateDecision(result([selector, unnamed], true), 'fail')
  expect(d.errors[0]).toContain('StatefulSet shop/db: immutable')
  expect(d.errors[0]).toContain('StatefulSet shop/cache: immutable')
  const policy = object('apps/v1', 'StatefulSet', 'db', { kind: 'immutable', fields: ['spec.podManagementPolicy: OrderedReady → Parallel'], message: '' })
  expect(gateDecision(result([policy], true), 'fail').recreate).toHaveLength(1)
})

test('with warn and another failing object, the StatefulSet is not recreated, and the summary says why', () => {
  const d = gateDecision(result([db, service], true), 'warn')
  expect(d.recreate).toEqual([])
  expect(d.section.remedies).toEqual(['recreate-statefulsets: StatefulSet shop/db is not deleted, since the upgrade would fail on other objects'])
})

test("objects not checked: warnings and rows without the API server's message (it may quote a webhook's address)", () => {
  const rbac = object('v1', 'ConfigMap', 'config', {
    kind: 'not-checked',
    why: 'our credentials may not: configmaps "config" is forbidden: User "system:serviceaccount:shop:deployer" cannot get resource "configmaps" in API group "" in the namespace "shop"'
  })
  const webhook = object('batch/v1', 'Job', 'migrate', {
    kind: 'not-checked',
    why: 'admission webhook w.example could not be called (500): failed calling webhook "w.example": Post "https://10.0.0.9:443/validate": connection refused'
  })
  const r = result([rbac, webhook])
  r.warnings = [
    `preflight could not check ConfigMap shop/config: ${rbac.verdict.kind === 'not-checked' ? rbac.verdict.why : ''}`,
    "preflight could not read the release record of app in shop (403); the objects' field managers decide how Helm writes them"
  ]
  const d = gateDecision(r, 'fail')
  expect(d.errors).toEqual([])
  expect(d.warnings).toEqual([
    "preflight could not read the release record of app in shop (403); the objects' field managers decide how Helm writes them",
    'preflight could not check ConfigMap shop/config: our credentials may not get configmaps',
    'preflight could not check Job shop/migrate: admission webhook w.example could not be called (500)'
  ])
  expect(d.section.rows.map((row) => row.reason)).toEqual([
    'not checked: our credentials may not get configmaps',
    'not checked: admission webhook w.example could not be called (500)'
  ])
})

test('many failing objects: the error names ten and counts the rest', () => {
  const many = Array.from({ length: 13 }, (_, i) => object('v1', 'Service', `web-${i}`, { kind: 'immutable', fields: ['spec.type'], message: '' }))
  const lines = gateDecision(result(many), 'fail').errors[0].split('\n')
  expect(lines).toHaveLength(12)
  expect(lines[11]).toBe('… and 3 more (the job summary and job-sweeper-preflight.json list them)')
})

test('a release Helm refuses (a pending operation): pre deletes nothing, not even the Job it would clear, and the error names the release', () => {
  const blocked = {
    ...result([job]),
    release: 'app',
    blocked: ['another operation (install/upgrade/rollback) is in progress: revision 3 of app is pending-upgrade']
  }
  const d = gateDecision(blocked, 'fail')
  expect(d.errors).toEqual([
    expect.stringMatching(/so pre deleted nothing \(preflight: fail\)\nrelease app: another operation \(install\/upgrade\/rollback\) is in progress/)
  ])
  expect(d.section).toMatchObject({
    failed: true,
    rows: [
      { mark: 'fails', object: 'release app' },
      { mark: 'cleared by pre', object: 'Job shop/migrate' }
    ]
  })
})
