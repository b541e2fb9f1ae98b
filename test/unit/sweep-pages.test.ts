// The sweep planned page by page (sweepPlanner): the same decisions as the whole list planned at
// once, while a kept Job holds only what the report needs; with keep-last, groups that span pages.
import { toJobRecord, type JobRecord } from '../../src/kube/job-record.ts'
import type { Observed } from '../../src/observe/observed.ts'
import type { Plan } from '../../src/plan/plan.ts'
import { planSweep, sweepPlanner } from '../../src/plan/retention.ts'
import { parseSettings, type Settings } from '../../src/settings/settings.ts'
import { NOW, newJob, type JobShape } from './jobs.ts'

const settings = (inputs: Record<string, string> = {}): Settings =>
  parseSettings((name) => ({ selector: '!x', namespace: 'prod', phase: 'sweep', ...inputs })[name] ?? '', {})

// Expired (ttl 1h, finished 2h ago), not expired, running, and three revisions of one group.
const shapes: JobShape[] = [
  { name: 'expired', finishedAgo: 7200, labels: { app: 'a', tier: 'x' } },
  { name: 'fresh', finishedAgo: 60, labels: { app: 'a' } },
  { name: 'running', status: 'running' },
  { name: 'migrate-1', finishedAgo: 9000, age: 9100, release: 'app' },
  { name: 'migrate-2', finishedAgo: 8000, age: 8100, release: 'app' },
  { name: 'migrate-3', finishedAgo: 7500, age: 7600, release: 'app' }
]
const records = (): JobRecord[] => shapes.map((s) => toJobRecord(newJob(s)))

/** Plans `jobs` in pages of `size` through sweepPlanner. */
function inPages(jobs: JobRecord[], size: number, s: Settings): Plan {
  const planner = sweepPlanner({ namespace: '', jobs: [] }, s, NOW)
  for (let i = 0; i < jobs.length; i += size) planner.add(jobs.slice(i, i + size))
  return planner.plan({ namespace: 'prod' })
}

const decisions = (plan: Plan): string[] => plan.jobs.map((p) => `${p.name}: ${p.action} — ${p.reason}`)

test.each([[{}], [{ 'keep-last': '2' }]])('in pages of 1, 2 or 4, a sweep decides as the whole list does (%j)', (inputs) => {
  const s = settings(inputs)
  const whole = planSweep({ namespace: 'prod', jobs: records() } as Observed, s, NOW)
  expect(decisions(whole).some((d) => d.startsWith('expired: delete'))).toBe(true)
  for (const size of [1, 2, 4]) expect(decisions(inPages(records(), size, s))).toEqual(decisions(whole))
})

test('keep-last across pages: the two newest revisions are kept even when each arrives on a page of its own', () => {
  const plan = inPages(records(), 1, settings({ 'keep-last': '2' }))
  const action = (name: string): string | undefined => plan.jobs.find((p) => p.name === name)?.action
  expect([action('migrate-1'), action('migrate-2'), action('migrate-3')]).toEqual(['delete', 'keep', 'keep'])
})

test('a kept Job holds only its name, namespace, uid and resourceVersion; a Job to delete keeps its whole record', () => {
  const plan = inPages(records(), 2, settings())
  const kept = plan.jobs.find((p) => p.name === 'fresh')
  const deleted = plan.jobs.find((p) => p.name === 'expired')
  expect(kept?.action).toBe('keep')
  expect(kept?.job).toEqual({ metadata: { name: 'fresh', namespace: 'prod', uid: 'uid-fresh', resourceVersion: undefined } })
  expect(deleted?.action).toBe('delete')
  expect(deleted?.job.metadata?.labels).toEqual({ app: 'a', tier: 'x' })
  expect(deleted?.job.status?.conditions?.[0]?.type).toBe('Complete')
})
