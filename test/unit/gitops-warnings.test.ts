// GitOps warnings: the pre phase's plan, its outcomes, and the warnings the summary shows for
// deleted Jobs that Argo CD or Flux tracks.
import type { V1Job } from '@kubernetes/client-node'
import { outcome, type OutcomeKind } from '../../src/execute/outcome.ts'
import { planPrune } from '../../src/plan/plan.ts'
import { gitOpsWarnings } from '../../src/report/gitops.ts'
import { summarize } from '../../src/report/summary.ts'
import { parseSettings } from '../../src/settings/settings.ts'
import { NOW, newJob } from './jobs.ts'

function job(name: string, labels: Record<string, string> = {}, annotations: Record<string, string> = {}): V1Job {
  const j = newJob({ name, release: 'app', annotations })
  j.metadata = { ...j.metadata, labels }
  return j
}

/** The pre phase's plan of `jobs`, each with the outcome `result` (default: as the plan says). */
function run(jobs: V1Job[], result: (name: string) => OutcomeKind = () => 'pruned'): string[] {
  const settings = parseSettings((name) => ({ release: 'app', namespace: 'prod' })[name] ?? '', {})
  const plan = planPrune({ namespace: 'prod', jobs }, settings, NOW)
  return gitOpsWarnings(
    plan,
    plan.jobs.map((p) => outcome(p, p.action === 'keep' ? 'kept' : result(p.name)))
  )
}

test('a deleted Job Argo CD tracks by label → a warning naming the label', () => {
  expect(run([job('app-migrate', { 'argocd.argoproj.io/instance': 'shop' })])).toEqual([
    'Argo CD tracks Job prod/app-migrate (label argocd.argoproj.io/instance=shop): drift correction may re-create it and re-run it'
  ])
})

test('Flux and Argo CD annotation tracking → one warning each', () => {
  const warnings = run([job('a', { 'helm.toolkit.fluxcd.io/name': 'shop' }), job('b', {}, { 'argocd.argoproj.io/tracking-id': 'shop:batch/Job:prod/b' })])
  expect(warnings).toEqual([
    'Flux tracks Job prod/a (label helm.toolkit.fluxcd.io/name=shop): drift correction may re-create it and re-run it',
    'Argo CD tracks Job prod/b (annotation argocd.argoproj.io/tracking-id=shop:batch/Job:prod/b): drift correction may re-create it and re-run it'
  ])
})

test('a dry run warns about the Jobs it would delete', () => {
  expect(run([job('a', { 'argocd.argoproj.io/instance': 'shop' })], () => 'would-prune')).toHaveLength(1)
})

test('no warning for an untracked Job, a tracked Job kept (hook), or one already gone', () => {
  const hook = newJob({ name: 'hook', release: 'app', hook: 'pre-upgrade' })
  hook.metadata = { ...hook.metadata, labels: { 'argocd.argoproj.io/instance': 'shop' } }
  const gone = job('gone', { 'argocd.argoproj.io/instance': 'shop' })
  expect(run([job('plain'), hook, gone], (name) => (name === 'gone' ? 'gone' : 'pruned'))).toEqual([])
})

test('many tracked Jobs → five named, the rest counted', () => {
  const jobs = Array.from({ length: 8 }, (_, i) => job(`j${i}`, { 'argocd.argoproj.io/instance': 'shop' }))
  const warnings = run(jobs)
  expect(warnings).toHaveLength(6)
  expect(warnings[5]).toBe('… and 3 more deleted Job(s) tracked by Argo CD or Flux: drift correction may re-create and re-run them')
})

test('the summary lists them under Warnings', () => {
  const warnings = run([job('app-migrate', { 'argocd.argoproj.io/instance': 'shop' })])
  const summary = summarize({ phase: 'pre', namespace: 'prod', dryRun: false, outcomes: [], errors: [], warnings })
  expect(summary.warnings).toEqual(warnings)
})
