// Loading the kubeconfig: from the input, else KUBECONFIG / ~/.kube/config / in-cluster.
// Every secret in it is masked before anything could print it.
import { KubeConfig } from '@kubernetes/client-node'
import { INPUT, SettingsError } from '../settings/settings.ts'
import { loadDefaultConfig } from './in-cluster.ts'

/** Loads the kubeconfig and selects `context`; `mask` is called with every secret value. */
export function loadKubeConfig(content: string | undefined, context: string | undefined, mask: (secret: string) => void): KubeConfig {
  const kc = new KubeConfig()
  if (content !== undefined) {
    try {
      kc.loadFromString(content)
    } catch (e) {
      // The YAML parser quotes the lines around an error, tokens included: report only where.
      const mark = (e as { mark?: { line?: number; column?: number } }).mark
      const where = mark?.line === undefined ? '' : ` at line ${mark.line + 1}, column ${(mark.column ?? 0) + 1}`
      throw new SettingsError(`Invalid ${INPUT.kubeconfig}: not a valid kubeconfig${where} (its content is not shown: it holds credentials)`)
    }
  } else loadDefaultConfig(kc)
  for (const user of kc.getUsers()) {
    for (const secret of [user.token, user.password, user.keyData, user.certData]) {
      if (secret) mask(secret)
    }
  }
  if (context !== undefined) {
    if (!kc.getContextObject(context)) {
      const known = kc.getContexts().map((c) => c.name)
      throw new SettingsError(`Invalid ${INPUT.context} '${context}': the kubeconfig has ${known.length ? known.join(', ') : 'no contexts'}`)
    }
    kc.setCurrentContext(context)
  }
  if (!kc.getCurrentCluster()) throw new Error('No cluster to talk to: set the kubeconfig input, KUBECONFIG, or run in a cluster')
  return kc
}
