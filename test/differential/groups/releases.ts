// What the release itself meets: a hook Job an earlier upgrade left, a revision left pending by a
// cancelled deploy, and objects the chart adds that exist already (unowned, another release's, or
// annotated for adoption).
import { eventually, helmAnnotations } from '../../cluster/testenv.ts'
import { FAIL_LABEL } from '../../cluster/kwok.ts'
import { helmAsync, kubectlWith, start } from '../commands.ts'
import { onBoth, type Group, type Release, type Values } from '../harness.ts'
import { settingsConfigMap, webDeployment } from '../templates.ts'

const hookJob = `apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-check
  annotations:
    helm.sh/hook: pre-upgrade
    {{- with .Values.deletePolicy }}
    helm.sh/hook-delete-policy: {{ . }}
    {{- end }}
spec:
  backoffLimit: 0
  template:
    metadata:
      labels:
        app.kubernetes.io/component: check
        {{- if .Values.hookFails }}
        ${FAIL_LABEL}: "true"
        {{- end }}
    spec:
      restartPolicy: Never
      containers:
        - name: check
          image: example.invalid/check:1
`

/** The previous upgrade, whose pre-upgrade hook Job fails (and stays, or not, by its delete policy). */
async function hookFailed(_env: unknown, release: Release): Promise<void> {
  const failed = await release.helm('upgrade', { ...release.deployed, hookFails: true, level: 'hook-fails' }, '--timeout', '90s')
  if (failed.code === 0 || !/check/.test(failed.stderr)) throw new Error(`the upgrade before was to fail on its hook: ${failed.code} ${failed.stderr}`)
}

export const hooks: Group = {
  title: 'hooks an earlier upgrade left',
  prefix: 'diff-hooks',
  chart: () => ({ templates: { 'configmap.yaml': settingsConfigMap, 'hook.yaml': hookJob } }),
  releases: [
    { name: 'kept', values: () => ({ level: '1', hookFails: false, deletePolicy: 'hook-succeeded' }) },
    { name: 'recreated', values: () => ({ level: '1', hookFails: false, deletePolicy: '' }) }
  ],
  scenarios: [
    {
      name: 'a failed hook Job with hook-delete-policy: hook-succeeded, left by the previous upgrade',
      release: 'kept',
      before: hookFailed,
      values: { hookFails: false, level: '2' },
      // Helm 4 applies hooks server-side too: it meets the kept Job's immutable pod template.
      helm: { 3: /kept-check.*already exists/s, 4: /kept-check.*spec\.template: .*field is immutable/s }
    },
    {
      name: 'control: a failed hook Job with the default policy (before-hook-creation)',
      release: 'recreated',
      before: hookFailed,
      values: { hookFails: false, level: '2' },
      helm: onBoth('applies')
    }
  ]
}

/** The status of the release's last revision, as helm history says it. */
async function lastStatus(release: Release): Promise<string | undefined> {
  const got = await helmAsync('history', release.name, '-n', release.namespace, '-o', 'json', '--max', '1')
  if (got.code !== 0) return undefined
  const revisions = JSON.parse(got.stdout) as { status: string }[]
  return revisions.at(-1)?.status
}

/**
 * A deploy cancelled mid-way: helm install|upgrade --wait on a Deployment that never becomes ready
 * (no Deployment controller runs here), killed with SIGKILL once its revision is pending.
 */
function cancelled(verb: 'install' | 'upgrade', status: string): (env: unknown, release: Release) => Promise<void> {
  return async (_env, release) => {
    const values: Values = { ...release.deployed, level: 'cancelled' }
    const deploy = start('helm', release.args(verb, values, '--wait', '--timeout', '10m'))
    try {
      await eventually(
        `release ${release.name} ${status}`,
        () => lastStatus(release),
        (s) => s === status,
        60_000
      )
    } finally {
      deploy.child.kill('SIGKILL')
      await deploy.done
    }
  }
}

/** Helm's refusal while the release's last revision is pending. */
const inProgress = /another operation \(install\/upgrade\/rollback\) is in progress/

export const pending: Group = {
  title: 'revisions left pending by a cancelled deploy',
  prefix: 'diff-pending',
  chart: () => ({ templates: { 'configmap.yaml': settingsConfigMap, 'deployment.yaml': webDeployment() } }),
  releases: [
    { name: 'upgrading', values: () => ({ level: '1' }) },
    { name: 'installing', values: () => ({ level: '1' }), install: false }
  ],
  scenarios: [
    {
      name: 'pending-upgrade: helm upgrade --wait killed, then the next upgrade',
      release: 'upgrading',
      before: cancelled('upgrade', 'pending-upgrade'),
      values: { level: '2' },
      helm: onBoth(inProgress)
    },
    {
      name: 'pending-install: helm install --wait killed, then an upgrade',
      release: 'installing',
      before: cancelled('install', 'pending-install'),
      values: { level: '2' },
      helm: onBoth(inProgress)
    }
  ]
}

const owned = (name: string): string => `{{- if .Values.${name} }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-${name}
data:
  owner: chart
{{- end }}
`

/** Creates ConfigMap app-<name> in the group's namespace with kubectl create, as another tool would. */
function existing(name: string, metadata: { labels?: Record<string, string>; annotations?: Record<string, string> }, data = { owner: 'chart' }) {
  return async (env: { ns: string }): Promise<void> =>
    void (await kubectlWith('create', [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `app-${name}`, namespace: env.ns, ...metadata }, data }]))
}

const helmOwned = (release: string, ns: string) => ({ labels: { 'app.kubernetes.io/managed-by': 'Helm' }, annotations: helmAnnotations(release, ns) })
const cannotImport = (name: string): RegExp =>
  new RegExp(`ConfigMap "app-${name}" in namespace "[\\w-]+" exists and cannot be imported into the current release`)

export const ownership: Group = {
  title: 'objects the chart adds that exist already',
  prefix: 'diff-owner',
  chart: () => ({ templates: { 'configmap.yaml': settingsConfigMap + ['unowned', 'foreign', 'adopted', 'differs'].map(owned).join('') } }),
  releases: [{ name: 'app', values: () => ({ level: '1', unowned: false, foreign: false, adopted: false, differs: false }) }],
  scenarios: [
    {
      name: 'a ConfigMap that exists unowned (kubectl create)',
      before: existing('unowned', {}),
      values: { unowned: true },
      helm: onBoth(cannotImport('unowned'))
    },
    {
      name: 'a ConfigMap of another release',
      before: (env) => existing('foreign', helmOwned('other', env.ns))(env),
      values: { foreign: true },
      helm: onBoth(cannotImport('foreign'))
    },
    {
      name: "control: a ConfigMap with this release's label and annotations (adopted), same data",
      before: (env) => existing('adopted', helmOwned('app', env.ns))(env),
      values: { adopted: true },
      helm: onBoth('applies')
    },
    {
      name: "a ConfigMap with this release's label and annotations (adopted) whose data differs",
      before: (env) => existing('differs', helmOwned('app', env.ns), { owner: 'someone' })(env),
      values: { differs: true },
      helm: { 3: 'applies', 4: /app-differs.*conflict with "kubectl-create"/s }
    }
  ]
}
