// The preflight's verdict on the whole release: a rendered Job the upgrade cannot write is pre's
// to clear (it does not fail the preflight), any other failing object does; rows list failing
// objects first and count unchanged ones.
import type { PreflightResult } from '../../src/preflight/report.ts'
import { headline, preflightFailed, preflightRows, renderPreflightMarkdown, renderPreflightText } from '../../src/preflight/report.ts'
import { clearableByPre, type ObjectVerdict, type Verdict } from '../../src/preflight/verdict.ts'

const object = (apiVersion: string, kind: string, name: string, verdict: Verdict): ObjectVerdict => ({
  apiVersion,
  kind,
  namespace: 'app',
  name,
  write: 'apply',
  verdict,
  clearedByPre: clearableByPre(apiVersion, kind, verdict)
})
const result = (verdicts: ObjectVerdict[]): PreflightResult => ({
  namespace: 'app',
  mode: { write: 'apply', why: 'test' },
  verdicts,
  blocked: [],
  hooks: [],
  warnings: []
})

const immutableJob = object('batch/v1', 'Job', 'migrate', { kind: 'immutable', fields: ['spec.template: changed'], message: '' })
const unchanged = object('v1', 'ConfigMap', 'config', { kind: 'unchanged' })

test('only a Job the upgrade cannot write: the upgrade applies once pre cleared it, and the row says so', () => {
  const r = result([unchanged, immutableJob])
  expect(preflightFailed(r)).toBe(false)
  expect(headline(r)).toBe('helm upgrade would apply once pre has cleared 1 Job(s) (2 object(s) checked, 1 unchanged)')
  expect(preflightRows(r)).toEqual([
    { mark: 'cleared by pre', object: 'Job app/migrate', reason: 'immutable: spec.template: changed; pre deletes this Job, and the upgrade creates it anew' }
  ])
})

test('a Job denied by a policy is no Job pre clears: the upgrade would fail', () => {
  const denied = object('batch/v1', 'Job', 'migrate', { kind: 'denied', by: 'admission webhook x', message: 'no' })
  expect(denied.clearedByPre).toBe(false)
  expect(preflightFailed(result([denied]))).toBe(true)
})

test('failing objects first, then cleared Jobs, warnings and changes; unchanged only counted', () => {
  const r = result([
    object('apps/v1', 'Deployment', 'web', { kind: 'changes', paths: ['spec.replicas: 1 → 3'] }),
    unchanged,
    object('v1', 'ConfigMap', 'other', { kind: 'not-checked', why: 'our credentials may not' }),
    immutableJob,
    object('apps/v1', 'StatefulSet', 'db', {
      kind: 'immutable',
      fields: ['spec.volumeClaimTemplates[data].spec.resources.requests.storage: 1Gi → 2Gi'],
      message: ''
    })
  ])
  expect(preflightFailed(r)).toBe(true)
  expect(preflightRows(r).map((row) => [row.mark, row.object])).toEqual([
    ['fails', 'StatefulSet app/db'],
    ['cleared by pre', 'Job app/migrate'],
    ['not checked', 'ConfigMap app/other'],
    ['changes', 'Deployment app/web']
  ])
  expect(renderPreflightText(r)).toContain('helm upgrade would fail on 1 object(s) (5 object(s) checked, 1 unchanged)')
  expect(renderPreflightText(r)).not.toContain('ConfigMap app/config')
  // Escaped for Markdown: brackets and pipes from the cluster are text.
  expect(renderPreflightMarkdown(r)).toContain('spec.volumeClaimTemplates&#91;data&#93;.spec.resources.requests.storage: 1Gi → 2Gi')
})

test('a blocked release fails the preflight with a first row naming the release, even with every object unchanged', () => {
  const r = {
    ...result([unchanged]),
    release: 'app',
    blocked: ['another operation (install/upgrade/rollback) is in progress: revision 3 of app is pending-upgrade']
  }
  expect(preflightFailed(r)).toBe(true)
  expect(headline(r)).toMatch(/^helm upgrade would fail before writing any object: Helm refuses the release/)
  expect(preflightRows(r)[0]).toEqual({ mark: 'fails', object: 'release app', reason: r.blocked[0] })
  // The control: the same result without the block applies.
  expect(preflightFailed({ ...r, blocked: [] })).toBe(false)
})

test('the report says what rendered the manifest, and when that cannot be what the upgrade writes', () => {
  expect(renderPreflightText({ ...result([]), renderer: 'helm template' })).toContain('Rendered: helm template: lookup returned nothing')
  expect(renderPreflightMarkdown({ ...result([]), renderer: 'helm upgrade --install --dry-run' })).toContain(
    'Rendered: helm upgrade --install --dry-run: the upgrade&#39;s own rendering'
  )
})
