// Live, while Jobs run: the logs of each waited Job's containers are followed and printed into the
// run's log as they are written, every line prefixed job/pod/container (GitHub's log groups cannot
// interleave) and made inert (text/workflow-commands.ts: no line can start a workflow command), at
// most max-log-bytes per Job, masked like the tails; and when a waited Job fails, why, in words.
// The saved log files stay the record: no wait, delete or TTL patch awaits a follow, one that fails
// is a warning, and stop() (the run's end, or its cancellation) ends every follow at once.
import { StringDecoder } from 'node:string_decoder'
import type { CoreV1Event, V1Pod } from '@kubernetes/client-node'
import type { Clock } from '../kube/clock.ts'
import type { JobsClient } from '../kube/client.ts'
import { apiErrorMessage, statusCode } from '../kube/errors.ts'
import type { JobRecord } from '../kube/job-record.ts'
import { explainingUids } from '../observe/job-events.ts'
import { failureReason } from '../observe/job-failure.ts'
import type { PlannedJob } from '../plan/plan.ts'
import { redact } from '../text/secrets.ts'
import { inert } from '../text/workflow-commands.ts'

/** Jobs followed at most: the log stays readable, and the API server keeps a connection per container followed. */
export const MAX_FOLLOWED_JOBS = 20
/** How long the run's end waits for the last failure reasons to be read (one pod list each). */
const EXPLAIN_WAIT_MS = 5000

/** What the live output needs from the run. */
export interface LiveOptions {
  /** Follow the waited Jobs' logs (stream-logs); failure reasons are given either way. */
  stream: boolean
  /** Most bytes printed per Job (max-log-bytes). */
  limitBytes: number
  /** Replace the run's secrets with *** (mask-log-tails). */
  mask: boolean
  info: (message: string) => void
  /** Problems that do not fail the step. */
  warnings: string[]
  clock: Clock
  /** The run's cancellation: every follow ends at once. */
  signal?: AbortSignal
}

/** One Job whose logs are followed. */
interface Followed {
  namespace: string
  /** namespace/name, the first part of each line's prefix. */
  key: string
  bytes: number
  cut: boolean
  warned: boolean
  /** pod/container of each follow started. */
  started: Set<string>
  /** Ends this Job's follows (its cap was reached, or the run ends). */
  follows: AbortController
}

/** A container that has run (or runs): its log can be followed. */
const started = (s: { state?: { running?: unknown; terminated?: unknown } }): boolean => s.state?.running !== undefined || s.state?.terminated !== undefined

export class LiveLogs {
  private readonly jobs = new Map<string, Followed>()
  private readonly explaining = new Set<Promise<void>>()
  private stopped = false
  /** Waited Jobs beyond MAX_FOLLOWED_JOBS: not followed, said once. */
  private notFollowed = 0
  /** The credentials may not list Events (403): reasons come without them, said once, not asked again. */
  private eventsRefused = false
  private readonly client: JobsClient
  private readonly options: LiveOptions

  constructor(client: JobsClient, options: LiveOptions) {
    this.client = client
    this.options = options
    options.signal?.addEventListener('abort', () => void this.stop(), { once: true })
  }

  /** Follows the logs of the Job's containers once its pods show them started (see pods()). */
  follow(p: PlannedJob): void {
    if (!this.options.stream || this.stopped || this.jobs.has(p.uid)) return
    if (this.jobs.size >= MAX_FOLLOWED_JOBS) {
      if (this.notFollowed++ === 0)
        this.options.info(`live logs: the first ${MAX_FOLLOWED_JOBS} Jobs waited on are followed, no more (their saved logs are not affected)`)
      return
    }
    this.jobs.set(p.uid, {
      namespace: p.namespace,
      key: `${p.namespace}/${p.name}`,
      bytes: 0,
      cut: false,
      warned: false,
      started: new Set(),
      follows: new AbortController()
    })
  }

  /** The Job's pods as last listed: a follow starts for each container that runs or ran and has none yet. */
  pods(uid: string, pods: V1Pod[]): void {
    const f = this.jobs.get(uid)
    if (!f || f.cut || this.stopped) return
    for (const pod of pods) {
      const name = pod.metadata?.name ?? ''
      for (const s of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]) {
        const where = `${name}/${s.name}`
        if (!started(s) || f.started.has(where)) continue
        f.started.add(where)
        void this.read(f, name, s.name)
      }
    }
  }

  /** Prints why the Job failed (its conditions, its pods read once more, their Events), without holding anything up. */
  explain(p: PlannedJob, job: JobRecord): void {
    const work = this.client
      .listPodsOfJob(p.namespace, p.uid)
      .catch(() => [] as V1Pod[])
      .then(async (pods) => {
        const why = failureReason(job, pods, await this.eventsOf(p.namespace, p.uid, pods))
        if (why && !this.options.signal?.aborted) this.options.info(`Job ${p.namespace}/${p.name} failed: ${inert(this.masked(why))}`)
      })
    this.explaining.add(work)
    void work.finally(() => this.explaining.delete(work))
  }

  /**
   * The Warning Events of the Job and its newest pods, for its reason in words; none when they
   * cannot be read. Credentials that may not list Events (a Role without it) are no error: the
   * reason is given without them, and the log says so once.
   */
  async eventsOf(namespace: string, jobUid: string, pods: V1Pod[]): Promise<CoreV1Event[]> {
    if (this.eventsRefused) return []
    const lists = await Promise.all(
      explainingUids(jobUid, pods).map((uid) =>
        this.client.listWarningEvents(namespace, uid).catch((e: unknown) => {
          if (statusCode(e) === 403 && !this.eventsRefused) {
            this.eventsRefused = true
            this.options.info(`failure reasons come without Events: ${inert(this.masked(apiErrorMessage(e)))} (allow list on events to have them)`)
          }
          return [] as CoreV1Event[]
        })
      )
    )
    return lists.flat()
  }

  /** Ends every follow at once; the failure reasons being read get a few seconds (none once cancelled). */
  async stop(): Promise<void> {
    this.stopped = true
    for (const f of this.jobs.values()) f.follows.abort()
    if (this.explaining.size === 0 || this.options.signal?.aborted) return
    const timer = new AbortController()
    await Promise.race([Promise.allSettled(this.explaining), this.options.clock.sleep(EXPLAIN_WAIT_MS, timer.signal).catch(() => undefined)])
    timer.abort()
  }

  private masked(text: string): string {
    return this.options.mask ? redact(text) : text
  }

  private async read(f: Followed, pod: string, container: string): Promise<void> {
    const prefix = `${f.key}/${pod}/${container}`
    try {
      const body = await this.client.followLog(f.namespace, pod, container, this.options.limitBytes, f.follows.signal)
      // The answer may come after stop(): it is not read.
      if (f.follows.signal.aborted) {
        body.destroy()
        return
      }
      const decoder = new StringDecoder('utf8')
      let partial = ''
      for await (const chunk of body) {
        const lines = (partial + decoder.write(chunk as Buffer)).split('\n')
        partial = lines.pop() ?? ''
        for (const line of lines) this.print(f, prefix, line)
        if (f.cut) return
      }
      partial += decoder.end()
      if (partial !== '') this.print(f, prefix, partial)
    } catch (e) {
      if (f.follows.signal.aborted || this.stopped) return
      // Once per Job: a cluster in trouble is not a warning per container.
      if (f.warned) return
      f.warned = true
      this.options.warnings.push(`live log of ${prefix} stopped: ${this.masked(apiErrorMessage(e))} (the saved logs are not affected)`)
    }
  }

  private print(f: Followed, prefix: string, line: string): void {
    if (f.cut) return
    const bytes = Buffer.byteLength(line) + 1
    if (f.bytes + bytes > this.options.limitBytes) {
      f.cut = true
      f.follows.abort()
      this.options.info(`${f.key}: live log cut at ${this.options.limitBytes} bytes (max-log-bytes); no more of this Job's log is printed`)
      return
    }
    f.bytes += bytes
    this.options.info(`${prefix} | ${inert(this.masked(line.replace(/\r$/, '')))}`)
  }
}
