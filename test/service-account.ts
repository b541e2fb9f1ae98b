// A ServiceAccount with exactly the rights a test gives it, and a kubeconfig whose only credential
// is its token: what a run gets from a deploy pipeline's least-privilege identity.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { KubeConfig, RbacAuthorizationV1Api, type V1PolicyRule } from '@kubernetes/client-node'
import { coreApi, kubeConfig, kubectl } from './cluster/testenv.ts'

/** The README's Role and its RoleBinding to ServiceAccount `deployer` (examples/rbac.yaml), in `namespace`. */
export function exampleRbac(namespace: string): string {
  return readFileSync(join(import.meta.dirname, '..', 'examples', 'rbac.yaml'), 'utf8').replaceAll('namespace: production', `namespace: ${namespace}`)
}

/** What the ServiceAccount may do: RBAC documents to apply, a Role of these rules, or a ClusterRole bound in the namespace. */
export type Rights = { yaml: string } | { rules: V1PolicyRule[] } | { clusterRole: string }

/** Creates ServiceAccount `name` in `namespace` with `rights` (a Role and RoleBinding are named after it). */
export async function createServiceAccount(namespace: string, name: string, rights: Rights): Promise<void> {
  await coreApi().createNamespacedServiceAccount({ namespace, body: { metadata: { name } } })
  if ('yaml' in rights) {
    const file = join(mkdtempSync(join(tmpdir(), 'rbac-')), 'rbac.yaml')
    writeFileSync(file, rights.yaml)
    const applied = kubectl('apply', '-f', file)
    if (applied.code !== 0 || applied.stderr !== '') throw new Error(`kubectl apply of the RBAC for ${namespace}/${name} failed: ${applied.stderr}`)
    return
  }
  const rbac = kubeConfig().makeApiClient(RbacAuthorizationV1Api)
  const roleRef =
    'rules' in rights
      ? { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name }
      : { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: rights.clusterRole }
  if ('rules' in rights) await rbac.createNamespacedRole({ namespace, body: { metadata: { name }, rules: rights.rules } })
  await rbac.createNamespacedRoleBinding({ namespace, body: { metadata: { name }, roleRef, subjects: [{ kind: 'ServiceAccount', name, namespace }] } })
}

/** A token of ServiceAccount `name` (valid 1h), and a kubeconfig (YAML) with the test cluster and that token as its only credential. */
export function tokenKubeconfig(namespace: string, name: string): { token: string; kubeconfig: string } {
  const created = kubectl('create', 'token', name, '-n', namespace, '--duration', '1h')
  if (created.code !== 0) throw new Error(`kubectl create token ${name} -n ${namespace} failed: ${created.stderr}`)
  const token = created.stdout.trim()
  const cluster = kubeConfig().getCurrentCluster()
  const kc = new KubeConfig()
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: cluster?.server ?? '', caData: cluster?.caData }],
    users: [{ name, token }],
    contexts: [{ name, cluster: 'c', user: name, namespace }],
    currentContext: name
  })
  return { token, kubeconfig: kc.exportConfig() }
}
