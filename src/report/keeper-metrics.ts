// The keeper's Prometheus metrics (prom-client), on /metrics as Kubernetes controllers expose
// theirs: what it archived, what failed and why, its queue, and how long the oldest finished Job
// has waited for its archive (the figure to alert on: the store is down, or the keeper behind).
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client'

export class KeeperMetrics {
  readonly registry = new Registry()
  readonly archived = new Counter({
    name: 'job_sweeper_keeper_jobs_archived_total',
    help: 'Jobs whose logs and job.json were archived',
    registers: [this.registry]
  })
  readonly bytes = new Counter({ name: 'job_sweeper_keeper_log_bytes_archived_total', help: 'Bytes of logs archived', registers: [this.registry] })
  readonly failures = new Counter({
    name: 'job_sweeper_keeper_archive_failures_total',
    help: 'Archives that did not complete, by reason: read (a log the API server did not serve), store (the sink refused), api (a Job request)',
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

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'job_sweeper_keeper_' })
  }
}

/** Which failure counter a harvest failure line goes to (logs.ts words them). */
export function failureReason(line: string): 'store' | 'read' | 'api' {
  if (/^cannot save job\.json|^cannot record the archive|refused|cannot write/.test(line)) return 'store'
  if (/^cannot save the log|^cannot note/.test(line)) return 'read'
  return 'api'
}
