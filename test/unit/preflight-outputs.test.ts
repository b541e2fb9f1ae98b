// phase: preflight sets outputs, as the CLI's --json has wouldApply and the failing objects.
import { preflightOutputs } from '../../src/preflight/action.ts'
import type { PreflightResult } from '../../src/preflight/report.ts'

const result = (over: Partial<PreflightResult>): PreflightResult =>
  ({ namespace: 'shop', release: 'shop', verdicts: [], blocked: [], hooks: [], warnings: [], ...over }) as unknown as PreflightResult

test('an upgrade that would apply: would-apply true, no failing object', () => {
  expect(preflightOutputs(result({}), '/logs/job-sweeper-preflight.json')).toEqual({
    'would-apply': 'true',
    'preflight-headline': 'helm upgrade would apply (0 object(s) checked, 0 unchanged)',
    'preflight-failing': '[]',
    'preflight-failing-count': '0',
    'report-file': '/logs/job-sweeper-preflight.json'
  })
})

test('a release Helm refuses: would-apply false, the release named with why; no report-file when none was written', () => {
  const outputs = preflightOutputs(result({ blocked: ['another operation (upgrade) is in progress'] }), null)
  expect(outputs['would-apply']).toBe('false')
  expect(JSON.parse(outputs['preflight-failing'])).toEqual([{ object: 'release shop', reason: 'another operation (upgrade) is in progress' }])
  expect(outputs['preflight-failing-count']).toBe('1')
  expect(outputs['preflight-headline']).toMatch(/^helm upgrade would fail before writing any object/)
  expect(outputs).not.toHaveProperty('report-file')
})

test('many failing objects: the JSON is cut to what a CI variable holds (64 KiB), the count has them all', () => {
  const blocked = Array.from({ length: 2000 }, (_, i) => `object ${i} refused: ${'x'.repeat(60)}`)
  const outputs = preflightOutputs(result({ blocked }), null)
  expect(outputs['preflight-failing'].length).toBeLessThanOrEqual(64 * 1024)
  expect(JSON.parse(outputs['preflight-failing']).length).toBeLessThan(2000)
  expect(outputs['preflight-failing-count']).toBe('2000')
})
