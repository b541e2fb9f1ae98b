// npm run bench — job-sweeper beside the baseline a user would pick instead, in one run on the
// local cluster: prune (vs kubectl delete --wait and raw DELETEs), a sweep's plan over many
// namespaces (vs kubectl get -A), wait latency (vs kubectl wait), and preflight of a 300-object
// release (vs kubectl apply --server-side --dry-run=server). Prints ratios, peak RSS and API
// requests per Job (per object for preflight). Sizes: BENCH_JOBS (1000 per namespace), BENCH_SWEEP_SIZES (10000,50000
// Jobs) in BENCH_SWEEP_NAMESPACES (50), kubectl beside the sweep up to BENCH_KUBECTL_UP_TO (50000),
// BENCH_SWEEP_DELETE_JOBS (20000), ROUNDS (10), BENCH_PREFLIGHT_ROUNDS (3); BENCH_ONLY=prune,sweep,sweep-delete,wait,preflight picks
// parts; keeper: the logs (64 KiB each) of BENCH_KEEPER_JOBS (1000) finished Jobs archived at BENCH_KEEPER_CONCURRENCY (4) (vs the minimal
// lossless loop and the no-protection floor, with S3 and API requests per Job counted; raw PUTs; kubectl logs + upload), then as many Jobs let run at once under a running keeper that watches BENCH_KEEPER_WATCH_JOBS (50000) archived
// Jobs besides (finish-to-archived latency, peak RSS); helm-sweep: `helm sweep upgrade` of the demo chart beside plain helm
// upgrade (and kubectl delete job --wait + helm upgrade), median of BENCH_HELM_SWEEP_ROUNDS (5).
import os from 'node:os'
import { benchCluster } from './finished-jobs.ts'
import { mb, seconds } from './measure.ts'
import { benchHelmSweep } from './helm-sweep.ts'
import { benchKeeper, s3Total } from './keeper.ts'
import { benchPreflight } from './preflight.ts'
import { benchPrune } from './prune.ts'
import { benchSweep, type SweepSize } from './sweep.ts'
import { benchSweepDelete } from './sweep-delete.ts'
import { benchWaitLatency, median } from './wait-latency.ts'

const n = Number(process.env.BENCH_JOBS ?? 1000)
const sweepSizes = (process.env.BENCH_SWEEP_SIZES ?? '10000,50000').split(',').map(Number)
const kubectlUpTo = Number(process.env.BENCH_KUBECTL_UP_TO ?? 50_000)
const sweepNamespaces = Number(process.env.BENCH_SWEEP_NAMESPACES ?? 50)
const sweepDeleteJobs = Number(process.env.BENCH_SWEEP_DELETE_JOBS ?? 20_000)
const rounds = Number(process.env.ROUNDS ?? 10)
const preflightRounds = Number(process.env.BENCH_PREFLIGHT_ROUNDS ?? 3)
const keeperJobs = Number(process.env.BENCH_KEEPER_JOBS ?? 1000)
const helmSweepRounds = Number(process.env.BENCH_HELM_SWEEP_ROUNDS ?? 5)
const only = new Set((process.env.BENCH_ONLY ?? 'prune,sweep,sweep-delete,wait,preflight,keeper,helm-sweep').split(','))
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
    const s = await benchSweep(cluster, sweepSizes, sweepNamespaces, kubectlUpTo, log)
    const idle = s.idle.peakRssMb
    const perJob = (m: { wallMs: number; peakRssMb: number }, jobs: number): string =>
      `${((m.wallMs * 1000) / jobs).toFixed(0).padStart(4)} µs/Job  peak RSS ${mb(m.peakRssMb).padStart(7)}  ${(((m.peakRssMb - idle) * 1024 * 1024) / jobs).toFixed(0).padStart(5)} B/Job`
    lines.push(
      `sweep plan (dry run, --all-namespaces): suspended Jobs in ${s.namespaces} namespaces (set-up: ${seconds(s.setupMs)}); B/Job counted above the ${mb(idle)} of a sweep over no Job`
    )
    for (const size of s.sizes) {
      const n = size.jobs
      lines.push(
        `  ${n} Jobs`,
        `    job-sweeper sweep --json    ${seconds(size.sweeper.wallMs).padStart(8)}  ${perJob(size.sweeper, n)}  output ${(size.sweeper.jsonBytes / 1024).toFixed(0)} KiB`,
        `    job-sweeper sweep (text)    ${seconds(size.text.wallMs).padStart(8)}  ${perJob(size.text, n)}  output ${(Buffer.byteLength(size.text.stdout) / 1024).toFixed(0)} KiB`,
        `    raw paged list (limit 500)  ${seconds(size.raw.wallMs).padStart(8)}  ${perJob(size.raw, n)}`,
        size.kubectl
          ? `    kubectl get jobs -A -o json ${seconds(size.kubectl.wallMs).padStart(8)}  ${perJob(size.kubectl, n)}  output ${(size.kubectl.jsonBytes / 1024).toFixed(0)} KiB`
          : `    kubectl get jobs -A -o json (not run above ${kubectlUpTo} Jobs)`,
        `    job-sweeper / raw list: time ${ratio(size.sweeper.wallMs, size.raw.wallMs)}${size.kubectl ? `; kubectl / job-sweeper: time ${ratio(size.kubectl.wallMs, size.sweeper.wallMs)}, peak RSS ${ratio(size.kubectl.peakRssMb, size.sweeper.peakRssMb)}` : ''}`
      )
    }
    const [first, last] = [s.sizes[0], s.sizes[s.sizes.length - 1]]
    if (first !== last) {
      const time = (z: SweepSize): number => z.sweeper.wallMs / z.jobs
      const bytes = (z: SweepSize): number => (z.sweeper.peakRssMb - idle) / z.jobs
      lines.push(`  growth from ${first.jobs} to ${last.jobs} Jobs, per Job: time ${ratio(time(last), time(first))}, bytes ${ratio(bytes(last), bytes(first))}`)
    }
    lines.push('')
  }
  if (only.has('sweep-delete')) {
    const d = await benchSweepDelete(cluster, sweepDeleteJobs, log)
    const n = d.jobs
    lines.push(
      `sweep, deleting: ${n} finished Jobs whose ttl expired, in one namespace (set-up of ${2 * n} Jobs: ${seconds(d.setupMs)}), logs off`,
      `  job-sweeper sweep             ${seconds(d.sweeper.wallMs).padStart(8)}  peak RSS ${mb(d.sweeper.peakRssMb)}  ${(d.sweeper.requests / n).toFixed(2)} requests/Job  ${((d.sweeper.wallMs * 1000) / n).toFixed(0)} µs/Job  output ${(d.sweeper.jsonBytes / 1024).toFixed(0)} KiB`,
      `  raw DELETEs, ${d.raw.concurrency} at a time, ≤ ${d.raw.requestsPerSecond}/s ${seconds(d.raw.wallMs).padStart(6)}                   ${(d.raw.requests / n).toFixed(2)} requests/Job`,
      `  job-sweeper / raw DELETEs: ${ratio(d.sweeper.wallMs, d.raw.wallMs)}`,
      `  ${d.decoys} decoys beside the targets (a running Job, another label, ttl never): all kept`,
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
  if (only.has('keeper')) {
    const k = await benchKeeper(cluster, keeperJobs, log)
    const cpuWords = (cpu: Record<string, number>): string =>
      `${Object.entries(cpu)
        .filter(([, s]) => s >= 0.05)
        .sort(([, a], [, b]) => b - a)
        .map(([name, s]) => `${name} ${s.toFixed(1)} s`)
        .join(', ')} (${Object.values(cpu)
        .reduce((a, b) => a + b, 0)
        .toFixed(1)} s in all)`
    const perJob = (requests: number): string => (requests / k.jobs).toFixed(2)
    // S3 requests a Job, in all and by kind (s3-counter.ts: counted at the S3 server's door).
    const s3Words = (counts: Record<string, number>): string =>
      `${perJob(s3Total(counts))} S3 requests/Job (${Object.entries(counts)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([what, count]) => `${what} ${perJob(count)}`)
        .join(', ')})`
    lines.push(
      `keeper: the logs and job.json of ${k.jobs} finished Jobs archived to the S3 server, ${(k.keeper.bytes / k.jobs).toFixed(0)} bytes of log a Job (set-up: ${seconds(k.setupMs)})`,
      `  job-sweeper keeper                ${seconds(k.keeper.wallMs).padStart(8)}  peak RSS ${mb(k.keeper.peakRssMb)}  ${perJob(k.keeper.requests)} API requests/Job (hold, pods, log, release), ${s3Words(k.keeper.s3)}`,
      `  the minimal lossless loop         ${seconds(k.loop.wallMs).padStart(8)}  ${perJob(k.loop.api)} API requests/Job (hold, pods, log, release), ${s3Words(k.loop.s3)}`,
      `  the no-protection floor           ${seconds(k.floor.wallMs).padStart(8)}  ${perJob(k.floor.api)} API requests/Job (pods, log), ${s3Words(k.floor.s3)}`,
      `  keeper / minimal loop: ${ratio(k.keeper.wallMs, k.loop.wallMs)} (target ≤ 1.20×); S3 requests/Job: keeper ${perJob(s3Total(k.keeper.s3))}, loop ${perJob(s3Total(k.loop.s3))} (target: logs + 1), floor ${perJob(s3Total(k.floor.s3))}; the hold and release: loop / floor ${ratio(k.loop.wallMs, k.floor.wallMs)}`,
      `  raw PUTs of the keeper's objects, ${k.raw.concurrency} at a time ${seconds(k.raw.wallMs).padStart(8)}  ${s3Words(k.raw.s3)}`,
      `  kubectl logs job/… + upload, each ${seconds(k.script.wallMs).padStart(8)}  (timed over ${k.script.jobs} Jobs, scaled to ${k.jobs})`,
      `  keeper / raw PUTs: ${ratio(k.keeper.wallMs, k.raw.wallMs)}; speed-up over the kubectl script: ${ratio(k.script.wallMs, k.keeper.wallMs)}`,
      `  CPU while the keeper caught up (${os.cpus().length} cores, ${seconds(k.keeper.wallMs)}): ${cpuWords(k.keeper.cpu)}`,
      `  CPU while the minimal loop ran (${seconds(k.loop.wallMs)}): ${cpuWords(k.loop.cpu)}`,
      `  CPU while the floor ran (${seconds(k.floor.wallMs)}): ${cpuWords(k.floor.cpu)}`,
      `  CPU while the raw PUTs ran: ${cpuWords(k.raw.cpu)}`,
      `  (every S3 request above went through the counter, a proxy of its own: ${k.counterCpuSeconds.toFixed(1)} s of CPU over the four runs, counted in none)`,
      `keeper keeping up, watching ${k.live.watched} archived Jobs besides (set-up: ${seconds(k.live.backgroundSetupMs)}): ${k.live.jobs} Jobs held while suspended, then let run at once; from a Job's Complete to its logs archived:`,
      `  median ${seconds(k.live.medianMs)}, 99th percentile ${seconds(k.live.p99Ms)}, max ${seconds(k.live.maxMs)}; peak RSS ${mb(k.live.peakRssMb)}`,
      ''
    )
  }
  if (only.has('preflight')) {
    const p = await benchPreflight(cluster, preflightRounds, log)
    const row = (m: { wallMs: number; maxMs: number; peakRssMb: number; requests: number }): string =>
      `${seconds(m.wallMs).padStart(8)} (max ${seconds(m.maxMs)})  peak RSS ${mb(m.peakRssMb).padStart(6)}  ${(m.requests / p.objects).toFixed(2)} requests/object`
    lines.push(
      `preflight: a release of ${p.objects} objects (${p.existing} installed by helm, ${p.changed} of them changed, ${p.objects - p.existing} new; set-up of 2 releases: ${seconds(p.setupMs)}), default concurrency, median of ${p.rounds} rounds`,
      `  job-sweeper preflight, release applied server-side (dry-run apply)       ${row(p.apply)}`,
      `  job-sweeper preflight, release installed client-side (three-way patch)   ${row(p.patch)}`,
      `  kubectl apply --server-side --dry-run=server --field-manager=helm        ${row(p.kubectl)}`,
      `  kubectl / job-sweeper: time ${ratio(p.kubectl.wallMs, p.apply.wallMs)} (server-side), ${ratio(p.kubectl.wallMs, p.patch.wallMs)} (client-side)`,
      ''
    )
  }
  if (only.has('helm-sweep')) {
    const h = await benchHelmSweep(cluster, helmSweepRounds, log)
    const plus = (a: number, b: number): string => `${seconds(a).padStart(7)} (+${seconds(a - b)})`
    lines.push(
      `helm sweep upgrade of the demo chart (test/chart/migrate-demo, Helm ${h.helmVersion}), median of ${h.rounds} rounds:`,
      `  nothing to clear:      helm upgrade                                 ${seconds(h.unchanged.helm).padStart(7)}   helm sweep upgrade ${plus(h.unchanged.sweep, h.unchanged.helm)}`,
      `  a finished migration:  kubectl delete job --wait, then helm upgrade ${seconds(h.changed.kubectlAndHelm).padStart(7)}   helm sweep upgrade ${plus(h.changed.sweep, h.changed.kubectlAndHelm)}`,
      ''
    )
  }
} finally {
  await stop()
}
