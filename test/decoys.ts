// Decoys: Jobs a scenario must not touch. Each scenario creates them beside its real targets and
// asserts afterwards that every one still exists with the same UID.
import { createJob, getJob, helmAnnotations, type TestJob } from './cluster/testenv.ts'

export interface Decoy {
  namespace: string
  name: string
  uid: string
  why: string
}

/**
 * Creates, for a scenario on `release` in `namespace`: a Job of another release, a Job with the
 * same name and release annotations in `otherNamespace`, a Helm hook Job of the same release, and
 * an unrelated running Job.
 */
export async function createDecoys(namespace: string, otherNamespace: string, release: string): Promise<Decoy[]> {
  const specs: (TestJob & { why: string })[] = [
    {
      why: 'another release',
      namespace,
      name: 'other-release-migrate',
      annotations: helmAnnotations('other-release', namespace),
      behaviour: 'fail',
      labels: { 'app.kubernetes.io/component': 'migrate' }
    },
    {
      why: 'another namespace',
      namespace: otherNamespace,
      name: `${release}-migrate`,
      annotations: helmAnnotations(release, otherNamespace),
      labels: { 'app.kubernetes.io/component': 'migrate' }
    },
    {
      why: 'a Helm hook Job',
      namespace,
      name: `${release}-pre-upgrade-hook`,
      annotations: helmAnnotations(release, namespace, 'pre-upgrade'),
      labels: { 'app.kubernetes.io/component': 'migrate' }
    },
    { why: 'an unrelated running Job', namespace, name: 'unrelated-worker', behaviour: 'hold' }
  ]
  const decoys: Decoy[] = []
  for (const spec of specs) {
    const job = await createJob(spec)
    decoys.push({ namespace: spec.namespace, name: spec.name, uid: job.metadata?.uid ?? '', why: spec.why })
  }
  return decoys
}

/** The decoys that no longer exist with their original UID (expected: none). */
export async function missingDecoys(decoys: Decoy[]): Promise<string[]> {
  const missing: string[] = []
  for (const d of decoys) {
    const job = await getJob(d.namespace, d.name)
    if (job?.metadata?.uid !== d.uid || job.metadata?.deletionTimestamp) missing.push(`${d.namespace}/${d.name} (${d.why})`)
  }
  return missing
}
