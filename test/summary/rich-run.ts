// A rich pre phase as the executor reports it: a Job waited for and pruned, a failed one pruned
// with its log tail, a hook Job kept. `hostile` adds what a cluster could hand the summary to break
// it: markup in a Job name, in an annotation quoted by a reason, in log lines, and an error.
import type { HarvestedLogs } from '../../src/execute/logs.ts'
import type { JobOutcome, RunResult } from '../../src/execute/outcome.ts'

const ENDED = new Date('2026-06-01T12:00:00Z')
const before = (seconds: number): string => new Date(ENDED.getTime() - seconds * 1000).toISOString()
const IMMUTABLE = 'a Job’s pod template is immutable, so helm upgrade fails while it exists'

function logs(job: string, pod: string, containers: string[], tail?: string[]): HarvestedLogs {
  const files = containers.map((c) => ({ file: `shop/${job}/${pod}/${c}.log`, bytes: 2048, truncated: false }))
  return { files, failures: [], tails: tail && [{ file: files[files.length - 1].file, lines: tail }] }
}

const base = { namespace: 'shop', ageSeconds: 900, action: 'delete' as const, result: 'pruned' as const, waited: false }

/** Hostile strings that must reach the reader as text, each setting window.pwned if it ran. */
export const HOSTILE = {
  name: 'shop-report-<script>window.pwned=1</script>',
  annotation: `<img src=x onerror="window.pwned=2">`,
  logLine: '</pre><script>window.pwned=3</script><pre>',
  error: 'Job shop/shop-cleanup: jobs.batch "shop-cleanup" is forbidden: User "<b onmouseover=window.pwned=4>ci</b>" cannot delete resource "jobs"'
}

export function richRun(hostile = false): RunResult {
  const outcomes: JobOutcome[] = [
    {
      ...base,
      name: 'shop-migrate-41',
      status: 'succeeded',
      waited: true,
      reason: `succeeded; ${IMMUTABLE}`,
      finishedAt: before(75),
      logs: logs('shop-migrate-41', 'shop-migrate-41-x7k2q', ['migrate'])
    },
    {
      ...base,
      name: 'shop-pre-upgrade-hook',
      status: 'succeeded',
      action: 'keep',
      result: 'kept',
      reason: 'hook Job (helm.sh/hook: pre-upgrade): its own hook-delete-policy manages it',
      finishedAt: before(86400 * 2)
    },
    {
      ...base,
      name: 'shop-seed',
      status: 'failed',
      reason: `failed; ${IMMUTABLE}`,
      finishedAt: before(3 * 3600 + 120),
      logs: logs(
        'shop-seed',
        'shop-seed-9bq4z',
        ['wait-for-db', 'seed'],
        [
          'seed: connecting to postgres://shop-db:5432/shop',
          'seed: loading fixtures/products.csv (1,204 rows)',
          'seed: ERROR: duplicate key value violates unique constraint "products_pkey"',
          ...(hostile ? [HOSTILE.logLine, HOSTILE.annotation] : [])
        ]
      )
    }
  ]
  const errors: string[] = []
  if (hostile) {
    outcomes.push(
      { ...base, name: HOSTILE.name, status: 'succeeded', reason: `succeeded; its annotation job-sweeper.io/ttl '${HOSTILE.annotation}' is not a duration` },
      { ...base, name: 'shop-cleanup', status: 'succeeded', result: 'error', reason: `succeeded — failed: ${HOSTILE.error}` }
    )
    errors.push(HOSTILE.error)
  }
  return { phase: 'pre', namespace: 'shop', dryRun: false, outcomes, errors, warnings: [], endedAt: ENDED.toISOString() }
}
