// Jobs: a pod template change that pre clears (the deploy runs pre, then the upgrade applies), a
// new Job, and Jobs outside pre's scope: one another controller runs (spec.managedBy) and one in
// another namespace than pre's. Last, a Job another field manager changed (a conflict for Helm 4).
import { kubectlOk } from '../commands.ts'
import { onBoth, reads, type Group } from '../harness.ts'
import { settingsConfigMap } from '../templates.ts'

const job = (name: string, image: string, extra = ''): string => `apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-${name}
  labels:
    app.kubernetes.io/component: ${name}
${extra}spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: ${name}
          image: {{ .Values.${image} }}
`

const templates = {
  'migrate.yaml': job('migrate', 'migrateImage'),
  // Another controller runs it: Kubernetes' Job controller leaves it unfinished, and pre never deletes it.
  'external.yaml': job('external', 'externalImage').replace('  backoffLimit: 0\n', '  backoffLimit: 0\n  managedBy: example.com/batch-runner\n'),
  'remote.yaml': job('remote', 'remoteImage').replace('  labels:', '  namespace: {{ .Values.remoteNamespace }}\n  labels:'),
  'seed.yaml': `{{- if .Values.seed }}\n${job('seed', 'seedImage')}{{- end }}\n`,
  'configmap.yaml': settingsConfigMap
}

const immutableJob = (name: string): RegExp => new RegExp(`Job\\.batch "app-${name}" is invalid: spec\\.template: .*field is immutable`)

export const jobs: Group = {
  title: 'Jobs, in and out of pre’s scope',
  prefix: 'diff-jobs',
  chart: () => ({ templates }),
  releases: [
    {
      name: 'app',
      values: (env) => ({
        migrateImage: 'example.invalid/migrate:1',
        externalImage: 'example.invalid/external:1',
        remoteImage: 'example.invalid/remote:1',
        remoteNamespace: env.otherNs,
        seed: false,
        seedImage: 'example.invalid/seed:1',
        level: '1'
      })
    }
  ],
  scenarios: [
    {
      name: "a Job's pod template (pre clears it, then the upgrade applies)",
      values: { migrateImage: 'example.invalid/migrate:2' },
      helm: onBoth('applies'),
      // The Job was created anew: a pod template cannot change in place.
      applied: reads('job', 'app-migrate', '.spec.template.spec.containers[0].image', 'example.invalid/migrate:2')
    },
    { name: 'control: a new Job', values: { seed: true }, helm: onBoth('applies') },
    {
      name: 'the pod template of a Job another controller runs (spec.managedBy), which pre leaves',
      values: { externalImage: 'example.invalid/external:2' },
      helm: onBoth(immutableJob('external'))
    },
    {
      name: "the pod template of a Job in another namespace than pre's",
      values: { remoteImage: 'example.invalid/remote:2' },
      helm: onBoth(immutableJob('remote'))
    },
    {
      // Last: on Helm 4 the conflict stays until pre clears the Job.
      name: 'a label of a Job that another field manager changed (kubectl label)',
      before: async (env) => void (await kubectlOk('label', 'job', 'app-migrate', '-n', env.ns, '--overwrite', 'app.kubernetes.io/component=database')),
      values: { level: '2' },
      helm: onBoth('applies')
    }
  ]
}
