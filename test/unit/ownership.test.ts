// Field ownership: what another manager (Helm 4, server-side apply) owns on a Job is read from its
// managedFields, and the post phase's patch leaves exactly those fields alone.
import type { V1Job, V1ManagedFieldsEntry } from '@kubernetes/client-node'
import { retentionPatch } from '../../src/execute/actions.ts'
import { toJobRecord } from '../../src/kube/job-record.ts'
import { planPost } from '../../src/plan/retention.ts'
import { parseSettings, type Settings } from '../../src/settings/settings.ts'
import { NOW, newJob } from './jobs.ts'

const settings = (inputs: Record<string, string>): Settings => parseSettings((name) => ({ selector: '!x', namespace: 'prod', ...inputs })[name] ?? '', {})

/** A managedFields entry owning the given fields (as `metadata.annotations.<key>`, `spec.<field>`). */
function entry(manager: string, operation: 'Apply' | 'Update', paths: string[], subresource?: string): V1ManagedFieldsEntry {
  const fields: Record<string, unknown> = {}
  for (const path of paths) {
    const [top, second, ...rest] = path.split('.')
    const key = rest.length > 0 ? `${second}.${rest.join('.')}` : second
    const parent = (fields[`f:${top}`] ??= {}) as Record<string, Record<string, unknown>>
    if (top === 'metadata') ((parent[`f:${second}`] ??= {}) as Record<string, unknown>)[`f:${rest.join('.')}`] = {}
    else parent[`f:${key}`] = {}
  }
  return { manager, operation, subresource, fieldsType: 'FieldsV1', fieldsV1: fields }
}

function withManagedFields(entries: V1ManagedFieldsEntry[], annotations: Record<string, string> = {}): V1Job {
  const job = newJob({ name: 'j', finishedAgo: 60, annotations })
  job.metadata = { ...job.metadata, managedFields: entries }
  return job
}

describe('reading managedFields', () => {
  const cases: [string, V1ManagedFieldsEntry[], { ttl?: string[]; labels?: string[]; annotations?: string[] }][] = [
    [
      'helm applies the TTL and job-sweeper.io/ metadata → all of it is the chart’s',
      [entry('helm', 'Apply', ['spec.ttlSecondsAfterFinished', 'metadata.annotations.job-sweeper.io/failure-grace', 'metadata.labels.job-sweeper.io/managed'])],
      { ttl: ['helm'], labels: ['job-sweeper.io/managed'], annotations: ['job-sweeper.io/failure-grace'] }
    ],
    ['helm applies only other annotations → nothing of job-sweeper’s', [entry('helm', 'Apply', ['metadata.annotations.meta.helm.sh/release-name'])], {}],
    [
      'an Update owner (Helm 3, kubectl edit) → nothing: updates never conflict',
      [entry('helm', 'Update', ['spec.ttlSecondsAfterFinished', 'metadata.annotations.job-sweeper.io/ttl'])],
      {}
    ],
    ['job-sweeper’s own entry → nothing', [entry('job-sweeper', 'Apply', ['spec.ttlSecondsAfterFinished', 'metadata.annotations.job-sweeper.io/ttl'])], {}],
    ['a status subresource apply → nothing', [entry('kueue', 'Apply', ['spec.ttlSecondsAfterFinished'], 'status')], {}],
    ['no managedFields → nothing', [], {}]
  ]
  test.each(cases)('%s', (_name, entries, expected) => {
    const record = toJobRecord(withManagedFields(entries))
    expect({ ttl: record.ttlAppliedBy, labels: record.appliedMetadata?.labels, annotations: record.appliedMetadata?.annotations }).toEqual(expected)
  })
})

describe('post: what the chart applies stands', () => {
  test('a failure-grace annotation the chart applies decides the failed Job’s TTL, and is left as it is', () => {
    const job = toJobRecord(
      withManagedFields([entry('helm', 'Apply', ['metadata.annotations.job-sweeper.io/failure-grace'])], { 'job-sweeper.io/failure-grace': '7d' })
    )
    job.status = { conditions: [{ type: 'Failed', status: 'True', lastTransitionTime: NOW }] }
    const [p] = planPost({ namespace: 'prod', jobs: [job] }, settings({ 'failure-grace': '1h' }), NOW).jobs
    expect([p.action, p.ttlSeconds]).toEqual(['set-ttl', 7 * 86400])
    expect(p.reason).toContain("failure-grace (the chart's annotation job-sweeper.io/failure-grace) 7d")
    expect(p.reason).toContain("the chart's annotation job-sweeper.io/failure-grace left as it sets it")
  })

  test('positive control: the same annotation written by an earlier post phase (an Update) is the input’s to overwrite', () => {
    const job = toJobRecord(
      withManagedFields([entry('job-sweeper', 'Update', ['metadata.annotations.job-sweeper.io/failure-grace'])], { 'job-sweeper.io/failure-grace': '7d' })
    )
    job.status = { conditions: [{ type: 'Failed', status: 'True', lastTransitionTime: NOW }] }
    const [p] = planPost({ namespace: 'prod', jobs: [job] }, settings({ 'failure-grace': '1h' }), NOW).jobs
    expect([p.action, p.ttlSeconds]).toEqual(['set-ttl', 3600])
  })

  test('a running Job’s upper bound counts the chart’s retention too', () => {
    const job = toJobRecord(withManagedFields([entry('helm', 'Apply', ['metadata.annotations.job-sweeper.io/ttl'])], { 'job-sweeper.io/ttl': '2d' }))
    job.status = { active: 1 }
    const [p] = planPost({ namespace: 'prod', jobs: [job] }, settings({ ttl: '1h', 'failure-grace': '1d' }), NOW).jobs
    expect(p.ttlSeconds).toBe(2 * 86400)
  })

  test('the patch leaves out the chart’s TTL, labels and annotations, and keeps the rest', () => {
    const s = settings({ ttl: '1h', 'failure-grace': '1d' })
    const workflowRun = { url: 'https://ci.example/run/1', commit: 'abc123' }
    const applied = { labels: ['job-sweeper.io/managed'], annotations: ['job-sweeper.io/failure-grace'] }
    expect(retentionPatch(s, 3600, workflowRun, true, applied)).toEqual({
      metadata: { labels: {}, annotations: { 'job-sweeper.io/ttl': '1h', 'job-sweeper.io/run-url': workflowRun.url, 'job-sweeper.io/commit': 'abc123' } }
    })
    // Positive control: nothing applied by the chart → every field is written.
    expect(retentionPatch(s, 3600, workflowRun, false)).toEqual({
      metadata: {
        labels: { 'job-sweeper.io/managed': 'true' },
        annotations: {
          'job-sweeper.io/ttl': '1h',
          'job-sweeper.io/failure-grace': '1d',
          'job-sweeper.io/run-url': workflowRun.url,
          'job-sweeper.io/commit': 'abc123'
        }
      },
      spec: { ttlSecondsAfterFinished: 3600 }
    })
  })
})
