// Helm 3's patch for an object that exists (three-way.ts: client-go's CreateThreeWayMergePatch of
// the previous version, the rendered one and the live object), over a patch schema read from an
// OpenAPI v3 document shaped as the API server serves it (patch-schema.ts): what the chart drops
// is removed, what differs from the live object is set, and nothing else is sent. Each expected
// patch below is the one client-go's own code (k8s.io/apimachinery v0.37.2) makes of the same
// three objects; the differential suite then runs the real Helm 3 on such charts.
import type { KubeObject } from '../../src/kube/manifest-client.ts'
import { classifyRefusal } from '../../src/preflight/classify.ts'
import { patchSchemaOf, type OpenApiDocument } from '../../src/preflight/patch-schema.ts'
import { helm3Patch, HelmRefuses, Unmatched } from '../../src/preflight/three-way.ts'

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
          env: { type: 'array', items: { type: 'object' }, 'x-kubernetes-patch-merge-key': 'name', 'x-kubernetes-patch-strategy': 'merge' },
          ports: { type: 'array', items: { type: 'object' }, 'x-kubernetes-patch-merge-key': 'containerPort', 'x-kubernetes-patch-strategy': 'merge' }
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
const deployment = (containers: object[]): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web' },
  spec: { template: { spec: { containers } } }
})
const withContainers = (containers: object[]): object => ({ template: { spec: { containers } } })
/** The object as the API server keeps it: what the chart wrote and the server's own fields. */
const live = (o: KubeObject): KubeObject => ({ ...o, metadata: { ...o.metadata, uid: 'u1', resourceVersion: '7' }, status: { replicas: 1 } })
const sts = patchSchemaOf(appsV1, 'apps/v1', 'StatefulSet')
const deploymentSchema = patchSchemaOf(appsV1, 'apps/v1', 'Deployment')

/** One containerPort on TCP and UDP, as gossip ports are declared (a widely used dashboard chart's StatefulSet). */
const gossip = [
  { name: 'http', containerPort: 8080, protocol: 'TCP' },
  { name: 'gossip-tcp', containerPort: 9094, protocol: 'TCP' },
  { name: 'gossip-udp', containerPort: 9094, protocol: 'UDP' }
]
const app = (image: string, ports: object[]): object => ({ name: 'app', image, ports })

test('the schema: found by group/version/kind, a field behind allOf $ref, a merged list and its key', () => {
  const containers = sts?.field('spec')?.field('template')?.field('spec')?.field('containers')
  expect(containers).toMatchObject({ strategies: ['merge'], mergeKey: 'name' })
  expect(containers?.items()?.field('env')).toMatchObject({ strategies: ['merge'], mergeKey: 'name' })
  expect(containers?.items()?.field('ports')).toMatchObject({ strategies: ['merge'], mergeKey: 'containerPort' })
  expect(sts?.field('spec')?.field('volumeClaimTemplates')).toMatchObject({ strategies: [] })
  expect(patchSchemaOf(appsV1, 'apps/v1', 'DaemonSet')).toBeUndefined()
  expect(patchSchemaOf(appsV1, 'v1', 'StatefulSet')).toBeUndefined()
})

test('a field the chart drops: null, named as removed; of what it renders, only what differs from the live object is sent', () => {
  const original = statefulSet({ replicas: 1, podManagementPolicy: 'Parallel' })
  const { patch, removed } = helm3Patch(original, statefulSet({ replicas: 2 }), live(original), sts)
  expect(patch).toEqual({ spec: { replicas: 2, podManagementPolicy: null } })
  expect(removed).toEqual([{ path: 'spec.podManagementPolicy', before: 'Parallel' }])
  // Control: the same rendering over a live object that already has it: no patch (Helm sends none).
  expect(helm3Patch(statefulSet({ replicas: 2 }), statefulSet({ replicas: 2 }), live(statefulSet({ replicas: 2 })), sts)).toEqual({ patch: {}, removed: [] })
  // Drift: the live object differs where the chart did not change: the rendered value is sent back.
  expect(helm3Patch(statefulSet({ replicas: 2 }), statefulSet({ replicas: 2 }), live(statefulSet({ replicas: 5 })), sts).patch).toEqual({
    spec: { replicas: 2 }
  })
  // An object new to the release (no previous version): nothing is removed.
  expect(helm3Patch(undefined, statefulSet({ replicas: 2 }), live(original), sts)).toEqual({ patch: { spec: { replicas: 2 } }, removed: [] })
})

test('merged lists: a dropped container and env var deleted by their key, a kept one merged, with their order; a plain list sent whole', () => {
  const before = statefulSet(
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
  const { patch, removed } = helm3Patch(before, modified, live(before), sts)
  expect(patch).toEqual({
    spec: {
      template: {
        spec: {
          '$setElementOrder/containers': [{ name: 'db' }],
          containers: [
            {
              name: 'db',
              args: ['-a'],
              '$setElementOrder/env': [{ name: 'MODE' }],
              env: [
                { name: 'MODE', value: 'y' },
                { name: 'DEBUG', $patch: 'delete' }
              ]
            },
            { name: 'sidecar', $patch: 'delete' }
          ]
        }
      }
    }
  })
  expect(removed.map((r) => r.path)).toEqual(['spec.template.spec.containers[db].env[DEBUG]', 'spec.template.spec.containers[sidecar]'])
})

test('retainKeys (a Deployment strategy from RollingUpdate to Recreate) and a merged list of plain values (finalizers)', () => {
  const deploymentOf = (strategy: object, finalizers: string[]): KubeObject => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', finalizers },
    spec: { strategy }
  })
  const before = deploymentOf({ type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } }, ['a', 'b'])
  const { patch, removed } = helm3Patch(before, deploymentOf({ type: 'Recreate' }, ['a']), live(before), deploymentSchema)
  expect(patch).toEqual({
    metadata: { '$deleteFromPrimitiveList/finalizers': ['b'], '$setElementOrder/finalizers': ['a'] },
    spec: { strategy: { type: 'Recreate', rollingUpdate: null, $retainKeys: ['type'] } }
  })
  expect(removed.map((r) => r.path)).toEqual(['metadata.finalizers[b]', 'spec.strategy.rollingUpdate'])
})

describe('one containerPort on TCP and UDP (merged by containerPort alone): the patch Helm 3 sends', () => {
  const released = deployment([app('a:1', gossip)])
  test('unchanged: no patch at all, where sending the list whole made the API server see a duplicate name', () => {
    expect(helm3Patch(released, released, live(released), deploymentSchema).patch).toEqual({})
  })
  test('a new image: the image alone, the ports untouched', () => {
    expect(helm3Patch(released, deployment([app('a:2', gossip)]), live(released), deploymentSchema).patch).toEqual({
      spec: { template: { spec: { '$setElementOrder/containers': [{ name: 'app' }], containers: [{ name: 'app', image: 'a:2' }] } } }
    })
  })
  test('a port added: that port, and the order of all four with 9094 twice', () => {
    const metrics = { name: 'metrics', containerPort: 9100, protocol: 'TCP' }
    expect(helm3Patch(released, deployment([app('a:1', [...gossip, metrics])]), live(released), deploymentSchema).patch).toEqual({
      spec: {
        template: {
          spec: {
            '$setElementOrder/containers': [{ name: 'app' }],
            containers: [
              {
                name: 'app',
                '$setElementOrder/ports': [{ containerPort: 8080 }, { containerPort: 9094 }, { containerPort: 9094 }, { containerPort: 9100 }],
                ports: [metrics]
              }
            ]
          }
        }
      }
    })
  })
  test('the UDP port removed: Go pairs the duplicates in reverse, so the delete directive carries the TCP port (and deletes both 9094s)', () => {
    const { patch, removed } = helm3Patch(released, deployment([app('a:1', gossip.slice(0, 2))]), live(released), deploymentSchema)
    expect(patch).toEqual({
      spec: {
        template: {
          spec: {
            '$setElementOrder/containers': [{ name: 'app' }],
            containers: [
              {
                name: 'app',
                '$setElementOrder/ports': [{ containerPort: 8080 }, { containerPort: 9094 }],
                ports: [{ containerPort: 9094, $patch: 'delete', name: 'gossip-tcp', protocol: 'TCP' }]
              }
            ]
          }
        }
      }
    })
    expect(removed).toEqual([{ path: 'spec.template.spec.containers[app].ports[9094]', before: gossip[1] }])
  })
  test("two items of one key apart in the list, changed with a field dropped beside them: Go's patch code fails (failed to create patch)", () => {
    const apart = deployment([{ ...app('a:1', [gossip[1], gossip[0], gossip[2]]), args: ['-v'] }])
    const renamed = deployment([
      app('a:1', [
        { ...gossip[1], name: 'g-tcp' },
        { ...gossip[0], name: 'web' },
        { ...gossip[2], name: 'g-udp' }
      ])
    ])
    expect(() => helm3Patch(apart, renamed, live(apart), deploymentSchema)).toThrow(HelmRefuses)
    expect(() => helm3Patch(apart, renamed, live(apart), deploymentSchema)).toThrow(
      "the order in the patch list of ports doesn't match its $setElementOrder list"
    )
    // Control: the same change with the duplicates side by side goes through.
    const together = deployment([{ ...app('a:1', gossip), args: ['-v'] }])
    const renamedTogether = deployment([
      app('a:1', [
        { ...gossip[0], name: 'web' },
        { ...gossip[1], name: 'g-tcp' },
        { ...gossip[2], name: 'g-udp' }
      ])
    ])
    expect(() => helm3Patch(together, renamedTogether, live(together), deploymentSchema)).not.toThrow()
  })
  test("more than 12 items with a repeated key: Go's unstable sort decides, so the patch is not claimed (Unmatched)", () => {
    const env = Array.from({ length: 13 }, (_, i) => ({ name: i === 12 ? 'V0' : `V${i}`, value: '1' }))
    const many = deployment([{ name: 'app', image: 'a:1', env }])
    const changed = deployment([{ name: 'app', image: 'a:1', env: env.map((e, i) => (i === 12 ? { ...e, value: '2' } : e)) }])
    expect(() => helm3Patch(many, changed, live(many), deploymentSchema)).toThrow(Unmatched)
    // Control: 13 items with distinct keys: any sort agrees.
    const distinct = env.map((e, i) => ({ ...e, name: `V${i}` }))
    expect(() =>
      helm3Patch(
        deployment([{ name: 'app', env: distinct }]),
        deployment([{ name: 'app', env: distinct.slice(1) }]),
        live(deployment([{ name: 'app', env: distinct }])),
        deploymentSchema
      )
    ).not.toThrow()
  })
})

test('without a schema (no OpenAPI document): maps still lose dropped keys, a list that differs is sent whole', () => {
  const original = statefulSet({ podManagementPolicy: 'Parallel', ...withContainers([{ name: 'db' }, { name: 'sidecar' }]) })
  const modified = statefulSet(withContainers([{ name: 'db' }]))
  expect(helm3Patch(original, modified, live(original)).patch).toEqual({ spec: { podManagementPolicy: null, ...withContainers([{ name: 'db' }]) } })
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
  const current = statefulSet({ replicas: 1, podManagementPolicy: 'Parallel' })
  const rendered = statefulSet({ replicas: 1 })
  const verdict = classifyRefusal({ status: 422, body }, current, rendered, [{ path: 'spec.podManagementPolicy', before: 'Parallel' }])
  expect(verdict).toMatchObject({ kind: 'immutable', fields: ['spec.podManagementPolicy: Parallel → removed'] })
  // Control: without the removed field, the rendered object alone shows no change under spec.
  expect(classifyRefusal({ status: 422, body }, current, rendered)).toMatchObject({ kind: 'immutable', fields: ['spec'] })
})
