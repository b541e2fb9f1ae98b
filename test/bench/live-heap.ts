// The live heap a deleting sweep holds per Job, apart from what V8 has not collected yet: a sweep
// of N expired Jobs planned and executed over the fake client (test/fake/), with full GCs between
// the steps. Run: scripts/node24 --expose-gc test/bench/live-heap.ts [N=20000]
import { executorOf } from '../fake/executor.ts'
import { newJob } from '../unit/jobs.ts'

const n = Number(process.argv[2] ?? 20000)
const gc = (globalThis as { gc?: () => void }).gc
if (!gc) throw new Error('run with --expose-gc')
const heapMb = (): number => {
  gc()
  gc()
  return process.memoryUsage().heapUsed / 1e6
}
const perJob = (mb: number): string => `${((mb * 1000) / n).toFixed(2)} KB/Job`

const jobs = Array.from({ length: n }, (_, i) => newJob({ name: `app-old-${i}`, release: 'app', finishedAgo: 30 * 86400, age: 31 * 86400 }))
const ex = executorOf({ phase: 'sweep', release: 'app', ttl: '0s', 'failure-grace': '0s', 'harvest-logs': 'none' }, jobs)
jobs.length = 0
const start = heapMb()
const held: { plan?: Awaited<ReturnType<typeof ex.plan>> } = { plan: await ex.plan() }
const planned = heapMb()
const result = await ex.execute(held.plan)
// The fake's own records of what it was asked (not the engine's) are dropped before measuring;
// its store lost the N deleted Jobs, so the end is compared with the plan minus what is freed.
ex.client.calls.length = 0
ex.client.events.length = 0
;(ex.client as unknown as { history: unknown[] }).history.length = 0
const lines = ex.log.length
ex.log.length = 0
const ended = heapMb()
delete held.plan
const noPlan = heapMb()
console.log(
  `sweep deleting ${n} Jobs over the fake client: ${result.outcomes.filter((o) => o.result === 'pruned').length} pruned, ${lines} progress lines\n` +
    `  live heap held by the plan: ${perJob(planned - start)}\n` +
    `  still held by the plan at the end, with the outcomes: ${perJob(ended - noPlan)}`
)
