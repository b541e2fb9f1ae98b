// The report file: every Job, written a few hundred at a time, is one valid JSON document.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { JobOutcome } from '../../src/execute/outcome.ts'
import { ALL_NAMESPACES } from '../../src/observe/observed.ts'
import { writeReportFile } from '../../src/report/file.ts'

const outcome = (i: number): JobOutcome => ({
  namespace: 'prod',
  name: `job-${i}`,
  status: 'failed',
  ageSeconds: 5,
  action: 'delete',
  result: 'pruned',
  waited: false,
  reason: `failed "quoted" \n ${i}`,
  logs: i === 700 ? { files: [{ file: 'prod/job-700/p/main.log', bytes: 3, truncated: false }], failures: [] } : undefined
})

test.each([0, 1, 1201])('%i Jobs: every one in order, with its logs, the errors and warnings, mode 0600', async (n) => {
  const dir = mkdtempSync(join(tmpdir(), 'job-sweeper-report-'))
  try {
    const outcomes = Array.from({ length: n }, (_, i) => outcome(i))
    const file = await writeReportFile({ phase: 'sweep', namespace: ALL_NAMESPACES, dryRun: false, outcomes, errors: ['e1'], warnings: ['w1', 'w2'] }, dir)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    const report = JSON.parse(readFileSync(file, 'utf8')) as {
      phase: string
      namespace: string
      dryRun: boolean
      jobs: { name: string; reason: string; logs?: string[] }[]
      errors: string[]
      warnings: string[]
    }
    expect([report.phase, report.namespace, report.dryRun]).toEqual(['sweep', 'all namespaces', false])
    expect(report.jobs.map((j) => j.name)).toEqual(outcomes.map((o) => o.name))
    if (n > 700) expect(report.jobs[700].logs).toEqual(['prod/job-700/p/main.log'])
    if (n > 0) expect(report.jobs[0].reason).toBe('failed "quoted" \n 0')
    expect([report.errors, report.warnings]).toEqual([['e1'], ['w1', 'w2']])
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
