// keep-last: the N newest Jobs of each group are kept whatever their ttl, as a CronJob keeps its
// successfulJobsHistoryLimit. Pure: groups and ranks come from the Jobs' own metadata.
//
// A group is, in this order: the CronJob that owns the Job; else the Helm release and the Job's
// name without its trailing revision, number or hash (see baseName); else the value of the
// group-by label. A Job in no group is left to its retention alone.
//
// Failed Jobs are ranked apart from the others, so a run of successes never pushes out the last
// failure, and keep-last never keeps a failure longer than its failure-grace: it only keeps
// succeeded (and, in post, still running) Jobs longer than their ttl.
import type { JobRecord } from '../kube/job-record.ts'
import { HELM_RELEASE_NAME, jobStatus, type JobStatus } from './predicates.ts'

/** The keep-last settings: how many to keep per group, and the label that groups Jobs no CronJob or release groups. */
export interface KeepLastRule {
  keepLast: number
  groupBy?: string
}

/** A group of Jobs that keep-last counts in. */
export interface JobGroup {
  /** Unique across namespaces: namespace, kind and name. */
  key: string
  /** In words, for the summary: `migrate`, `CronJob nightly-report`, `team=payments`. */
  label: string
}

/** Where a Job stands in its group. */
export interface KeepLastVerdict {
  group: JobGroup
  /** `newest`: among the N newest not-failed Jobs; `older`: beyond them; `last-failure`: the group's newest failed Job. */
  standing: 'newest' | 'older' | 'last-failure' | 'earlier-failure'
  /** Words for the reason: `one of the 3 newest of group migrate (keep-last 3)`. */
  words: string
}

// A trailing segment that is a revision or a number: 42, v7.
const REVISION = /^v?\d+$/
// Kubernetes' generateName suffix: 5 characters of an alphabet without vowels (no word fits it).
const GENERATED = /^[bcdfghjklmnpqrstvwxz2456789]{5}$/
// A hex hash (a commit, a template hash) of 5 to 40 characters with a digit: `cafe` or `beef` stay words.
const HEX_HASH = /^(?=.*\d)[0-9a-f]{5,40}$/

/**
 * The Job's name without one trailing revision, number or hash: `migrate-42` → `migrate`,
 * `db-migrate-7f9c2` → `db-migrate`, `seed-v3` → `seed`. A trailing word stays (`db-migrate`,
 * `cache-warmup`): a hash segment must be a generateName suffix (5 characters, no vowels) or hex
 * with at least one digit. Only one segment goes, and never the first.
 */
export function baseName(name: string): string {
  const cut = name.lastIndexOf('-')
  if (cut <= 0) return name
  const last = name.slice(cut + 1)
  return REVISION.test(last) || GENERATED.test(last) || HEX_HASH.test(last) ? name.slice(0, cut) : name
}

/** The Job's keep-last group, if it has one. */
export function groupOf(job: JobRecord, groupBy: string | undefined): JobGroup | undefined {
  const ns = job.metadata?.namespace ?? ''
  const cronJob = job.metadata?.ownerReferences?.find((o) => o.kind === 'CronJob')
  if (cronJob) return { key: `${ns}/CronJob/${cronJob.name}`, label: `CronJob ${cronJob.name}` }
  const release = job.metadata?.annotations?.[HELM_RELEASE_NAME]
  if (release) {
    const base = baseName(job.metadata?.name ?? '')
    return { key: `${ns}/release/${release}/${base}`, label: base }
  }
  const value = groupBy === undefined ? undefined : job.metadata?.labels?.[groupBy]
  if (value !== undefined) return { key: `${ns}/label/${groupBy}=${value}`, label: `${groupBy}=${value}` }
  return undefined
}

/** Which count a Job is ranked in: failures apart; in post, running Jobs count with the succeeded ones. */
function track(status: JobStatus, countsUnfinished: boolean): 'kept' | 'failed' | undefined {
  if (status === 'failed') return 'failed'
  if (status === 'succeeded') return 'kept'
  return countsUnfinished && status !== 'terminating' ? 'kept' : undefined
}

const created = (job: JobRecord): number => new Date(job.metadata?.creationTimestamp ?? 0).getTime()

/** Newest first: by creation, then by name (a later revision's name sorts later). */
function newestFirst(a: JobRecord, b: JobRecord): number {
  return created(b) - created(a) || (b.metadata?.name ?? '').localeCompare(a.metadata?.name ?? '')
}

/**
 * Ranks Jobs in their groups. `countsUnfinished`: running Jobs take a place among the N newest
 * (post: the new revision is still running when its TTL is set).
 */
export class KeepLast {
  private readonly groups = new Map<string, JobRecord[]>()
  /** Each listed Job's rank in its group and track (0: the newest), computed once for all. */
  private readonly ranks = new Map<JobRecord, number>()
  private readonly rule: KeepLastRule
  private readonly countsUnfinished: boolean

  constructor(jobs: JobRecord[], rule: KeepLastRule, countsUnfinished: boolean) {
    this.rule = rule
    this.countsUnfinished = countsUnfinished
    for (const job of jobs) {
      const group = groupOf(job, rule.groupBy)
      if (!group) continue
      const members = this.groups.get(group.key)
      if (members) members.push(job)
      else this.groups.set(group.key, [job])
    }
    for (const members of this.groups.values()) {
      for (const which of ['kept', 'failed'] as const) {
        const ranked = members.filter((j) => track(jobStatus(j), countsUnfinished) === which).sort(newestFirst)
        ranked.forEach((job, rank) => this.ranks.set(job, rank))
      }
    }
  }

  /** How many Jobs of the group in the same track are newer than `job` (a fresh copy counts in place of the one listed). */
  private rank(job: JobRecord, group: JobGroup, which: 'kept' | 'failed'): number {
    const cached = this.ranks.get(job)
    if (cached !== undefined) return cached
    const uid = job.metadata?.uid
    const others = (this.groups.get(group.key) ?? []).filter((j) => j.metadata?.uid !== uid && track(jobStatus(j), this.countsUnfinished) === which)
    return others.filter((j) => newestFirst(j, job) < 0).length
  }

  /** Where `job` stands in its group; a fresh copy of a Job replaces the one it was ranked as (same uid). */
  verdict(job: JobRecord): KeepLastVerdict | undefined {
    const group = groupOf(job, this.rule.groupBy)
    const which = track(jobStatus(job), this.countsUnfinished)
    if (!group || !which) return undefined
    const rank = this.rank(job, group, which)
    const n = this.rule.keepLast
    if (which === 'failed') {
      return rank === 0
        ? { group, standing: 'last-failure', words: `the last failure of group ${group.label}` }
        : { group, standing: 'earlier-failure', words: `an earlier failure of group ${group.label}` }
    }
    const newest = n === 1 ? 'the newest' : `the ${n} newest`
    return rank < n
      ? { group, standing: 'newest', words: `${n === 1 ? 'the newest' : `one of the ${n} newest`} of group ${group.label} (keep-last ${n})` }
      : { group, standing: 'older', words: `older than ${newest} of group ${group.label} (keep-last ${n})` }
  }
}
