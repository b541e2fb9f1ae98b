// The fault proxy's kubeconfig: the cluster's, with only the server changed.
import { readFileSync, writeFileSync } from 'node:fs'
import { KubeConfig } from '@kubernetes/client-node'

/** The cluster's kubeconfig with its current cluster's server replaced (same CA, same token). */
export function writeProxyKubeconfig(source: string, server: string, path: string): void {
  const kc = new KubeConfig()
  kc.loadFromFile(source)
  const cluster = kc.getCurrentCluster()
  const user = kc.getCurrentUser()
  const context = kc.getContextObject(kc.getCurrentContext())
  if (!cluster || !user || !context) throw new Error(`${source} has no current context with a cluster and a user`)
  const ca = cluster.caData ?? (cluster.caFile ? readFileSync(cluster.caFile).toString('base64') : undefined)
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'fault-proxy', cluster: { server, 'certificate-authority-data': ca } }],
    users: [{ name: user.name, user: { token: user.token } }],
    contexts: [{ name: 'fault-proxy', context: { cluster: 'fault-proxy', user: user.name, namespace: context.namespace } }],
    'current-context': 'fault-proxy'
  }
  writeFileSync(path, JSON.stringify(config, null, 2), { mode: 0o600 })
}
