// Lists whose strategic-merge-patch key repeats in real charts (issue 33): one containerPort on TCP
// and on UDP (gossip ports: `9094/TCP` and `9094/UDP`, as a widely used dashboard chart's
// StatefulSet declares them), a Service's port on both protocols, an env var a chart sets twice,
// two hostAliases of one ip (those two for Helm 3 only: Helm 4's server-side apply refuses a list
// map with a repeated key, `duplicate entries for key [name="MODE"]`, at install already). Helm 3 pairs such items as client-go's three-way patch does, and the
// patch it sends leaves them alone unless they change; a patch that sent the lists whole had the
// API server merge the UDP port into the TCP one (`Duplicate value: "gossip-udp"`). Rendered as the
// upgrade renders (helm upgrade --dry-run=server), and run against the real Helm 3 and Helm 4.
import { helmMajor } from '../../cluster/testenv.ts'
import { kubectlOk } from '../commands.ts'
import { onBoth, type Group } from '../harness.ts'

const ports = `          ports:
            - {name: http, containerPort: 8080, protocol: TCP}
            - {name: gossip-tcp, containerPort: 9094, protocol: TCP}
            {{- if .Values.udp }}
            - {name: gossip-udp, containerPort: 9094, protocol: UDP}
            {{- end }}
            {{- if .Values.metrics }}
            - {name: metrics, containerPort: 9100, protocol: TCP}
            {{- end }}`

const selector = (name: string): string => `  selector:
    matchLabels:
      app: {{ .Release.Name }}-${name}
      {{- with .Values.selectorTier }}
      tier: {{ . }}
      {{- end }}
  template:
    metadata:
      labels:
        app: {{ .Release.Name }}-${name}
        {{- with .Values.selectorTier }}
        tier: {{ . }}
        {{- end }}
      {{- with .Values.note }}
      annotations:
        example.com/note: {{ . | quote }}
      {{- end }}`

const templates = {
  'deployment.yaml': `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-ledger-api
spec:
  replicas: 1
${selector('ledger-api')}
    spec:
      hostAliases:
        - {ip: 127.0.0.1, hostnames: [ledger.local]}
        {{- if .Values.twice }}
        - {ip: 127.0.0.1, hostnames: [ledger-peers.local]}
        {{- end }}
      containers:
        - name: app
          image: {{ .Values.image }}
          env:
            {{- if .Values.twice }}
            - {name: MODE, value: default}
            {{- end }}
            - {name: MODE, value: {{ .Values.mode | quote }}}
${ports}
`,
  'statefulset.yaml': `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: {{ .Release.Name }}-ledger
spec:
  serviceName: {{ .Release.Name }}-dns
  replicas: 1
${selector('ledger')}
    spec:
      containers:
        - name: app
          image: {{ .Values.image }}
${ports}
`,
  // The release's migration: a new image changes its pod template, which pre clears before the upgrade.
  'migrate.yaml': `apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-ledger-migrate
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: migrate
          image: {{ .Values.image }}
`,
  'service.yaml': `apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}-dns
spec:
  selector: {app: {{ .Release.Name }}-ledger}
  ports:
    - {name: dns-tcp, port: 53, protocol: TCP}
    {{- if .Values.udp }}
    - {name: dns-udp, port: 53, protocol: UDP}
    {{- end }}
`
}

/** The container ports of a workload as the cluster holds them after the upgrade: `8080/TCP 9094/TCP …`. */
async function livePorts(ns: string, kind: string, name: string): Promise<string> {
  const out = await kubectlOk(
    'get',
    kind,
    name,
    '-n',
    ns,
    '-o',
    'jsonpath={range .spec.template.spec.containers[0].ports[*]}{.containerPort}/{.protocol} {end}'
  )
  return out.trim()
}

/** After the upgrade: both workloads hold exactly these ports. */
const holdPorts =
  (expected: string) =>
  async (env: { ns: string }): Promise<string | undefined> => {
    for (const [kind, name] of [
      ['deployment', 'app-ledger-api'],
      ['statefulset', 'app-ledger']
    ]) {
      const live = await livePorts(env.ns, kind, name)
      if (live !== expected) return `${kind} ${name} has ports '${live}', not '${expected}'`
    }
    return undefined
  }

const both = '8080/TCP 9094/TCP 9094/UDP'

export const sharedKeys: Group = {
  title: 'lists whose merge key repeats: a port on TCP and UDP, an env var set twice',
  prefix: 'diff-keys',
  exactRendering: true,
  chart: () => ({ templates }),
  releases: [
    {
      name: 'app',
      values: () => ({ image: 'example.invalid/ledger:1', mode: 'a', note: '', udp: true, metrics: false, selectorTier: '', twice: helmMajor() === 3 })
    }
  ],
  scenarios: [
    { name: 'unchanged: the same values again', values: {}, helm: onBoth('applies'), applied: holdPorts(both) },
    {
      name: 'a new image (the migration Job’s too: pre clears it and goes on)',
      values: { image: 'example.invalid/ledger:2' },
      helm: onBoth('applies'),
      preRuns: true,
      applied: holdPorts(both)
    },
    { name: 'an annotation of the pod template', values: { note: 'rolled' }, helm: onBoth('applies'), applied: holdPorts(both) },
    { name: 'the env var set twice: its second value changes', values: { mode: 'b' }, helm: onBoth('applies'), applied: holdPorts(both) },
    { name: 'a port added beside the TCP/UDP pair', values: { metrics: true }, helm: onBoth('applies'), applied: holdPorts(`${both} 9100/TCP`) },
    { name: 'that port removed again', values: { metrics: false }, helm: onBoth('applies'), applied: holdPorts(both) },
    {
      name: "still refused: a Deployment's selector gains a label (the StatefulSet's too)",
      values: { selectorTier: 'front' },
      helm: onBoth(/Deployment\.apps "app-ledger-api" is invalid: .*field is immutable|StatefulSet\.apps "app-ledger" is invalid/)
    },
    {
      // Helm 3 pairs the two 9094s (and 53s) in reverse, so its delete directive carries the TCP
      // port's key, and the API server deletes every item of that key: the Service is left with no
      // port at all, which it refuses. Helm 4's server-side apply keys ports by port and protocol.
      name: 'the UDP port removed from the pair (and the Service’s 53/UDP): Helm 3 deletes both, and the Service refuses to have none',
      values: { udp: false },
      helm: { 3: /cannot patch "app-dns" with kind Service: Service "app-dns" is invalid: spec\.ports: Required value/, 4: 'applies' }
    }
  ]
}
