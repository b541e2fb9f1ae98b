// Fields the API server refuses to change once set (one change each, one release for all: a
// failed upgrade changes nothing, and the next one starts from the last deployed revision), and
// the plain changes it accepts: the positive controls.
import { kubectlOk } from '../commands.ts'
import { onBoth, reads, type Group, type Outcome } from '../harness.ts'
import { settingsConfigMap } from '../templates.ts'

const invalid = (kind: string, name: string, what: RegExp | string): RegExp =>
  new RegExp(`${kind}(\\.[\\w.]+)? "app-${name}" is invalid: .*${typeof what === 'string' ? what : what.source}`)

/** A StatefulSet field an update may not change: on Helm 3's set the error says `spec: Forbidden`, on Helm 4's it names the field. */
const statefulSetRefuses = (field: string): Record<3 | 4, Outcome> => ({
  3: invalid('StatefulSet', 'db', 'spec: Forbidden'),
  4: invalid('StatefulSet', 'db', field)
})

const templates = {
  'configmaps.yaml': `${settingsConfigMap}---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-frozen
immutable: true
data:
  version: {{ .Values.frozen | quote }}
`,
  'secrets.yaml': `apiVersion: v1
kind: Secret
metadata:
  name: {{ .Release.Name }}-credentials
type: Opaque
data:
  password: {{ .Values.password | b64enc }}
---
apiVersion: v1
kind: Secret
metadata:
  name: {{ .Release.Name }}-frozen-key
type: Opaque
immutable: true
stringData:
  key: {{ .Values.frozenKey | quote }}
`,
  'deployment.yaml': `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-web
  labels:
    example.com/team: {{ .Values.team | quote }}
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels:
      app: {{ .Release.Name }}-web
      {{- with .Values.selectorTier }}
      tier: {{ . }}
      {{- end }}
  template:
    metadata:
      labels:
        app: {{ .Release.Name }}-web
        {{- with .Values.selectorTier }}
        tier: {{ . }}
        {{- end }}
    spec:
      containers:
        - name: web
          image: {{ .Values.image }}
`,
  'statefulset.yaml': `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: {{ .Release.Name }}-db
spec:
  serviceName: {{ .Values.serviceName | default (printf "%s-db-headless" .Release.Name) }}
  replicas: 1
  podManagementPolicy: {{ .Values.podManagementPolicy }}
  selector:
    matchLabels:
      app: {{ .Release.Name }}-db
      {{- with .Values.shard }}
      shard: {{ . | quote }}
      {{- end }}
  template:
    metadata:
      labels:
        app: {{ .Release.Name }}-db
        {{- with .Values.shard }}
        shard: {{ . | quote }}
        {{- end }}
    spec:
      containers:
        - name: db
          image: example.invalid/db:1
  volumeClaimTemplates:
    - metadata:
        name: data
      spec:
        accessModes: [ReadWriteOnce]
        resources:
          requests:
            storage: {{ .Values.storage }}
`,
  'services.yaml': `apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}-api
spec:
  {{- with .Values.apiClusterIP }}
  clusterIP: {{ . }}
  {{- end }}
  selector: {app: {{ .Release.Name }}-web}
  ports: [{port: 80}]
---
apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}-db-headless
spec:
  type: {{ .Values.headlessType }}
  clusterIP: None
  selector: {app: {{ .Release.Name }}-db}
  ports: [{port: 5432}]
---
apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}-front
spec:
  type: {{ .Values.frontType }}
  selector: {app: {{ .Release.Name }}-web}
  ports: [{port: 8080}]
`,
  'pvcs.yaml': `apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: {{ .Release.Name }}-cache
spec:
  storageClassName: {{ .Values.cacheClass }}
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: {{ .Release.Name }}-scratch
spec:
  {{- with .Values.scratchClass }}
  storageClassName: {{ . }}
  {{- end }}
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
`,
  'rbac.yaml': `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ .Release.Name }}-reader
rules: [{apiGroups: [""], resources: [configmaps], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ .Release.Name }}-writer
rules: [{apiGroups: [""], resources: [configmaps], verbs: [get, update]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ .Release.Name }}-binding
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: {{ .Release.Name }}-{{ .Values.role }}}
subjects: [{kind: ServiceAccount, name: default, namespace: {{ .Release.Namespace }}}]
`
}

/** A cluster IP of the service range other than the one the API server gave app-api. */
async function anotherClusterIP(ns: string): Promise<string> {
  const ip = (await kubectlOk('get', 'service', 'app-api', '-n', ns, '-o', 'jsonpath={.spec.clusterIP}')).trim()
  const [a, b, c, d] = ip.split('.').map(Number)
  return [a, b, c, d < 250 ? d + 1 : d - 1].join('.')
}

export const fields: Group = {
  title: 'immutable fields and accepted changes',
  prefix: 'diff-fields',
  chart: () => ({ templates }),
  releases: [
    {
      name: 'app',
      values: () => ({
        level: '1',
        frozen: '1',
        password: 'pw-1',
        frozenKey: 'k1',
        team: 'a',
        replicas: 1,
        selectorTier: '',
        image: 'example.invalid/web:1',
        serviceName: '',
        podManagementPolicy: 'OrderedReady',
        shard: '',
        storage: '1Gi',
        apiClusterIP: '',
        headlessType: 'ClusterIP',
        frontType: 'ClusterIP',
        cacheClass: 'standard',
        scratchClass: '',
        role: 'reader'
      })
    }
  ],
  // The PVCs carry kubernetes.io/pvc-protection, which no controller here removes: without this their namespace never goes.
  teardown: async (env) => {
    await kubectlOk('patch', 'pvc', 'app-cache', 'app-scratch', '-n', env.ns, '--type', 'merge', '-p', '{"metadata":{"finalizers":null}}')
  },
  scenarios: [
    {
      name: "a Deployment's selector gains a label",
      values: { selectorTier: 'front' },
      helm: onBoth(invalid('Deployment', 'web', 'field is immutable'))
    },
    {
      name: "a StatefulSet's volumeClaimTemplates size",
      values: { storage: '2Gi' },
      helm: statefulSetRefuses('volumeClaimTemplates')
    },
    {
      name: "a StatefulSet's serviceName",
      values: { serviceName: 'app-db-peers' },
      helm: statefulSetRefuses('serviceName')
    },
    {
      name: "a StatefulSet's podManagementPolicy",
      values: { podManagementPolicy: 'Parallel' },
      helm: statefulSetRefuses('podManagementPolicy')
    },
    {
      name: "a StatefulSet's selector",
      values: { shard: 'a' },
      helm: statefulSetRefuses('selector')
    },
    {
      name: "a Service's clusterIP",
      values: async (env) => ({ apiClusterIP: await anotherClusterIP(env.ns) }),
      helm: onBoth(invalid('Service', 'api', 'may not change once set'))
    },
    {
      name: 'a headless Service becomes NodePort',
      values: { headlessType: 'NodePort' },
      helm: onBoth(invalid('Service', 'db-headless', "may not be set to 'None'"))
    },
    {
      name: "a PVC's storageClassName, from one class to another",
      values: { cacheClass: 'fast' },
      helm: onBoth(invalid('PersistentVolumeClaim', 'cache', 'spec is immutable'))
    },
    {
      name: "a RoleBinding's roleRef",
      values: { role: 'writer' },
      // Kubernetes 1.34 says `cannot change roleRef`, 1.37 `field is immutable`.
      helm: { 3: invalid('RoleBinding', 'binding', 'roleRef: .*cannot change roleRef'), 4: invalid('RoleBinding', 'binding', 'roleRef: .*field is immutable') }
    },
    {
      name: 'an immutable ConfigMap whose data changes',
      values: { frozen: '2' },
      helm: onBoth(invalid('ConfigMap', 'frozen', 'field is immutable when `immutable` is set'))
    },
    {
      name: 'an immutable Secret whose data changes',
      values: { frozenKey: 'k2' },
      helm: onBoth(invalid('Secret', 'frozen-key', 'field is immutable when `immutable` is set'))
    },
    {
      // Kubernetes lets an unbound claim without a class get one (RetroactiveDefaultStorageClass, GA
      // in 1.28). It applies, and stays applied: with the controls, after every refused change.
      name: "a PVC's storageClassName, from unset to a class (an unbound claim)",
      values: { scratchClass: 'fast' },
      helm: onBoth('applies'),
      applied: reads('pvc', 'app-scratch', '.spec.storageClassName', 'fast')
    },
    { name: "control: a ConfigMap's data", values: { level: '2' }, helm: onBoth('applies') },
    { name: "control: a Deployment's replicas", values: { replicas: 2 }, helm: onBoth('applies') },
    { name: "control: a Deployment's image", values: { image: 'example.invalid/web:2' }, helm: onBoth('applies') },
    { name: "control: a Deployment's label", values: { team: 'b' }, helm: onBoth('applies') },
    { name: "control: a Secret's password", values: { password: 'pw-2' }, helm: onBoth('applies') },
    { name: 'control: a Service from ClusterIP to NodePort', values: { frontType: 'NodePort' }, helm: onBoth('applies') }
  ]
}
