// Loading the kubeconfig: from the input, else KUBECONFIG / ~/.kube/config / in-cluster.
// Every secret in it is masked before anything could print it.
import { readFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { KubeConfig, type User } from '@kubernetes/client-node'
import { INPUT, SettingsError, type KubeconfigInput } from '../settings/settings.ts'
import { loadDefaultConfig } from './in-cluster.ts'

/** Auth-provider config keys whose values are credentials (access-token, refresh-token, client-secret, id-token, …). */
const SECRET_CONFIG_KEY = /token|secret|password|(^|-)key($|-)/i
/** Auth-provider config keys whose values are files holding a credential (in a pod: the service-account token). */
const SECRET_FILE_KEY = /^token-?file$/i

/** The credential a file holds, as it is now (the kubelet rotates a service-account token; rest.ts masks each new one). */
function fileSecret(path: unknown): string[] {
  if (typeof path !== 'string') return []
  try {
    return [readFileSync(path, 'utf8').trim()]
  } catch {
    return [] // a file that cannot be read gives no token to print either
  }
}

type ExecConfig = { args?: unknown; env?: unknown } | undefined

/**
 * An exec plugin's args and env values: flags alone (`--region`) are not secret, their values may
 * be. Values shorter than 8 characters (`1`, `true`, `json`) are switches, not credentials, and
 * masking them would garble every count and word in the log that contains them.
 */
const MIN_EXEC_SECRET_LENGTH = 8

/** The values of an exec plugin's args and env that may be credentials. */
function execSecrets(exec: ExecConfig): string[] {
  const args = Array.isArray(exec?.args) ? exec.args.filter((a): a is string => typeof a === 'string') : []
  const env = Array.isArray(exec?.env) ? (exec.env as { value?: unknown }[]).map((e) => e?.value).filter((v): v is string => typeof v === 'string') : []
  const argValues = args.flatMap((arg) => {
    if (!arg.startsWith('-')) return [arg]
    const eq = arg.indexOf('=')
    return eq === -1 ? [] : [arg.slice(eq + 1)]
  })
  return [...argValues, ...env].filter((value) => value.trim().length >= MIN_EXEC_SECRET_LENGTH)
}

/** A client key or certificate as given (base64) and as the PEM it decodes to, whole and line by line. */
function pemSecrets(data: string | undefined): string[] {
  if (!data) return []
  const pem = Buffer.from(data, 'base64').toString('utf8')
  if (!pem.includes('-----BEGIN')) return [data]
  const lines = pem.split(/\r?\n/).filter((l) => l.trim().length >= 16 && !l.startsWith('-----'))
  return [data, pem, ...lines]
}

/**
 * Every credential in the kubeconfig's users: tokens, passwords, client keys and certificates,
 * exec plugins' args and env values, and auth-provider tokens and secrets.
 */
export function kubeconfigSecrets(kc: KubeConfig): string[] {
  return kc.getUsers().flatMap((user: User) => {
    const config = (user.authProvider as { config?: Record<string, unknown> } | undefined)?.config ?? {}
    // A token file's path is no secret (masking it would hide every mention of it); its content is.
    const providerSecrets = Object.entries(config).flatMap(([key, value]) =>
      SECRET_FILE_KEY.test(key) ? fileSecret(value) : SECRET_CONFIG_KEY.test(key) && typeof value === 'string' ? [value] : []
    )
    return [
      user.token,
      user.password,
      ...pemSecrets(user.keyData),
      ...pemSecrets(user.certData),
      ...execSecrets(user.exec as ExecConfig),
      ...execSecrets(config.exec as ExecConfig),
      ...providerSecrets
    ].filter((s): s is string => typeof s === 'string' && s.trim() !== '')
  })
}

/** Where a YAML error is, without the lines around it that the parser quotes: they may hold tokens. */
function yamlErrorPlace(e: unknown): string {
  const mark = (e as { mark?: { line?: number; column?: number } }).mark
  return mark?.line === undefined ? '' : ` at line ${mark.line + 1}, column ${(mark.column ?? 0) + 1}`
}

/** Loads the kubeconfig and selects `context`; `mask` is called with every secret value. */
export function loadKubeConfig(input: KubeconfigInput | undefined, context: string | undefined, mask: (secret: string) => void): KubeConfig {
  const kc = new KubeConfig()
  if (input !== undefined) {
    try {
      kc.loadFromString(input.content)
    } catch (e) {
      const source = input.path === undefined ? '' : ` '${input.path}'`
      throw new SettingsError(
        `Invalid ${INPUT.kubeconfig}${source}: not a valid kubeconfig${yamlErrorPlace(e)} (its content is not shown: it holds credentials)`
      )
    }
    // Relative certificate and key paths are relative to the kubeconfig file, as for kubectl.
    if (input.path !== undefined) kc.makePathsAbsolute(dirname(input.path))
  } else {
    try {
      loadDefaultConfig(kc)
    } catch (e) {
      if (e instanceof SettingsError) throw e
      throw new SettingsError(
        `Invalid kubeconfig from KUBECONFIG or ~/.kube/config: not valid${yamlErrorPlace(e)} (its content is not shown: it holds credentials)`
      )
    }
  }
  for (const secret of kubeconfigSecrets(kc)) mask(secret)
  if (context !== undefined) {
    if (!kc.getContextObject(context)) {
      const known = kc.getContexts().map((c) => c.name)
      throw new SettingsError(
        `Invalid ${INPUT.context} '${context}': expected a context of the kubeconfig (${known.length ? known.join(', ') : 'it has none'})`
      )
    }
    kc.setCurrentContext(context)
  }
  if (!kc.getCurrentCluster()) throw new Error('No cluster to talk to: set the kubeconfig input, KUBECONFIG, or run in a cluster')
  return kc
}
