// npm run bench — job-sweeper beside the baseline a user would pick instead, in one run on the
// local cluster: prune (vs kubectl delete --wait and raw DELETEs), a sweep's plan over many
// namespaces (vs kubectl get -A), and wait latency (vs kubectl wait). Prints ratios, peak RSS and
// API requests per Job. Sizes: BENCH_JOBS (1000 per namespace), BENCH_SWEEP_JOBS (10000) in
// BENCH_SWEEP_NAMESPACES (50), ROUNDS (10); BENCH_ONLY=prune,sweep,wait picks parts.
import { benchCluster } from './finished-jobs.ts'
import { mb, seconds } from './measure.ts'
import { benchPrune } from './prune.ts'
import { benchSweep } from './sweep.ts'
import { benchWaitLatency, median } from './wait-latency.ts'

const n = Number(process.env.BENCH_JOBS ?? 1000)
const sweepJobs = Number(process.env.BENCH_SWEEP_JOBS ?? 10_000)
const sweepNamespaces = Number(process.env.BENCH_SWEEP_NAMESPACES ?? 50)
const rounds = Number(process.env.ROUNDS ?? 10)
const only = new Set((process.env.BENCH_ONLY ?? 'prune,sweep,wait').split(','))
const log = (line: string): void => void process.stderr.write(`[bench] ${line}\n`)
const ratio = (a: number, b: number): string => `${(a / b).toFixed(2)}×`

const { cluster, stop } = await benchCluster(log)
// Each part prints when it is done: a long run shows its first figures early.
const lines = { push: (...text: string[]): void => void process.stdout.write(`${text.join('\n')}\n`) }
lines.push(`job-sweeper benchmark on Kubernetes ${cluster.version} (local control plane, kwok node)`, '')
try {
  if (only.has('prune')) {
    const p = await benchPrune(cluster, n, log)
    const perJob = (requests: number): string => (requests / n).toFixed(2)
    lines.push(
      `prune: ${n} finished Jobs of one release per namespace (set-up of ${3 * n} Jobs: ${seconds(p.setupMs)}), logs off`,
      `  job-sweeper pre               ${seconds(p.sweeper.wallMs).padStart(8)}  peak RSS ${mb(p.sweeper.peakRssMb)}  ${perJob(p.sweeper.requests)} requests/Job`,
      `  kubectl delete jobs -l --wait ${seconds(p.kubectl.wallMs).padStart(8)}  peak RSS ${mb(p.kubectl.peakRssMb)}  ${perJob(p.kubectl.requests)} requests/Job`,
      `  raw DELETEs, ${p.raw.concurrency} at a time     ${seconds(p.raw.wallMs).padStart(8)}                   ${perJob(p.raw.requests)} requests/Job`,
      `  speed-up over kubectl: ${ratio(p.kubectl.wallMs, p.sweeper.wallMs)}; job-sweeper / raw DELETEs: ${ratio(p.sweeper.wallMs, p.raw.wallMs)}`,
      `  ${p.decoys} decoys beside the targets (another release, a hook Job, a running Job): all kept`,
      ''
    )
  }
  if (only.has('sweep')) {
    const s = await benchSweep(cluster, sweepJobs, sweepNamespaces, log)
    lines.push(
      `sweep plan (dry run): ${s.jobs} suspended Jobs in ${s.namespaces} namespaces, --all-namespaces (set-up: ${seconds(s.setupMs)})`,
      `  job-sweeper sweep --json      ${seconds(s.sweeper.wallMs).padStart(8)}  peak RSS ${mb(s.sweeper.peakRssMb)}  output ${(s.sweeper.jsonBytes / 1024).toFixed(0)} KiB`,
      `  job-sweeper sweep (text)      ${seconds(s.text.wallMs).padStart(8)}  peak RSS ${mb(s.text.peakRssMb)}  output ${(Buffer.byteLength(s.text.stdout) / 1024).toFixed(0)} KiB`,
      `  kubectl get jobs -A -o json   ${seconds(s.kubectl.wallMs).padStart(8)}  peak RSS ${mb(s.kubectl.peakRssMb)}  output ${(s.kubectl.jsonBytes / 1024).toFixed(0)} KiB`,
      `  kubectl / job-sweeper: time ${ratio(s.kubectl.wallMs, s.sweeper.wallMs)}, peak RSS ${ratio(s.kubectl.peakRssMb, s.sweeper.peakRssMb)}`,
      ''
    )
  }
  if (only.has('wait')) {
    const w = await benchWaitLatency(cluster, rounds, log)
    const [a, b] = [median(w.sweeper), median(w.kubectl)]
    lines.push(
      `wait latency (release of a held pod → the waiter returns), median of ${rounds} rounds:`,
      `  job-sweeper (shared watch)    ${a.toFixed(0).padStart(5)} ms (max ${Math.max(...w.sweeper).toFixed(0)} ms)`,
      `  kubectl wait                  ${b.toFixed(0).padStart(5)} ms (max ${Math.max(...w.kubectl).toFixed(0)} ms)`,
      `  job-sweeper / kubectl wait: ${ratio(a, b)}`,
      ''
    )
  }
} finally {
  await stop()
}
