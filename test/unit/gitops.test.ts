// gitOpsOwner: which Jobs a GitOps controller tracks (and may re-create after a pre phase).
import type { V1Job } from '@kubernetes/client-node'
import { gitOpsOwner, type GitOpsOwner } from '../../src/plan/predicates.ts'
import { newJob } from './jobs.ts'

function job(labels: Record<string, string>, annotations: Record<string, string> = {}): V1Job {
  const j = newJob({ name: 'app-migrate', release: 'app', annotations })
  j.metadata = { ...j.metadata, labels }
  return j
}

const cases: [string, V1Job, GitOpsOwner | undefined][] = [
  ['plain Helm Job → none', job({ 'app.kubernetes.io/instance': 'app', 'app.kubernetes.io/managed-by': 'Helm' }), undefined],
  ['Argo CD label tracking → Argo CD', job({ 'argocd.argoproj.io/instance': 'shop' }), { tool: 'Argo CD', marker: 'label argocd.argoproj.io/instance=shop' }],
  [
    'Argo CD annotation tracking → Argo CD, naming the tracking id',
    job({}, { 'argocd.argoproj.io/tracking-id': 'shop:batch/Job:prod/app-migrate' }),
    { tool: 'Argo CD', marker: 'annotation argocd.argoproj.io/tracking-id=shop:batch/Job:prod/app-migrate' }
  ],
  [
    'Argo CD label and annotation → the annotation (what current Argo CD tracks by)',
    job({ 'argocd.argoproj.io/instance': 'shop' }, { 'argocd.argoproj.io/tracking-id': 'shop:batch/Job:prod/app-migrate' }),
    { tool: 'Argo CD', marker: 'annotation argocd.argoproj.io/tracking-id=shop:batch/Job:prod/app-migrate' }
  ],
  [
    'Flux helm-controller labels → Flux',
    job({ 'helm.toolkit.fluxcd.io/name': 'shop', 'helm.toolkit.fluxcd.io/namespace': 'flux-system' }),
    { tool: 'Flux', marker: 'label helm.toolkit.fluxcd.io/name=shop' }
  ],
  [
    'Flux kustomize-controller labels → Flux',
    job({ 'kustomize.toolkit.fluxcd.io/namespace': 'flux-system' }),
    { tool: 'Flux', marker: 'label kustomize.toolkit.fluxcd.io/namespace=flux-system' }
  ],
  ['Argo CD hook annotation only → none (a hook, not tracking)', job({}, { 'argocd.argoproj.io/hook': 'PreSync' }), undefined],
  ['Argo CD tracking id as a label, not an annotation → none', job({ 'argocd.argoproj.io/tracking-id': 'shop' }), undefined],
  ['Flux-looking annotation, not a label → none', job({}, { 'helm.toolkit.fluxcd.io/name': 'shop' }), undefined],
  ['another fluxcd.io group (notification) → none', job({ 'notification.toolkit.fluxcd.io/name': 'shop' }), undefined],
  ['empty Argo CD label → none', job({ 'argocd.argoproj.io/instance': '' }), undefined],
  ['no metadata at all → none', { apiVersion: 'batch/v1', kind: 'Job' }, undefined]
]

test.each(cases)('%s', (_name, j, expected) => {
  expect(gitOpsOwner(j)).toEqual(expected)
})
