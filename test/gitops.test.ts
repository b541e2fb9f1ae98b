// GitOps warnings on the real cluster: the pre phase deletes a Job Argo CD tracks and warns that
// drift correction may re-create it; an untracked Job deleted beside it gets no warning.
import { outputNames, runAction } from './action.ts'
import { createJob, getJob, waitForJobCondition } from './cluster/testenv.ts'
import { release, releaseAnnotations, useScenario } from './scenario.ts'

const scenario = useScenario('gitops')

test('deleting a Job Argo CD tracks warns in the log and the summary; an untracked one does not', async () => {
  const { ns } = scenario
  const tracked = `${release}-migrate`
  const untracked = `${release}-seed`
  await createJob({ namespace: ns, name: tracked, annotations: releaseAnnotations(ns), labels: { 'argocd.argoproj.io/instance': 'shop' } })
  await createJob({ namespace: ns, name: untracked, annotations: releaseAnnotations(ns) })
  for (const name of [tracked, untracked]) await waitForJobCondition(ns, name, 'Complete')

  const run = await runAction({ release, namespace: ns })
  expect(run.code).toBe(0)
  expect(outputNames(run, 'pruned')).toEqual([tracked, untracked])
  expect(await getJob(ns, tracked)).toBeUndefined()
  const warning = `Argo CD tracks Job ${ns}/${tracked} (label argocd.argoproj.io/instance=shop): drift correction may re-create it and re-run it`
  expect(run.stdout).toContain(`::warning::${warning}`)
  expect(run.summary).toContain('### Warnings')
  expect(run.summary).toContain(`Argo CD tracks Job ${ns}/${tracked}`)
  expect(run.stdout).not.toContain(`tracks Job ${ns}/${untracked}`)
})
