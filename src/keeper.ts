// `job-sweeper keeper`: archives the logs of every Job of its scope as soon as it finishes, and
// holds each with a finalizer until then, so that nothing that deletes a Job takes its logs first.
// Written as Kubernetes' controllers are: one informer per namespace (list, then watch) feeding a
// bounded work queue keyed by the Job, decisions as pure functions of the Job and a time
// (plan/keeper.ts), the actions in execute/keep.ts, /healthz, /readyz and Prometheus /metrics, and a
// clean stop on SIGTERM. A Job that could not be archived is tried again with backoff, until the
// hold's deadline after its deletion: then it is let go with a Warning Event.
import { createServer, type Server } from 'node:http'
import type { V1Pod } from '@kubernetes/client-node'
import type { AddressInfo } from 'node:net'
import { controllerUid, KubeJobsClient } from './kube/client.ts'
import type { JobsClient } from './kube/jobs-client.ts'
import { apiErrorMessage } from './kube/errors.ts'
import { JobInformer } from './kube/informer.ts'
import type { JobRecord } from './kube/job-record.ts'
import { loadKubeConfig } from './kube/kubeconfig.ts'
import { ALL_NAMESPACES, KEEPER_LEASE, KEEPER_SCOPE_ANNOTATION, RENEW_DEADLINE_MS, runIdentity, takeLeases } from './kube/lease.ts'
import { DEFAULT_RETRY, RunCancelled } from './kube/retry.ts'
import { archiveJob, giveUp, saveSoFar, setHold, ttlWords, type KeepOutcome } from './execute/keep.ts'
import { followInto, stopPods } from './execute/follow.ts'
import { followKey, stoppingPlan, type StoppingPlan } from './plan/stopping.ts'
import { gapLabel, podEnded } from './plan/archive-state.ts'
import { holdEndsAt, isArchived, isHeld, keeperStep } from './plan/keeper.ts'
import { finishedAt, isFinished } from './plan/predicates.ts'
import { failureReason, KeeperMetrics } from './report/keeper-metrics.ts'
import type { KeeperSettings } from './settings/keeper.ts'
import { logsWhere } from './settings/logs-dir.ts'
import { matchesSelector } from './settings/selector.ts'
import { openLogSink } from './store/open.ts'
import { writeText, type LogSink } from './store/sink.ts'
import { jobKey, saveEndedRun, unionByFile, type SavedLogFile } from './execute/logs.ts'
import { endedRuns, READ_LAG_MS, readRunVerdict, runKey, type EndedRun } from './plan/restarts.ts'
import PQueue from 'p-queue'

export interface KeeperOptions {
  /** One line of what it did (a Job held, archived, let go), for the pod's log. */
  log: (line: string) => void
  /** Aborted on SIGTERM or SIGINT: the keeper takes no new work, gives what is in progress --shutdown-grace to finish, releases its Lease and stops. */
  signal: AbortSignal
  /** Each credential a request carries, to mask it. */
  mask: (secret: string) => void
  /** Called once /healthz, /readyz and /metrics are served, with the address. */
  serving?: (address: string) => void
  /** For the unit tier: the client and the store to use instead of those the settings name (the client's requests end with `signal`). */
  connect?: (signal: AbortSignal) => { client: KeeperClient; sink: LogSink }
}

/** The client the keeper works through: the narrow JobsClient, and closed at the stop. */
export type KeeperClient = JobsClient & { close(): Promise<void> }

/** A Job the keeper knows of: where it is, and the state of its work. */
interface Entry {
  namespace: string
  name: string
  /** Queued or being worked on; `again`: it changed while being worked on. */
  queued: boolean
  again: boolean
  /** The last archive's failures (for the give-up's Event). */
  failures: string[]
  /** The next retry's delay (doubles, from RETRY_MIN_MS to RETRY_MAX_MS). */
  retryMs: number
  /** This keeper's last attempt at archiving it (attempts/ records each). */
  attempt?: number
  /** An archive was tried (whether its attempt could be recorded or not): past the hold's deadline, it may give up. */
  tried?: boolean
  /** What was saved before its end (pods being deleted, pods that ended before it, runs of containers restarting in place), for its archive; and for which of its pod counts. */
  earlier: { files: SavedLogFile[]; ended: Set<string>; neverRan: string[]; runs: Set<string> }
  /** Runs read as they ended, not yet confirmed to be the run meant (plan/restarts.ts readRunVerdict), by runKey. */
  pendingRuns: Map<string, { run: EndedRun; file: SavedLogFile; readAt: number }>
  /** Runs whose read may have been of another run: not counted as saved (its archive says run-gone unless saved otherwise). */
  doubtedRuns: Set<string>
  savedFor?: string
  /** The follows of its containers in progress (followKey): settled once the container ended; `end` ends one early, keeping what came. */
  follows: Map<string, { done: Promise<void>; end: AbortController; ending?: boolean }>
  /** Its pods are being stopped, and the log said so. */
  stoppingSaid?: boolean
  timer?: NodeJS.Timeout
  /** When it was last added to the work queue (the queue's wait histogram). */
  addedAt?: number
}

const RETRY_MIN_MS = 2_000
const RETRY_MAX_MS = 60_000
const GAUGE_EVERY_MS = 5_000
const STORE_PROBE_EVERY_MS = 10_000
/** Follows of pods being stopped open at once, all Jobs together: each holds one log stream up to its pod's grace period. */
const MAX_FOLLOWS = 64
/** A follow ends this long after its pod's grace period, keeping what came (a lost node never ends it). */
const FOLLOW_MARGIN_MS = 30_000
/** A follow whose pod is gone (or ended) and whose stream is still open ends this long after, keeping what came. */
const FOLLOW_GONE_MS = 5_000
/**
 * How often the pods of held, running Jobs whose containers restart in place (restartPolicy
 * OnFailure, native sidecars) are listed, one list per namespace, to save each run as it ended:
 * the kubelet keeps a container's previous run only until the next one ends.
 */
const RESTARTS_LOOK_MS = 5_000

/**
 * What the keeper writes at its start to learn that the store takes its writes (the policy allows a
 * PUT and nothing else: no read, no listing). Top-level, with a dot no namespace's name can have, so
 * it is no Job's; the same key each start, overwritten.
 */
export const STORE_PROBE_KEY = 'job-sweeper-keeper.probe'

/** Whether `promise` settled within `ms` (it goes on either way). */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)))
  return Promise.race([promise.then(() => true), late]).finally(() => clearTimeout(timer))
}

const jobName = (job: JobRecord): string => `${job.metadata?.namespace}/${job.metadata?.name}`

/** Runs the keeper until `options.signal` is aborted (0) or a watch cannot go on (1). */
export async function runKeeper(settings: KeeperSettings, options: KeeperOptions): Promise<number> {
  const { log, signal } = options
  // Aborted when the Lease is lost: the requests in flight and their retries end at once, so that
  // the keeper stops (and its pod restarts it) before its Lease can expire and another lead.
  const leaseLost = new AbortController()
  const connected = options.connect?.(leaseLost.signal)
  const client: KeeperClient =
    connected?.client ?? new KubeJobsClient(loadKubeConfig(settings.kubeconfig, settings.context, options.mask), { signal: leaseLost.signal })
  const sink = connected?.sink ?? (await openLogSink(settings.logsTarget))
  const where = logsWhere(settings.logsTarget)
  // This process, as its Lease and each archive's job.json name it.
  const identity = runIdentity(process.env)
  const metrics = new KeeperMetrics()
  const queue = new PQueue({ concurrency: settings.concurrency })
  const entries = new Map<string, Entry>()
  /** The Jobs of the scope as last seen, by uid (for the oldest unarchived one's age). */
  const seen = new Map<string, JobRecord>()
  const keep = { maxBytes: settings.maxLogBytes, lastLines: 0 }
  let fatal: Error | undefined
  let stopping = false
  let stop: () => void = () => undefined
  const stopped = new Promise<void>((resolve) => (stop = resolve))

  // One watch per namespace, or one of every namespace ('').
  const informers = (settings.allNamespaces ? [''] : settings.namespaces).map((ns) => new JobInformer(client, ns, '', DEFAULT_RETRY))
  const scopeWords = settings.allNamespaces ? 'all namespaces' : settings.namespaces.join(', ')
  const inScope = (job: JobRecord): boolean => matchesSelector(settings.selector, job.metadata?.labels) || isHeld(job)

  /** The Job's entry, made on first sight. */
  const entryOf = (job: JobRecord): Entry => {
    const uid = job.metadata?.uid ?? ''
    let entry = entries.get(uid)
    if (!entry) {
      entry = {
        namespace: job.metadata?.namespace ?? '',
        name: job.metadata?.name ?? '',
        queued: false,
        again: false,
        failures: [],
        retryMs: RETRY_MIN_MS,
        earlier: { files: [], ended: new Set(), neverRan: [], runs: new Set() },
        pendingRuns: new Map(),
        doubtedRuns: new Set(),
        follows: new Map()
      }
      entries.set(uid, entry)
    }
    return entry
  }

  const enqueue = (job: JobRecord): void => {
    const uid = job.metadata?.uid ?? ''
    const entry = entryOf(job)
    if (entry.queued) {
      entry.again = true
      return
    }
    clearTimeout(entry.timer)
    entry.queued = true
    entry.addedAt = performance.now()
    metrics.workqueue.adds.inc()
    void queue.add(() => work(uid, entry))
  }

  /** Tries again after the entry's backoff, but not past the hold's end (then it gives up). */
  const retryLater = (uid: string, entry: Entry, job: JobRecord): void => {
    // Stopping: no timer to keep the process alive; the next leader picks it up.
    if (stopping) return
    metrics.workqueue.retries.inc()
    const ends = holdEndsAt(job, settings.holdDeadlineSeconds)
    const delay = Math.min(entry.retryMs, ends === undefined ? Infinity : Math.max(0, ends - Date.now()))
    entry.retryMs = Math.min(entry.retryMs * 2, RETRY_MAX_MS)
    entry.timer = setTimeout(() => {
      const current = seen.get(uid)
      if (current && !stopping) enqueue(current)
    }, delay)
  }

  // Follows run beside the work queue (a Job whose pods are stopping does not hold a worker for
  // their grace period), at most MAX_FOLLOWS at once; ended at the keeper's stop.
  const followsStop = new AbortController()
  let followsOpen = 0
  const startFollows = (uid: string, entry: Entry, job: JobRecord, plan: StoppingPlan): void => {
    const subject = { namespace: entry.namespace, name: entry.name, uid }
    for (const f of plan.follow) {
      if (followsOpen >= MAX_FOLLOWS || stopping) return // the next look at the Job starts it
      followsOpen++
      const container = {
        namespace: entry.namespace,
        podKey: `${jobKey(subject)}/${f.pod}`,
        pod: f.pod,
        container: f.container,
        deadlineMs: f.graceSeconds * 1000 + FOLLOW_MARGIN_MS
      }
      let failed = false
      const end = new AbortController()
      const followed = followInto(client, sink, keep, container, followsStop.signal, end.signal)
        .then((result) => {
          if ('file' in result) {
            entry.earlier.files = unionByFile([result.file], entry.earlier.files)
            log(`followed ${jobName(job)}'s ${followKey(f)} to its end: ${result.file.bytes} bytes`)
            return
          }
          failed = true
          metrics.failures.inc({ reason: failureReason(result.failure) })
          log(`${jobName(job)}: ${result.failure}; trying again`)
        })
        .catch((e: unknown) => {
          failed = true
          log(`${jobName(job)}: cannot follow ${followKey(f)}, trying again: ${apiErrorMessage(e)}`)
        })
        .finally(() => {
          followsOpen--
          entry.follows.delete(followKey(f))
          const current = seen.get(uid)
          if (!current || stopping) return
          // Its container ended: the Job is looked at again (archived once every pod ended). A follow
          // that failed (a refused write) is tried again after a backoff: followed again while the
          // container runs, read once it ended.
          if (!failed) return enqueue(current)
          entry.savedFor = undefined
          retryLater(uid, entry, current)
        })
      entry.follows.set(followKey(f), { done: followed, end })
    }
  }

  /**
   * A follow whose pod is no longer listed, or ended, has nothing more to come: on a kubelet its
   * stream closed as the container ended. One still open (a lost node; kwok) ends FOLLOW_GONE_MS
   * later, keeping what came, `unfinished`.
   */
  const endFollowsOfGonePods = (entry: Entry, pods: V1Pod[]): void => {
    const running = new Set(pods.filter((p) => !podEnded(p)).map((p) => p.metadata?.name ?? ''))
    for (const [key, f] of entry.follows) {
      if (running.has(key.split('/')[0]) || f.ending) continue
      f.ending = true
      setTimeout(() => f.end.abort(), FOLLOW_GONE_MS).unref()
    }
  }

  async function work(uid: string, entry: Entry): Promise<void> {
    entry.again = false
    const started = performance.now()
    metrics.workqueue.queueSeconds.observe((started - (entry.addedAt ?? started)) / 1000)
    let job: JobRecord | undefined
    try {
      // The informer's copy: every write carries its resourceVersion, and a conflict reads the Job again.
      job = seen.get(uid)
      if (job === undefined) return
      // After a write, the Job as it left it, unless the informer has brought a change since.
      const read = job.metadata?.resourceVersion
      const remember = (outcome: KeepOutcome): void => {
        if (outcome.job && seen.get(uid)?.metadata?.resourceVersion === read) seen.set(uid, outcome.job)
      }
      const step = keeperStep(job, new Date(), settings.holdDeadlineSeconds, entry.tried)
      switch (step.action) {
        case 'hold': {
          const outcome = await setHold(client, job, true)
          remember(outcome)
          if (outcome.changed) {
            metrics.held.inc()
            log(`held ${jobName(job)}: ${step.reason}`)
          }
          break
        }
        case 'save': {
          // Once for each change of its pods' counts: the informer tells of every other change too.
          const counts = `${job.status?.terminating ?? 0}/${job.status?.failed ?? 0}/${job.status?.succeeded ?? 0}/${job.status?.active ?? 0}`
          if (entry.savedFor === counts) break
          const saved = await saveSoFar(client, sink, job, keep, entry.earlier.ended, entry.earlier.runs)
          // Its pods being deleted are followed to their end, not read half way.
          startFollows(uid, entry, job, stoppingPlan(saved.pods, false, new Set(entry.follows.keys())))
          endFollowsOfGonePods(entry, saved.pods)
          const { earlier } = entry
          earlier.files = unionByFile(saved.files, earlier.files)
          for (const n of saved.neverRan) if (!earlier.neverRan.includes(n)) earlier.neverRan.push(n)
          const bytes = saved.files.reduce((sum, f) => sum + f.bytes, 0)
          if (saved.failures.length === 0) {
            // Done for these counts only once all was saved: a refused write (a 503) is tried again while the pods terminate.
            entry.savedFor = counts
            for (const pod of saved.ended) earlier.ended.add(pod)
            log(`saved what ${jobName(job)}'s pods wrote so far (${step.reason}): ${bytes} bytes`)
            break
          }
          for (const line of saved.failures) metrics.failures.inc({ reason: failureReason(line) })
          log(
            `saved what ${jobName(job)}'s pods wrote so far (${step.reason}): ${bytes} bytes; not saved, trying again: ${saved.failures.slice(0, 2).join('; ')}`
          )
          retryLater(uid, entry, job)
          break
        }
        case 'archive': {
          // Deleted while it ran: its pods are stopped and followed to their end, then it is archived whole.
          const ends = holdEndsAt(job, settings.holdDeadlineSeconds)
          if (!isFinished(job) && ends !== undefined && Date.now() < ends) {
            const pods = await client.listPodsOfJob(entry.namespace, uid, job.metadata?.resourceVersion)
            const plan = stoppingPlan(pods, true, new Set(entry.follows.keys()))
            endFollowsOfGonePods(entry, pods)
            startFollows(uid, entry, job, plan)
            const stopped = await stopPods(client, entry.namespace, plan.stop)
            if (!plan.settled) {
              if (!entry.stoppingSaid)
                log(
                  `stopping ${jobName(job)}'s pods (its deletion was asked while they ran${stopped.length > 0 ? `; deleted ${stopped.join(', ')}` : ''}): following their logs to their end, then archiving it`
                )
              entry.stoppingSaid = true
              retryLater(uid, entry, job)
              break
            }
          }
          // What is being followed is part of the archive: it waits for those follows to end, and
          // for the runs read as they ended to be confirmed (or doubted).
          await Promise.allSettled([...entry.follows.values()].map((f) => f.done))
          await restartsLooked
          await settleBeforeArchive(uid, entry)
          entry.tried = true
          const outcome = await archiveJob(client, sink, job, keep, () => new Date(), { keeper: identity, previousAttempt: entry.attempt }, entry.earlier)
          entry.attempt = outcome.attempt ?? entry.attempt
          remember(outcome)
          if (outcome.done) {
            metrics.archived.inc()
            metrics.bytes.inc(outcome.bytes ?? 0)
            const finished = finishedAt(job)
            if (finished) metrics.finishToArchive.observe(Math.max(0, (Date.now() - finished.getTime()) / 1000))
            entry.failures = []
            entry.retryMs = RETRY_MIN_MS
            const gaps = outcome.gaps ?? []
            for (const reason of new Set(gaps.map((g) => g.reason))) metrics.incomplete.inc({ reason: gapLabel(reason) })
            const state =
              gaps.length === 0
                ? 'complete'
                : `incomplete: ${gaps
                    .slice(0, 2)
                    .map((g) => `${g.reason}: ${g.what}`)
                    .join('; ')}`
            log(`archived ${jobName(job)} (${step.reason}): ${outcome.bytes ?? 0} bytes of logs to ${where}, ${state}${ttlWords(outcome)}`)
          } else {
            entry.failures = outcome.failures ?? []
            for (const line of entry.failures) metrics.failures.inc({ reason: failureReason(line) })
            log(`not archived ${jobName(job)}, trying again: ${entry.failures.slice(0, 2).join('; ')}`)
            retryLater(uid, entry, job)
          }
          break
        }
        case 'release': {
          const outcome = await setHold(client, job, false)
          remember(outcome)
          log(`released ${jobName(job)}: ${step.reason}${ttlWords(outcome)}`)
          break
        }
        case 'give-up': {
          const outcome = await giveUp(client, job, step, where, entry.failures)
          metrics.gaveUp.inc()
          log(`released ${jobName(job)} unarchived: ${step.reason}${ttlWords(outcome)}`)
          break
        }
        case 'none':
          break
      }
    } catch (e) {
      metrics.failures.inc({ reason: 'api' })
      log(`could not act on ${entry.namespace}/${entry.name}, trying again: ${apiErrorMessage(e)}`)
      if (job) retryLater(uid, entry, job)
    } finally {
      metrics.workqueue.workSeconds.observe((performance.now() - started) / 1000)
      entry.queued = false
      const current = seen.get(uid)
      if (entry.again && current && !stopping) enqueue(current)
      else if (!current) entries.delete(uid)
    }
  }

  /** Settles the entry's pending run reads against `pods` (listed READ_LAG_MS or more after each read). */
  const settleRuns = (job: string, entry: Entry, pods: V1Pod[], all = false): void => {
    for (const [key, pending] of entry.pendingRuns) {
      if (!all && Date.now() - pending.readAt < READ_LAG_MS) continue
      entry.pendingRuns.delete(key)
      const { run, file } = pending
      const words = `${job}'s ${run.pod}/${run.container} run ${run.id.slice(0, 12)}`
      if (readRunVerdict(run, pods) === 'confirmed') {
        entry.earlier.runs.add(key)
        entry.earlier.files = unionByFile([file], entry.earlier.files)
        log(`saved ${words} as it ended (its container restarts in place): ${file.bytes} bytes`)
      } else {
        entry.doubtedRuns.add(key)
        log(`${words}: another run ended while it was read (or its pod is gone), so what was read may be that one; not counted as saved`)
      }
    }
  }

  /** Before its archive: the entry's pending run reads settled, on its pods as they are now (none listed: each is doubted). */
  const settleBeforeArchive = async (uid: string, entry: Entry): Promise<void> => {
    if (entry.pendingRuns.size === 0) return
    const wait = Math.max(0, ...[...entry.pendingRuns.values()].map((p) => p.readAt + READ_LAG_MS - Date.now()))
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    settleRuns(`${entry.namespace}/${entry.name}`, entry, await client.listPodsOfJob(entry.namespace, uid), true)
  }

  /**
   * One look at the pods of the held, running Jobs whose containers restart in place (one list per
   * namespace): each run that ended and is not saved is read as the container's previous run, and
   * the pods listed again READ_LAG_MS later confirm it was that run (plan/restarts.ts).
   */
  const lookAtRestarts = async (): Promise<void> => {
    const byNamespace = new Map<string, string[]>()
    for (const [uid, job] of seen)
      if (job.restartsInPlace && isHeld(job) && !isFinished(job) && !isArchived(job)) {
        const ns = job.metadata?.namespace ?? ''
        byNamespace.set(ns, [...(byNamespace.get(ns) ?? []), uid])
      }
    for (const [namespace, uids] of byNamespace) {
      if (stopping) return
      const read: string[] = []
      try {
        const pods = await client.listPodsOfJobs(namespace, uids)
        for (const uid of uids) {
          const job = seen.get(uid)
          if (!job) continue
          const entry = entryOf(job)
          const own = pods.filter((p) => controllerUid(p) === uid)
          settleRuns(jobName(job), entry, own)
          const known = new Set([...entry.earlier.runs, ...entry.pendingRuns.keys(), ...entry.doubtedRuns])
          for (const run of endedRuns(own, known)) {
            const result = await saveEndedRun(client, sink, keep, { namespace, name: entry.name, uid }, run)
            if ('file' in result) {
              entry.pendingRuns.set(runKey(run), { run, file: result.file, readAt: Date.now() })
              read.push(uid)
            } else if ('failure' in result) {
              metrics.failures.inc({ reason: failureReason(result.failure) })
              log(`${jobName(job)}: ${result.failure}; trying again`)
            }
          }
        }
        if (read.length === 0 || stopping) continue
        // Listed again once the kubelet's status of the read's time has reached the API server.
        await new Promise((resolve) => setTimeout(resolve, READ_LAG_MS))
        const again = await client.listPodsOfJobs(namespace, [...new Set(read)])
        for (const uid of new Set(read)) {
          const entry = entries.get(uid)
          if (entry)
            settleRuns(
              `${namespace}/${entry.name}`,
              entry,
              again.filter((p) => controllerUid(p) === uid)
            )
        }
      } catch (e) {
        metrics.failures.inc({ reason: 'api' })
        log(`could not look at the restarted containers in ${namespace}, trying again: ${apiErrorMessage(e)}`)
      }
    }
  }
  let restartsLooked: Promise<void> = Promise.resolve()
  let restartsTimer: NodeJS.Timeout | undefined
  const lookEvery = (): void => {
    restartsTimer = setTimeout(() => {
      restartsLooked = lookAtRestarts().finally(() => {
        if (!stopping) lookEvery()
      })
    }, RESTARTS_LOOK_MS)
  }

  let counted = 0
  const refreshGauges = (): void => {
    metrics.apiRequests.inc(client.requests - counted)
    counted = client.requests
    metrics.queueDepth.set(queue.size + queue.pending)
    metrics.workqueue.depth.set(queue.size)
    const now = Date.now()
    let oldest = 0
    for (const job of seen.values()) {
      const at = isFinished(job) && !isArchived(job) ? finishedAt(job)?.getTime() : undefined
      if (at !== undefined) oldest = Math.max(oldest, (now - at) / 1000)
    }
    metrics.oldestUnarchived.set(oldest)
  }
  // The store as its first write found it: /readyz says not ready while it refuses (a wrong bucket,
  // keys, or policy) or does not answer, and the probe is tried again until it is taken.
  const unanswered = 'the probe write at start not answered yet'
  let storeProblem: string | undefined = unanswered
  let probeTimer: NodeJS.Timeout | undefined
  const probeStore = async (): Promise<void> => {
    const text = `${JSON.stringify({ keeper: identity, at: new Date().toISOString() })}\n`
    try {
      await writeText(sink, STORE_PROBE_KEY, text, 'application/json')
      if (storeProblem !== undefined && storeProblem !== unanswered) log(`keeper: logs-dir ${where} takes writes now`)
      storeProblem = undefined
    } catch (e) {
      const message = `cannot be written: ${(e as Error).message}`
      if (storeProblem !== message)
        log(`keeper: not ready: logs-dir ${where} ${message} (${STORE_PROBE_KEY}); trying again every ${STORE_PROBE_EVERY_MS / 1000}s`)
      storeProblem = message
      if (!stopping) probeTimer = setTimeout(() => void probeStore(), STORE_PROBE_EVERY_MS)
    }
  }
  const readiness = (): { ready: boolean; words: string } => {
    if (storeProblem !== undefined) return { ready: false, words: `logs-dir ${where}: ${storeProblem}` }
    if (!leading) return { ready: true, words: 'ok: standby' }
    return informers.every((i) => i.synced) ? { ready: true, words: 'ok: leader' } : { ready: false, words: 'leader, informers not synced' }
  }
  let leading = false
  let server: Server
  try {
    server = await serve(settings, metrics, refreshGauges, readiness)
  } catch (e) {
    // An address in use: the keeper exits (its pod restarts) rather than run unseen, never taking its Lease.
    await sink.close()
    await client.close()
    throw new Error(`cannot serve /healthz, /readyz and /metrics on --listen ${settings.listen.host}:${settings.listen.port}: ${(e as Error).message}`, {
      cause: e
    })
  }
  const gauges = setInterval(refreshGauges, GAUGE_EVERY_MS)
  const address = server.address() as AddressInfo
  options.serving?.(`${address.address}:${address.port}`)
  log(
    `keeper: Jobs matching ${settings.selector} in ${scopeWords}; logs to ${where}; hold-deadline ${settings.holdDeadlineSeconds}s; /healthz /readyz /metrics on ${address.address}:${address.port}`
  )
  signal.addEventListener('abort', () => stop(), { once: true })
  if (signal.aborted) stop()
  const probed = probeStore()

  // One leader at a time: the Lease job-sweeper-keeper in the keeper's own namespace, not in one it
  // keeps (a namespace's deletion deletes its Leases: the leader would lose its Lease and stop
  // while holding the Jobs there).
  const leaseNamespace = settings.leaseNamespace ?? client.defaultNamespace
  const leases = await Promise.race([
    takeLeases([leaseNamespace], {
      client,
      name: KEEPER_LEASE,
      holder: identity,
      scope: `keeper of Jobs matching ${settings.selector}`,
      // What it keeps, for post: it holds the Jobs it gives TTLs only while a keeper takes them.
      annotations: {
        [KEEPER_SCOPE_ANNOTATION.namespaces]: settings.allNamespaces ? ALL_NAMESPACES : settings.namespaces.join(','),
        [KEEPER_SCOPE_ANNOTATION.selector]: settings.selector
      },
      waitSeconds: Number.POSITIVE_INFINITY,
      // A leader that cannot renew stops before its Lease expires: the process exits 1, its pod restarts.
      renewDeadlineMs: RENEW_DEADLINE_MS,
      info: (line) => (line.includes('still waiting') ? undefined : log(`keeper: standby, ${line}`)),
      signal,
      onLost: (warning) => {
        fatal ??= new Error(warning)
        leaseLost.abort(new RunCancelled(`the keeper stopped leading: ${warning}`))
        stop()
      }
    }).catch((e: unknown) => {
      if (!signal.aborted) fatal ??= e instanceof Error ? e : new Error(String(e))
      stop()
      return undefined
    }),
    stopped.then(() => undefined)
  ])
  for (const warning of leases?.warnings ?? []) log(`keeper: ${warning}`)
  if (leases) {
    leading = true
    metrics.leader.set(1)
    log('keeper: leading')
    lookEvery()
  }

  for (const informer of leases ? informers : []) {
    informer.observeAll({
      change: (type, job) => {
        const uid = job.metadata?.uid ?? ''
        if (type === 'DELETED' || !inScope(job)) {
          seen.delete(uid)
          clearTimeout(entries.get(uid)?.timer)
          if (!entries.get(uid)?.queued) entries.delete(uid)
          return
        }
        seen.set(uid, job)
        if (keeperStep(job, new Date(), settings.holdDeadlineSeconds, entries.get(uid)?.tried).action !== 'none') enqueue(job)
      },
      failed: (e) => {
        fatal ??= e
        stop()
      }
    })
  }

  await stopped
  // No new work: the informers stop, what waits in the queue or for a retry is left to the next
  // leader; what is in progress has --shutdown-grace to finish, within the pod's grace period (the
  // launcher's own bound is this plus KEEPER_STOP_MARGIN_SECONDS, cli/keeper.ts).
  stopping = true
  followsStop.abort()
  clearInterval(gauges)
  clearTimeout(probeTimer)
  clearTimeout(restartsTimer)
  for (const informer of informers) informer.stop()
  for (const entry of entries.values()) clearTimeout(entry.timer)
  queue.clear()
  const inProgress = queue.pending
  if (inProgress > 0) {
    log(`keeper: stopping: ${inProgress} Job(s) being worked on, waiting up to --shutdown-grace ${settings.shutdownGraceSeconds}s`)
    if (!(await settlesWithin(queue.onIdle(), settings.shutdownGraceSeconds * 1000)))
      log(`keeper: stopping: ${queue.pending} Job(s) still being worked on after --shutdown-grace ${settings.shutdownGraceSeconds}s, left to the next leader`)
  }
  await settlesWithin(probed, 1_000)
  await settlesWithin(restartsLooked, 1_000)
  await leases?.release()
  metrics.leader.set(0)
  // What is still in progress ends with its requests.
  leaseLost.abort(new RunCancelled('the keeper stopped'))
  await closeAll(server, sink, client)
  if (fatal) {
    log(`keeper: stopped: ${fatal.message}`)
    return 1
  }
  log('keeper: stopped')
  return 0
}

/** /healthz (the process answers), /readyz (the store took the probe, and a standby or the leader once every namespace's first list is in), /metrics. */
function serve(settings: KeeperSettings, metrics: KeeperMetrics, refresh: () => void, ready: () => { ready: boolean; words: string }): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0]
    if (path === '/healthz') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n')
    if (path === '/readyz') {
      const state = ready()
      return void res.writeHead(state.ready ? 200 : 503, { 'content-type': 'text/plain' }).end(`${state.words}\n`)
    }
    if (path === '/metrics') {
      refresh()
      metrics.registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
        (e: unknown) => res.writeHead(500).end(String(e))
      )
      return
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: /healthz, /readyz, /metrics\n')
  })
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(settings.listen.port, settings.listen.host, () => resolve(server))
  })
}

async function closeAll(server: Server, sink: LogSink, client: KeeperClient): Promise<void> {
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  await sink.close()
  await client.close()
}
