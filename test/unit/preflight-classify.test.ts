// The verdict of each dry-run answer, from Status bodies captured from the local API server
// (Kubernetes 1.37; fixtures/preflight/): what each class reads, and the before → after it shows.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { KubeObject } from '../../src/kube/manifest-client.ts'
import { classifyAccepted, classifyRefusal } from '../../src/preflight/classify.ts'
import { notCheckedBriefly } from '../../src/preflight/gate.ts'
import { reasonOf, recreatedPods, MAX_REASON } from '../../src/preflight/verdict.ts'

const fixture = (name: string): { status: number; body: string } => {
  const body = readFileSync(join(import.meta.dirname, 'fixtures', 'preflight', `${name}.json`), 'utf8')
  return { status: (JSON.parse(body) as { code: number }).code, body }
}

const statefulSet = (storage: string): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name: 'db' },
  spec: {
    replicas: 1,
    serviceName: 'db',
    volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } } }]
  }
})
const deployment = (labels: Record<string, string>): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web' },
  spec: { selector: { matchLabels: labels }, template: { metadata: { labels } } }
})
const service = (ip: string): KubeObject => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc' }, spec: { clusterIP: ip, clusterIPs: [ip] } })
const configMap: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg' }, data: { mode: 'fast' } }

test('StatefulSet volumeClaimTemplates storage 1Gi → 2Gi: immutable, the path inside the template named', () => {
  const v = classifyRefusal(fixture('sts-immutable'), statefulSet('1Gi'), statefulSet('2Gi'))
  expect(v).toMatchObject({ kind: 'immutable', fields: ['spec.volumeClaimTemplates[data].spec.resources.requests.storage: 1Gi → 2Gi'] })
  // Helm 3's patch meets the same check.
  expect(classifyRefusal(fixture('sts-immutable-smp'), statefulSet('1Gi'), statefulSet('2Gi'))).toEqual(v)
})

test('StatefulSet whose rendering also changes the pod template: the immutable verdict says what changes there (its pods roll once recreated); none when only the volumes change', () => {
  /** The StatefulSet with a pod template whose annotation carries `annotated` (as Loki's chart writes its volume size there). */
  const withPod = (storage: string, annotated = storage): KubeObject => ({
    ...statefulSet(storage),
    spec: {
      ...(statefulSet(storage).spec as object),
      template: { metadata: { annotations: { 'storage/size': annotated } }, spec: { containers: [{ name: 'db', image: 'db:1' }] } }
    }
  })
  const rolled = classifyRefusal(fixture('sts-immutable'), withPod('1Gi'), withPod('2Gi'))
  expect(rolled).toMatchObject({ kind: 'immutable', template: ['spec.template.metadata.annotations[storage/size]: 1Gi → 2Gi'] })
  const db = { apiVersion: 'apps/v1', kind: 'StatefulSet', namespace: 'shop', name: 'db', write: 'apply' as const, clearedByPre: true, verdict: rolled }
  expect(recreatedPods(db)).toBe(
    'its pods and PVCs stay; the upgrade creates it anew and it adopts them, then replaces them one by one: the pod template changes too (spec.template.metadata.annotations[storage/size]: 1Gi → 2Gi)'
  )
  // Control: the same refusal with the pod template left alone says nothing of replacing pods.
  const kept = classifyRefusal(fixture('sts-immutable'), withPod('1Gi'), withPod('2Gi', '1Gi'))
  expect(kept).toMatchObject({ kind: 'immutable', fields: ['spec.volumeClaimTemplates[data].spec.resources.requests.storage: 1Gi → 2Gi'] })
  expect(kept).not.toHaveProperty('template')
  expect(recreatedPods({ ...db, verdict: kept })).toBe('its pods and PVCs stay; the upgrade creates it anew and it adopts them')
  // Under the OnDelete strategy the controller replaces no pod by itself, template change or not.
  const onDelete = (storage: string): KubeObject => ({
    ...withPod(storage),
    spec: { ...(withPod(storage).spec as object), updateStrategy: { type: 'OnDelete' } }
  })
  expect(classifyRefusal(fixture('sts-immutable'), onDelete('1Gi'), onDelete('2Gi'))).not.toHaveProperty('template')
})

test('StatefulSet on an older Kubernetes: the forbidden-fields message, allowed fields left out', () => {
  const body = JSON.stringify({
    kind: 'Status',
    code: 422,
    reason: 'Invalid',
    message: `StatefulSet.apps "db" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden`,
    details: {
      causes: [
        {
          reason: 'FieldValueForbidden',
          message: `Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden`,
          field: 'spec'
        }
      ]
    }
  })
  const rendered = { ...statefulSet('2Gi'), spec: { ...(statefulSet('2Gi').spec as object), replicas: 3 } }
  expect(classifyRefusal({ status: 422, body }, statefulSet('1Gi'), rendered)).toMatchObject({
    kind: 'immutable',
    fields: ['spec.volumeClaimTemplates[data].spec.resources.requests.storage: 1Gi → 2Gi']
  })
})

test('Deployment selector: immutable, by server-side apply and by a strategic merge patch alike', () => {
  for (const name of ['deploy-selector', 'deploy-selector-smp'])
    expect(classifyRefusal(fixture(name), deployment({ app: 'web' }), deployment({ app: 'web', tier: 'front' }))).toMatchObject({
      kind: 'immutable',
      fields: ['spec.selector.matchLabels.tier: added (front)']
    })
})

test('Service clusterIP: immutable, live value → the value the API server quotes', () => {
  expect(classifyRefusal(fixture('svc-clusterip'), service('10.0.0.50'), { ...service('10.0.0.60'), spec: { clusterIP: '10.0.0.60' } })).toMatchObject({
    kind: 'immutable',
    fields: ['spec.clusterIPs[0]: 10.0.0.50 → ["10.0.0.60"]']
  })
})

test('a field another manager owns: conflict, with the field and the manager', () => {
  const v = classifyRefusal(fixture('cm-conflict'), configMap, configMap)
  expect(v).toEqual({ kind: 'conflict', fields: ['.data.mode'], managers: ['kubectl-patch'] })
  expect(reasonOf(v)).toBe('conflict: .data.mode owned by "kubectl-patch" (helm upgrade without --force-conflicts fails)')
})

test('a ValidatingAdmissionPolicy (422) and a webhook (400) that deny: denied, by which and why', () => {
  expect(classifyRefusal(fixture('denied-vap'), deployment({ app: 'web' }), deployment({ app: 'web' }))).toEqual({
    kind: 'denied',
    by: 'ValidatingAdmissionPolicy no-latest (binding no-latest-binding)',
    message: 'images must not use the latest tag'
  })
  expect(classifyRefusal(fixture('denied-webhook'), configMap, configMap)).toEqual({
    kind: 'denied',
    by: 'admission webhook modes.example.test',
    message: 'ConfigMap data.mode must be fast or slow'
  })
})

test('a 403 of RBAC: not checked (a warning); any other 403 is the upgrade’s denial', () => {
  const v = classifyRefusal(fixture('forbidden-rbac'), configMap, configMap)
  expect(v.kind).toBe('not-checked')
  expect(reasonOf(v)).toMatch(/^not checked: our credentials may not: configmaps "cfg" is forbidden: User .* cannot patch resource "configmaps"/)
  const quota = {
    status: 403,
    body: JSON.stringify({
      kind: 'Status',
      code: 403,
      reason: 'Forbidden',
      message: 'configmaps "x" is forbidden: exceeded quota: cms, requested: count/configmaps=1, used: count/configmaps=2, limited: count/configmaps=2'
    })
  }
  expect(classifyRefusal(quota, undefined, configMap)).toMatchObject({ kind: 'denied', by: 'a ResourceQuota' })
})

test('RBAC’s escalation check refuses our dry run of a Role, a binding or an aggregationRule: not checked (our credentials), never denied', () => {
  // Captured from a user that may create and patch RBAC objects but holds no secrets permission:
  // validation.ConfirmNoEscalation's `is attempting to grant RBAC permissions not currently held`
  // (the same for a create and for a patch), and clusterrole/policybased's aggregationRule error.
  const rbac = (kind: string): KubeObject => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind, metadata: { name: 'app' } })
  const held =
    'user "system:serviceaccount:shop:preflight" (groups=["system:serviceaccounts" "system:serviceaccounts:shop" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}'
  const cases: [string, string, string][] = [
    [
      'rbac-escalation-role',
      'Role',
      `roles.rbac.authorization.k8s.io "app" is forbidden: ${held}\n{APIGroups:["batch"], Resources:["jobs"], Verbs:["delete"]}`
    ],
    ['rbac-escalation-rolebinding', 'RoleBinding', `rolebindings.rbac.authorization.k8s.io "app" is forbidden: ${held}`],
    ['rbac-escalation-clusterrolebinding', 'ClusterRoleBinding', `clusterrolebindings.rbac.authorization.k8s.io "app" is forbidden: ${held}`]
  ]
  for (const [name, kind, message] of cases) {
    const v = classifyRefusal(fixture(name), undefined, rbac(kind))
    expect(v).toEqual({ kind: 'not-checked', why: `our credentials may not grant the permissions this ${kind} grants: ${message}` })
    expect(reasonOf(v)).toMatch(/^not checked: our credentials may not grant /)
    // The summary's brief reason (the step log has the message) is what precedes the first colon.
    if (v.kind === 'not-checked') expect(notCheckedBriefly(v.why)).toBe(`our credentials may not grant the permissions this ${kind} grants`)
  }
  expect(classifyRefusal(fixture('rbac-aggregation-rule'), undefined, rbac('ClusterRole'))).toEqual({
    kind: 'not-checked',
    why: 'our credentials may not grant what an aggregationRule gathers (only cluster-admin may): clusterroles.rbac.authorization.k8s.io "app-aggregate" is forbidden: must have cluster-admin privileges to use the aggregationRule'
  })
  // Control: a quota's 403 on the same kind is the upgrade's own.
  const quota = {
    status: 403,
    body: JSON.stringify({
      kind: 'Status',
      code: 403,
      reason: 'Forbidden',
      message:
        'roles.rbac.authorization.k8s.io "app" is forbidden: exceeded quota: rbac, requested: count/roles.rbac.authorization.k8s.io=1, used: count/roles.rbac.authorization.k8s.io=5, limited: count/roles.rbac.authorization.k8s.io=5'
    })
  }
  expect(classifyRefusal(quota, undefined, rbac('Role'))).toMatchObject({ kind: 'denied', by: 'a ResourceQuota' })
})

test('a kind or version the cluster does not serve: a 404 in plain text or a Status; an object gone meanwhile is not that', () => {
  const widget: KubeObject = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }
  expect(classifyRefusal({ status: 404, body: '404 page not found' }, undefined, widget)).toEqual({ kind: 'not-served', what: 'Widget in example.com/v1' })
  expect(classifyRefusal(fixture('discovery-removed'), undefined, widget).kind).toBe('not-served')
  const gone = {
    status: 404,
    body: JSON.stringify({ kind: 'Status', code: 404, reason: 'NotFound', message: 'configmaps "cfg" not found', details: { name: 'cfg' } })
  }
  expect(classifyRefusal(gone, configMap, configMap).kind).toBe('not-checked')
})

test('the rendered object itself refused: invalid (a bad value, 422; a field the schema lacks under server-side apply, 500)', () => {
  expect(classifyRefusal(fixture('deploy-invalid'), deployment({ app: 'web' }), deployment({ app: 'web' }))).toMatchObject({
    kind: 'invalid',
    fields: ['spec.replicas']
  })
  expect(reasonOf(classifyRefusal(fixture('deploy-strict'), deployment({ app: 'web' }), deployment({ app: 'web' })))).toContain(
    '.spec.bogus: field not declared in schema'
  )
})

test('a webhook that cannot be called or cannot dry-run, or another 5xx: not checked', () => {
  const uncallable = {
    status: 500,
    body: JSON.stringify({
      code: 500,
      message: 'Internal error occurred: failed calling webhook "x.example.test": dial tcp 127.0.0.1:9: connect: connection refused'
    })
  }
  expect(classifyRefusal(uncallable, configMap, configMap)).toMatchObject({ kind: 'not-checked' })
  const noDryRun = { status: 400, body: JSON.stringify({ code: 400, message: 'admission webhook "x.example.test" does not support dry run' }) }
  expect(classifyRefusal(noDryRun, configMap, configMap)).toEqual({ kind: 'not-checked', why: 'admission webhook x.example.test does not support dry run' })
})

test('an accepted dry run: unchanged when only bookkeeping differs, else each changed path; new when nothing was live', () => {
  const live: KubeObject = {
    ...deployment({ app: 'web' }),
    metadata: { name: 'web', resourceVersion: '1', generation: 1, managedFields: [{ manager: 'helm' }] }
  }
  const same = { ...live, metadata: { ...live.metadata, managedFields: [{ manager: 'helm' }, { manager: 'other' }] } }
  expect(classifyAccepted(live, same)).toEqual({ kind: 'unchanged' })
  const scaled = { ...live, metadata: { ...live.metadata, generation: 2 }, spec: { ...(live.spec as object), replicas: 3 } }
  expect(classifyAccepted(live, scaled)).toEqual({ kind: 'changes', paths: ['spec.replicas: added (3)'] })
  expect(classifyAccepted(undefined, live)).toEqual({ kind: 'new' })
})

test('a reason is at most 400 characters', () => {
  const fields = Array.from({ length: 50 }, (_, i) => `spec.template.spec.containers[c${i}].image: example.invalid/a:1 → 2`)
  expect(reasonOf({ kind: 'immutable', fields, message: '' }).length).toBeLessThanOrEqual(MAX_REASON)
  expect(reasonOf({ kind: 'denied', by: 'admission', message: 'x'.repeat(2000) }).length).toBeLessThanOrEqual(MAX_REASON)
})
