// templateDiff: the summary's account of how a rendered pod template differs from the live one.
import type { V1Container, V1PodTemplateSpec } from '@kubernetes/client-node'
import { summarizeChanges, templateDiff } from '../../src/observe/template-diff.ts'

const migrate = (over: Partial<V1Container> = {}): V1Container => ({
  name: 'migrate-database',
  image: 'registry.example/ledger:1.1',
  args: ['migrate', 'up'],
  env: [{ name: 'DB_HOST', value: 'db' }],
  ...over
})

function template(
  containers: V1Container[],
  extra: Partial<V1PodTemplateSpec['spec']> = {},
  labels: Record<string, string> = { app: 'ledger' }
): V1PodTemplateSpec {
  return { metadata: { labels }, spec: { restartPolicy: 'Never', containers, ...extra } }
}

/** The live Job's template as the API server returns it: defaults filled in, generated labels added. */
function live(
  containers: V1Container[],
  extra: Partial<V1PodTemplateSpec['spec']> = {},
  labels: Record<string, string> = { app: 'ledger' }
): V1PodTemplateSpec {
  const t = template(
    containers.map((c) => ({ imagePullPolicy: 'IfNotPresent', terminationMessagePath: '/dev/termination-log', resources: {}, ...c })),
    { dnsPolicy: 'ClusterFirst', schedulerName: 'default-scheduler', securityContext: {}, terminationGracePeriodSeconds: 30, ...extra },
    {
      ...labels,
      'batch.kubernetes.io/controller-uid': 'u-1',
      'batch.kubernetes.io/job-name': 'ledger-migrate',
      'controller-uid': 'u-1',
      'job-name': 'ledger-migrate'
    }
  )
  t.metadata = { ...t.metadata, creationTimestamp: undefined }
  return t
}

const cases: [string, V1PodTemplateSpec, V1PodTemplateSpec, string[]][] = [
  ['identical but for defaults and generated labels → no change', live([migrate()]), template([migrate()]), []],
  [
    'image tag → the image and the new tag',
    live([migrate()]),
    template([migrate({ image: 'registry.example/ledger:1.2' })]),
    ['containers[migrate-database].image: registry.example/ledger:1.1 → 1.2']
  ],
  [
    'image repository → both in full',
    live([migrate()]),
    template([migrate({ image: 'mirror.example/ledger:1.1' })]),
    ['containers[migrate-database].image: registry.example/ledger:1.1 → mirror.example/ledger:1.1']
  ],
  ['args', live([migrate()]), template([migrate({ args: ['migrate', 'down'] })]), ['containers[migrate-database].args: [migrate, up] → [migrate, down]']],
  ['command added', live([migrate()]), template([migrate({ command: ['/bin/ledger'] })]), ['containers[migrate-database].command: added ([/bin/ledger])']],
  ['command removed', live([migrate({ command: ['/bin/ledger'] })]), template([migrate()]), ['containers[migrate-database].command: removed']],
  [
    'env value, by name',
    live([migrate()]),
    template([migrate({ env: [{ name: 'DB_HOST', value: 'db2' }] })]),
    ['containers[migrate-database].env[DB_HOST]: db → db2']
  ],
  [
    'env added and removed, by name, whatever the order',
    live([
      migrate({
        env: [
          { name: 'A', value: '1' },
          { name: 'B', value: '2' }
        ]
      })
    ]),
    template([
      migrate({
        env: [
          { name: 'C', value: '3' },
          { name: 'A', value: '1' }
        ]
      })
    ]),
    ['containers[migrate-database].env[C]: added (3)', 'containers[migrate-database].env[B]: removed']
  ],
  [
    'env from a secret instead of a value',
    live([migrate()]),
    template([migrate({ env: [{ name: 'DB_HOST', valueFrom: { secretKeyRef: { name: 'db', key: 'h' } } }] })]),
    [
      'containers[migrate-database].env[DB_HOST].valueFrom: added ({"secretKeyRef":{"name":"db","key":"h"}})',
      'containers[migrate-database].env[DB_HOST].value: removed'
    ]
  ],
  [
    'containers by name: one added, one removed',
    live([migrate(), { name: 'sidecar', image: 'proxy:1' }]),
    template([migrate(), { name: 'wait-for-db', image: 'busybox:1' }]),
    ['containers[wait-for-db]: added', 'containers[sidecar]: removed']
  ],
  [
    'volumes by name: changed, added, removed',
    live([migrate()], {
      volumes: [
        { name: 'config', configMap: { name: 'ledger-1', defaultMode: 420 } },
        { name: 'tmp', emptyDir: {} }
      ]
    }),
    template([migrate()], {
      volumes: [
        { name: 'config', configMap: { name: 'ledger-2' } },
        { name: 'certs', secret: { secretName: 'tls' } }
      ]
    }),
    ['volumes[config].configMap.name: ledger-1 → ledger-2', 'volumes[certs]: added', 'volumes[tmp]: removed']
  ],
  ['template label', live([migrate()], {}, { app: 'ledger', tier: 'db' }), template([migrate()], {}, { app: 'ledger' }), ['metadata.labels[tier]: removed']],
  [
    'a pod spec field and a long value, cut',
    live([migrate()], { serviceAccountName: 'ledger' }),
    template([migrate()], { serviceAccountName: 'ledger-migrations-with-a-very-long-service-account-name' }),
    ['serviceAccountName: ledger → ledger-migrations-with-a-very-long-serv…']
  ],
  [
    'init containers by name',
    live([migrate()], { initContainers: [{ name: 'wait', image: 'busybox:1.36' }] }),
    template([migrate()], { initContainers: [{ name: 'wait', image: 'busybox:1.37' }] }),
    ['initContainers[wait].image: busybox:1.36 → 1.37']
  ]
]

test.each(cases)('%s', (_name, before, after, expected) => {
  expect(templateDiff(before, after)).toEqual(expected)
})

test.each([
  [[], ''],
  [['a'], 'a'],
  [['a', 'b', 'c'], 'a; b; c'],
  [['a', 'b', 'c', 'd', 'e'], 'a; b; c and 2 more']
])('summarizeChanges(%j) → %s', (changes, expected) => {
  expect(summarizeChanges(changes)).toBe(expected)
})
