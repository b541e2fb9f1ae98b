// The keeper's Prometheus metrics (prom-client), on /metrics as Kubernetes controllers expose
// theirs, named as Prometheus' conventions say (the unit, then `_total` for a counter): what it
// archived, what failed and why, its queue, whether it leads, how long a Job waits from its finish
// to its archive, and how long the oldest finished Job has waited (the figure to alert on: the
// store is down, or the keeper behind). The process's own metrics keep their standard names
// (`process_cpu_seconds_total`, `nodejs_…`), which dashboards and alerts expect.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'

/** client-go's workqueue buckets (10 µs to 1000 s, ×10), to 1000 s: an archive of large logs takes minutes. */
const WORKQUEUE_BUCKETS = [0.00001, 0.0001, 0.001, 0.01, 0.1, 1, 10, 100, 1000]

export class KeeperMetrics {
  readonly registry = new Registry()
  readonly archived = new Counter({
    name: 'job_sweeper_keeper_jobs_archived_total',
    help: 'Jobs whose logs and job.json were archived',
    registers: [this.registry]
  })
  readonly bytes = new Counter({ name: 'job_sweeper_keeper_archived_log_bytes_total', help: 'Bytes of logs archived', registers: [this.registry] })
  readonly failures = new Counter({
    name: 'job_sweeper_keeper_archive_failures_total',
    help: 'Archives that did not complete, by reason: read (a log the API server did not serve), store (the store refused or did not answer a write), api (a request about the Job or its pods)',
    labelNames: ['reason'],
    registers: [this.registry]
  })
  readonly incomplete = new Counter({
    name: 'job_sweeper_keeper_archives_incomplete_total',
    help: 'Archives completed without every log the Job counts, by reason (one each per archive): pod_gone (a pod gone before its logs were read), run_gone (a container run the node no longer kept), read_failed (a log not read or not stored), cut (a log cut at max-log-bytes)',
    labelNames: ['reason'],
    registers: [this.registry]
  })
  readonly held = new Counter({ name: 'job_sweeper_keeper_holds_total', help: 'Jobs the keeper added its finalizer to', registers: [this.registry] })
  readonly gaveUp = new Counter({
    name: 'job_sweeper_keeper_holds_given_up_total',
    help: 'Jobs released unarchived when hold-deadline passed after their deletion',
    registers: [this.registry]
  })
  readonly apiRequests = new Counter({
    name: 'job_sweeper_keeper_api_requests_total',
    help: 'Requests sent to the API server (each attempt counts)',
    registers: [this.registry]
  })
  readonly queueDepth = new Gauge({
    name: 'job_sweeper_keeper_queue_depth',
    help: 'Jobs waiting in the work queue or being worked on',
    registers: [this.registry]
  })
  readonly oldestUnarchived = new Gauge({
    name: 'job_sweeper_keeper_oldest_unarchived_seconds',
    help: 'Seconds since the oldest finished Job in scope that is not archived yet finished (0: none)',
    registers: [this.registry]
  })

  readonly leader = new Gauge({
    name: 'job_sweeper_keeper_leader',
    help: '1 while this keeper holds its Lease and works, 0 while it stands by',
    registers: [this.registry]
  })
  readonly finishToArchive = new Histogram({
    name: 'job_sweeper_keeper_finish_to_archive_seconds',
    help: 'Seconds from a Job’s finish to its archive’s completion',
    buckets: [1, 2, 5, 10, 30, 60, 120, 300, 900, 3600],
    registers: [this.registry]
  })

  /**
   * The work queue's, as client-go's workqueue names them (`workqueue_depth`, `_adds_total`,
   * `_queue_duration_seconds`, `_work_duration_seconds`, `_retries_total`), under the keeper's prefix.
   */
  readonly workqueue = {
    depth: new Gauge({ name: 'job_sweeper_keeper_workqueue_depth', help: 'Jobs waiting in the work queue (not being worked on)', registers: [this.registry] }),
    adds: new Counter({ name: 'job_sweeper_keeper_workqueue_adds_total', help: 'Jobs added to the work queue', registers: [this.registry] }),
    retries: new Counter({
      name: 'job_sweeper_keeper_workqueue_retries_total',
      help: 'Jobs put back to be tried again after a backoff',
      registers: [this.registry]
    }),
    queueSeconds: new Histogram({
      name: 'job_sweeper_keeper_workqueue_queue_duration_seconds',
      help: 'Seconds a Job waited in the work queue before it was worked on',
      buckets: WORKQUEUE_BUCKETS,
      registers: [this.registry]
    }),
    workSeconds: new Histogram({
      name: 'job_sweeper_keeper_workqueue_work_duration_seconds',
      help: 'Seconds one piece of work on a Job took (a hold, a save, an archive, a release)',
      buckets: WORKQUEUE_BUCKETS,
      registers: [this.registry]
    })
  }

  constructor() {
    collectDefaultMetrics({ register: this.registry })
  }
}

/**
 * Which failure counter a harvest failure line goes to (logs.ts and job-file.ts word them; a
 * store's refusal is its SinkError's words: a bucket's `logs-dir '…': cannot upload …`, a
 * directory's `cannot write …`, whatever was being saved).
 */
export function failureReason(line: string): 'store' | 'read' | 'api' {
  if (/^cannot save job\.json|^cannot note|logs-dir '[^']*': cannot upload|: cannot write /.test(line)) return 'store'
  if (/^cannot (save|follow) the log/.test(line)) return 'read'
  return 'api'
}
