// While a run waits on Jobs, one of them may turn out never to start (its pod unschedulable, its
// image not pulled, its init container failing): the Job watch does not show pod states, so the
// pods of the Jobs waited on are listed every few seconds, one list per namespace, and a Job that
// is stuck by then ends its wait with its verdict.
import type { CoreV1Event, V1Pod } from '@kubernetes/client-node'
import { realClock, type Clock } from '../kube/clock.ts'
import type { JobsClient } from '../kube/client.ts'
import type { JobRecord } from '../kube/job-record.ts'
import { ClusterUnreachable } from '../kube/retry.ts'
import { withEvents } from '../observe/job-events.ts'
import { podsOfJobs } from '../observe/observe.ts'
import { stuckReadingEvents } from '../observe/stuck-events.ts'

/** How often the pods of the Jobs waited on are listed. */
export const START_POLL_MS = 5000

interface Polled {
  /** The Job's last state from the watch (undefined: gone). */
  current: () => JobRecord | undefined
  resolve: (job: JobRecord) => void
}

export class StartPoller {
  private readonly polled = new Map<string, Polled>()
  /** Set while a poll is scheduled or running. */
  private scheduled = false
  /** Aborted on stop(): the sleep until the next poll is cut short. */
  private readonly stopping = new AbortController()
  private stopped = false
  private readonly client: JobsClient
  private readonly stuckAfterSeconds: number
  private readonly intervalMs: number
  private readonly clock: Clock
  /** Gets each poll's pods of each Job polled (live.ts follows their logs). */
  private readonly onPods: (uid: string, pods: V1Pod[]) => void
  /** The Warning Events of a stuck Job and its pods (live.ts reads them), for why it never started. */
  private readonly eventsOf: (namespace: string, jobUid: string, pods: V1Pod[]) => Promise<CoreV1Event[]>

  constructor(
    client: JobsClient,
    stuckAfterSeconds: number,
    intervalMs = START_POLL_MS,
    clock: Clock = realClock,
    onPods: (uid: string, pods: V1Pod[]) => void = () => {},
    eventsOf: (namespace: string, jobUid: string, pods: V1Pod[]) => Promise<CoreV1Event[]> = async () => []
  ) {
    this.client = client
    this.onPods = onPods
    this.eventsOf = eventsOf
    this.stuckAfterSeconds = stuckAfterSeconds
    this.intervalMs = intervalMs
    this.clock = clock
  }

  /**
   * What `wait` gives, or, as soon as the Job's pods show it stuck, its current state with
   * `neverStarted` set (then jobStatus says `stuck`), whichever comes first.
   */
  async waitOrStuck(uid: string, current: () => JobRecord | undefined, wait: Promise<JobRecord | undefined>): Promise<JobRecord | undefined> {
    const stuck = new Promise<JobRecord>((resolve) => this.polled.set(uid, { current, resolve }))
    this.schedule()
    try {
      return await Promise.race([wait, stuck])
    } finally {
      this.polled.delete(uid)
    }
  }

  stop(): void {
    this.stopped = true
    this.stopping.abort()
  }

  private schedule(): void {
    if (this.scheduled || this.stopped) return
    this.scheduled = true
    this.clock.sleep(this.intervalMs, this.stopping.signal).then(
      () => this.poll(),
      () => undefined // stopped
    )
  }

  private async poll(): Promise<void> {
    const jobs = [...this.polled].flatMap(([uid, p]) => {
      const job = p.current()
      return job ? [{ uid, job, p }] : []
    })
    try {
      if (jobs.length > 0) {
        const pods = await podsOfJobs(
          this.client,
          jobs.map((j) => j.job)
        )
        const now = new Date(this.clock.now())
        for (const { uid, job, p } of jobs) {
          this.onPods(uid, pods.get(uid) ?? [])
          const why = await stuckReadingEvents(this.client, job, pods.get(uid) ?? [], now, this.stuckAfterSeconds)
          // The Events say what the pods cannot: the registry's answer to the pull, the volume that does not mount.
          if (why) p.resolve({ ...job, neverStarted: withEvents(why, await this.eventsOf(job.metadata?.namespace ?? '', uid, pods.get(uid) ?? [])) })
        }
      }
    } catch (e) {
      // A poll that fails is tried again at the next interval; the wait itself reports a cluster
      // that went away (its watch fails too), so this one does not, and stops.
      if (e instanceof ClusterUnreachable) this.stopped = true
    } finally {
      this.scheduled = false
      if (this.polled.size > 0) this.schedule()
    }
  }
}
