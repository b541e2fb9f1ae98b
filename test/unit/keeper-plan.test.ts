// The keeper's decision (src/plan/keeper.ts): a pure function of the Job and a time.
import type { V1Job } from '@kubernetes/client-node'
import { ARCHIVE_ANNOTATION, holdEndsAt, keeperStep, LOGS_FINALIZER, withFinalizer, type KeeperAction } from '../../src/plan/keeper.ts'
import { newJob, NOW } from './jobs.ts'

const HOUR = 3600
const held = (job: V1Job): V1Job => ({ ...job, metadata: { ...job.metadata, finalizers: [...(job.metadata?.finalizers ?? []), LOGS_FINALIZER] } })
/** Noted as archived at `where` (by default as the keeper writes it: under this Job's uid). */
const archived = (job: V1Job, where = `s3://logs/prod/j/${job.metadata?.uid}/`): V1Job => ({
  ...job,
  metadata: { ...job.metadata, annotations: { ...job.metadata?.annotations, [ARCHIVE_ANNOTATION.where]: where } }
})
/** Deletion asked `seconds` before NOW. */
const deleting = (job: V1Job, seconds: number): V1Job => ({
  ...job,
  metadata: { ...job.metadata, deletionTimestamp: new Date(NOW.getTime() - seconds * 1000) }
})

/** `n` of its pods being deleted (the Job controller's status.terminating). */
const terminating = (job: V1Job, n: number): V1Job => ({ ...job, status: { ...job.status, terminating: n } })

const cases: [string, V1Job, KeeperAction][] = [
  [
    'running, held, a pod being deleted (a namespace’s deletion, an eviction) → save what it wrote so far',
    terminating(held(newJob({ name: 'j', status: 'running' })), 1),
    'save'
  ],
  ['running, not held, a pod being deleted → hold first', terminating(newJob({ name: 'j', status: 'running' }), 1), 'hold'],
  [
    'failed, held, a pod still terminating → archive (it reads the terminating pod too)',
    terminating(held(newJob({ name: 'j', status: 'failed' })), 1),
    'archive'
  ],
  ['running, held, none terminating → none', terminating(held(newJob({ name: 'j', status: 'running' })), 0), 'none'],
  [
    'running, held, one attempt failed (a backoffLimit retry) → save its log now, before PodGC or a deletion takes the pod',
    { ...held(newJob({ name: 'j', status: 'running' })), status: { active: 1, failed: 1 } },
    'save'
  ],
  [
    'running, held, one pod of a parallel Job succeeded → save its log now',
    { ...held(newJob({ name: 'j', status: 'running' })), status: { active: 2, succeeded: 1 } },
    'save'
  ],
  ['running, not held, one attempt failed → hold first', { ...newJob({ name: 'j', status: 'running' }), status: { active: 1, failed: 1 } }, 'hold'],
  ['running, not held → hold', newJob({ name: 'j', status: 'running' }), 'hold'],
  ['running, held → none (it is held until it finishes)', held(newJob({ name: 'j', status: 'running' })), 'none'],
  ['failed, held → archive', held(newJob({ name: 'j', status: 'failed' })), 'archive'],
  [
    'succeeded, not held (finished before the keeper saw it) → hold first (a failed archive is tried again under the hold)',
    newJob({ name: 'j', status: 'succeeded' }),
    'hold'
  ],
  ['failed, archived, held → release', held(archived(newJob({ name: 'j', status: 'failed' }))), 'release'],
  ['failed, archived, not held → none', archived(newJob({ name: 'j', status: 'failed' })), 'none'],
  [
    'running, not held, created with the note (copied from a template, or planted): another Job’s uid → hold',
    archived(newJob({ name: 'j', status: 'running' }), 's3://logs/prod/j/uid-of-an-earlier-job/'),
    'hold'
  ],
  [
    'failed, held, the note names another Job’s uid → archive (not the keeper’s archive of this Job)',
    held(archived(newJob({ name: 'j', status: 'failed' }), 's3://logs/prod/j/uid-of-an-earlier-job/')),
    'archive'
  ],
  [
    'failed, not held, a note without a uid (an earlier keeper’s, before the keys carried it) → hold: archived once more, under its uid',
    archived(newJob({ name: 'j', status: 'failed' }), 's3://logs/prod/j/'),
    'hold'
  ],
  [
    'failed, held, the uid only inside the note, not its last folder → archive',
    held(archived(newJob({ name: 'j', status: 'failed' }), 's3://logs/uid-j/prod/j/')),
    'archive'
  ],
  [
    'failed, held, the note naming the uid without its trailing slash → archive (the keeper writes it with one)',
    held(archived(newJob({ name: 'j', status: 'failed' }), 's3://logs/prod/j/uid-j')),
    'archive'
  ],
  [
    'failed, not held, being deleted, a note not its own → none (too late to hold)',
    deleting(archived(newJob({ name: 'j', status: 'failed' }), 's3://logs/prod/j/'), 5),
    'none'
  ],
  ['failed, held, deletion asked 10 min ago (deadline 1h) → archive', deleting(held(newJob({ name: 'j', status: 'failed' })), 600), 'archive'],
  ['running, held, deleted before it finished → archive what its pods wrote', deleting(held(newJob({ name: 'j', status: 'running' })), 5), 'archive'],
  [
    'failed, held, deletion asked 1h ago, no archive tried (the keeper was down) → archive once first',
    deleting(held(newJob({ name: 'j', status: 'failed' })), HOUR),
    'archive'
  ],
  ['failed, not held, being deleted → none (too late to hold)', deleting(newJob({ name: 'j', status: 'failed' }), 5), 'none'],
  [
    'archived, held, being deleted past the deadline → release (archived: not a give-up)',
    deleting(held(archived(newJob({ name: 'j', status: 'failed' }))), 2 * HOUR),
    'release'
  ]
]

test.each(cases)('%s', (_name, job, action) => {
  expect(keeperStep(job, NOW, HOUR).action).toBe(action)
})

test('a note not naming the Job’s uid is said in the step’s reason; a Job with no uid trusts no note', () => {
  const copied = archived(newJob({ name: 'j', status: 'running' }), 's3://logs/prod/j/uid-of-an-earlier-job/')
  expect(keeperStep(copied, NOW, HOUR).reason).toBe(
    "running: held until its logs are archived (its job-sweeper.io/logs note does not name its uid: not the keeper's archive of this Job)"
  )
  const noUid = archived(newJob({ name: 'j', status: 'failed' }), 's3://logs/prod/j//')
  expect(keeperStep({ ...noUid, metadata: { ...noUid.metadata, uid: undefined } }, NOW, HOUR).action).toBe('hold')
  expect(keeperStep(archived(newJob({ name: 'j', status: 'failed' })), NOW, HOUR).reason).toBe('its logs are archived')
})

test('past the hold’s deadline: give up only once an archive was tried; before the deadline, an archive tried changes nothing', () => {
  const late = deleting(held(newJob({ name: 'j', status: 'failed' })), HOUR)
  expect(keeperStep(late, NOW, HOUR, true)).toEqual({ action: 'give-up', reason: 'its deletion was asked more than 3600s ago (hold-deadline)' })
  expect(keeperStep(late, NOW, HOUR, false)).toMatchObject({ action: 'archive', reason: expect.stringContaining('no archive was tried yet: one first') })
  expect(keeperStep(deleting(held(newJob({ name: 'j', status: 'failed' })), 600), NOW, HOUR, true).action).toBe('archive')
})

test('the hold ends hold-deadline after the deletion was asked; a Job not being deleted has no end', () => {
  const job = deleting(held(newJob({ name: 'j', status: 'failed' })), 60)
  expect(holdEndsAt(job, HOUR)).toBe(NOW.getTime() - 60_000 + HOUR * 1000)
  expect(holdEndsAt(newJob({ name: 'j', status: 'failed' }), HOUR)).toBeUndefined()
})

test('the finalizer is added after the others and removed alone', () => {
  const job = newJob({ name: 'j', status: 'running', finalizers: ['batch.kubernetes.io/job-tracking'] })
  expect(withFinalizer(job, true)).toEqual(['batch.kubernetes.io/job-tracking', LOGS_FINALIZER])
  expect(withFinalizer(held(job), false)).toEqual(['batch.kubernetes.io/job-tracking'])
  expect(withFinalizer(held(job), true)).toEqual(['batch.kubernetes.io/job-tracking', LOGS_FINALIZER])
})
