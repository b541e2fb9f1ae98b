// Helm 3's patch for an object that exists (three-way.ts), over a patch schema read from an OpenAPI
// v3 document shaped as the API server serves it (patch-schema.ts): what the chart drops is
// removed, what it renders is set, merged lists are merged by their key.
import type { KubeObject } from '../../src/kube/manifest-client.ts'
import { classifyRefusal } from '../../src/preflight/classify.ts'
import { patchSchemaOf, type OpenApiDocument } from '../../src/preflight/patch-schema.ts'
import { helm3Patch } from '../../src/preflight/three-way.ts'

const ref = (name: string, extra: object = {}): object => ({ allOf: [{ $ref: `#/components/schemas/${name}` }], ...extra })
/** The part of apps/v1's document these cases read, with the API server's names and tags. */
const appsV1: OpenApiDocument = {
  components: {
    schemas: {
      'io.k8s.api.apps.v1.StatefulSet': {
        'x-kubernetes-group-version-kind': [{ group: 'apps', kind: 'StatefulSet', version: 'v1' }],
        properties: { metadata: ref('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'), spec: ref('io.k8s.api.apps.v1.StatefulSetSpec') }
      },
      'io.k8s.api.apps.v1.Deployment': {
        'x-kubernetes-group-version-kind': [{ group: 'apps', kind: 'Deployment', version: 'v1' }],
        properties: { metadata: ref('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'), spec: ref('io.k8s.api.apps.v1.DeploymentSpec') }
      },
      'io.k8s.api.apps.v1.StatefulSetSpec': {
        properties: { podManagementPolicy: { type: 'string' }, template: ref('io.k8s.api.core.v1.PodTemplateSpec'), volumeClaimTemplates: { type: 'array' } }
      },
      'io.k8s.api.apps.v1.DeploymentSpec': {
        properties: {
          strategy: ref('io.k8s.api.apps.v1.DeploymentStrategy', { 'x-kubernetes-patch-strategy': 'retainKeys' }),
          template: ref('io.k8s.api.core.v1.PodTemplateSpec')
        }
      },
      'io.k8s.api.apps.v1.DeploymentStrategy': { properties: { type: { type: 'string' }, rollingUpdate: { type: 'object' } } },
      'io.k8s.api.core.v1.PodTemplateSpec': { properties: { spec: ref('io.k8s.api.core.v1.PodSpec') } },
      'io.k8s.api.core.v1.PodSpec': {
        properties: {
          containers: {
            type: 'array',
            items: ref('io.k8s.api.core.v1.Container'),
            'x-kubernetes-patch-merge-key': 'name',
            'x-kubernetes-patch-strategy': 'merge'
          },
          tolerations: { type: 'array', items: { type: 'object' } }
        }
      },
      'io.k8s.api.core.v1.Container': {
        properties: {
          args: { type: 'array', items: { type: 'string' } },
          env: { type: 'array', items: { type: 'object' }, 'x-kubernetes-patch-merge-key': 'name', 'x-kubernetes-patch-strategy': 'merge' }
        }
      },
      'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta': {
        properties: { finalizers: { type: 'array', items: { type: 'string' }, 'x-kubernetes-patch-strategy': 'merge' }, labels: { type: 'object' } }
      }
    }
  }
}

const statefulSet = (spec: object, metadata: object = {}): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name: 'db', ...metadata },
  spec
})
const withContainers = (containers: object[]): object => ({ template: { spec: { containers } } })

test('the schema: found by group/version/kind, a field behind allOf $ref, a merged list and its key', () => {
  const sts = patchSchemaOf(appsV1, 'apps/v1', 'StatefulSet')
  const containers = sts?.field('spec')?.field('template')?.field('spec')?.field('containers')
  expect(containers).toMatchObject({ strategies: ['merge'], mergeKey: 'name' })
  expect(containers?.items()?.field('env')).toMatchObject({ strategies: ['merge'], mergeKey: 'name' })
  expect(sts?.field('spec')?.field('volumeClaimTemplates')).toMatchObject({ strategies: [] })
  expect(patchSchemaOf(appsV1, 'apps/v1', 'DaemonSet')).toBeUndefined()
  expect(patchSchemaOf(appsV1, 'v1', 'StatefulSet')).toBeUndefined()
})

test('a field the previous version set and the new one drops: null in the patch, named as removed; rendered fields all set', () => {
  const schema = patchSchemaOf(appsV1, 'apps/v1', 'StatefulSet')
  const original = statefulSet({ replicas: 1, podManagementPolicy: 'Parallel' })
  const modified = statefulSet({ replicas: 2 })
  const { patch, removed } = helm3Patch(original, modified, 'strategic', schema)
  expect(patch).toEqual({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'db' }, spec: { replicas: 2, podManagementPolicy: null } })
  expect(removed).toEqual([{ path: 'spec.podManagementPolicy', before: 'Parallel' }])
  // Control: with no previous version (an object new to the release) nothing is removed.
  expect(helm3Patch(undefined, modified, 'strategic', schema)).toEqual({ patch: modified, removed: [] })
})

test('merged lists: a dropped container and env var deleted by their key, a kept one merged; a plain list sent whole', () => {
  const schema = patchSchemaOf(appsV1, 'apps/v1', 'StatefulSet')
  const original = statefulSet(
    withContainers([
      {
        name: 'db',
        args: ['-a', '-b'],
        env: [
          { name: 'DEBUG', value: '1' },
          { name: 'MODE', value: 'x' }
        ]
      },
      { name: 'sidecar', image: 's:1' }
    ])
  )
  const modified = statefulSet(withContainers([{ name: 'db', args: ['-a'], env: [{ name: 'MODE', value: 'y' }] }]))
  const { patch, removed } = helm3Patch(original, modified, 'strategic', schema)
  expect(patch.spec).toEqual(
    withContainers([
      {
        name: 'db',
        args: ['-a'],
        env: [
          { name: 'MODE', value: 'y' },
          { name: 'DEBUG', $patch: 'delete' }
        ]
      },
      { name: 'sidecar', $patch: 'delete' }
    ])
  )
  expect(removed.map((r) => r.path)).toEqual(['spec.template.spec.containers[db].env[DEBUG]', 'spec.template.spec.containers[sidecar]'])
})

test('a JSON merge patch (custom resources): nulls for dropped keys, lists replaced, no strategic directives', () => {
  const schema = patchSchemaOf(appsV1, 'apps/v1', 'StatefulSet')
  const original = statefulSet(withContainers([{ name: 'db' }, { name: 'sidecar' }]), { labels: { a: '1', b: '2' } })
  const modified = statefulSet(withContainers([{ name: 'db' }]), { labels: { a: '1' } })
  const { patch } = helm3Patch(original, modified, 'merge', schema)
  expect(patch).toEqual({ ...modified, metadata: { name: 'db', labels: { a: '1', b: null } } })
})

test('retainKeys (a Deployment strategy from RollingUpdate to Recreate) and a merged list of plain values (finalizers)', () => {
  const schema = patchSchemaOf(appsV1, 'apps/v1', 'Deployment')
  const deployment = (strategy: object, finalizers: string[]): KubeObject => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', finalizers },
    spec: { strategy }
  })
  const { patch, removed } = helm3Patch(
    deployment({ type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } }, ['a', 'b']),
    deployment({ type: 'Recreate' }, ['a']),
    'strategic',
    schema
  )
  expect(patch).toEqual({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', finalizers: ['a'], '$deleteFromPrimitiveList/finalizers': ['b'] },
    spec: { strategy: { type: 'Recreate', rollingUpdate: null, $retainKeys: ['type'] } }
  })
  expect(removed.map((r) => r.path)).toEqual(['metadata.finalizers[b]', 'spec.strategy.rollingUpdate'])
})

test('without a schema (no OpenAPI document): maps still lose dropped keys, lists are sent whole', () => {
  const original = statefulSet({ podManagementPolicy: 'Parallel', ...withContainers([{ name: 'db' }, { name: 'sidecar' }]) })
  const modified = statefulSet(withContainers([{ name: 'db' }]))
  expect(helm3Patch(original, modified, 'strategic').patch.spec).toEqual({ podManagementPolicy: null, ...withContainers([{ name: 'db' }]) })
})

test('a StatefulSet refused for a field the chart dropped: immutable, the removed field named before → removed', () => {
  const message = `Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden`
  const body = JSON.stringify({
    kind: 'Status',
    code: 422,
    reason: 'Invalid',
    message: `StatefulSet.apps "db" is invalid: spec: ${message}`,
    details: { causes: [{ reason: 'FieldValueForbidden', message, field: 'spec' }] }
  })
  const live = statefulSet({ replicas: 1, podManagementPolicy: 'Parallel' })
  const rendered = statefulSet({ replicas: 1 })
  const verdict = classifyRefusal({ status: 422, body }, live, rendered, [{ path: 'spec.podManagementPolicy', before: 'Parallel' }])
  expect(verdict).toMatchObject({ kind: 'immutable', fields: ['spec.podManagementPolicy: Parallel → removed'] })
  // Control: without the removed field, the rendered object alone shows no change under spec.
  expect(classifyRefusal({ status: 422, body }, live, rendered)).toMatchObject({ kind: 'immutable', fields: ['spec'] })
})
