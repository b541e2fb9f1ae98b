// The kubeconfig input: a file path (as kubectl's and helm's --kubeconfig take it, ~ expanded),
// kubeconfig YAML, or the same base64-encoded (as CI secrets often store it). Its content is never
// quoted in an error: it holds credentials. A path is, so that a typo can be seen.
import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import { INPUT, SettingsError } from './inputs.ts'

/** A kubeconfig read from the input: its content, and the file it came from, if it did. */
export interface KubeconfigInput {
  /** The kubeconfig YAML. */
  content: string
  /** Absolute path of the file it was read from: relative paths inside it are resolved against its folder, as kubectl does. */
  path?: string
}

const BASE64 = /^[A-Za-z0-9+/=\s]+$/

/**
 * Whether the input names a file rather than holding a kubeconfig. Content has several lines, or
 * is base64 or JSON/flow YAML on one line; base64 never starts with '/', '~' or '.' for a text
 * (its first byte would be 0xFC or above), so those always mean a path, and so does any value
 * that is not base64 and has no ':' (like `kube/config.yaml`).
 */
export function isKubeconfigPath(value: string, fileExists: (path: string) => boolean): boolean {
  const text = value.trim()
  if (text === '' || /[\r\n]/.test(text)) return false
  if (/^[~/.]/.test(text)) return true
  if (fileExists(text)) return true
  return !BASE64.test(text) && !text.includes(':') && !/^[{[]/.test(text)
}

/** `~` and `~/…` expanded against the home directory, as a shell would before kubectl saw them. */
export function expandHome(path: string, env: NodeJS.ProcessEnv): string {
  if (path !== '~' && !path.startsWith('~/')) return path
  return join(env.HOME || homedir(), path.slice(1))
}

/** Kubeconfig YAML as given, or decoded when the input is base64. */
export function decodeKubeconfig(value: string): string {
  const text = value.trim()
  if (BASE64.test(text) && !text.includes(':')) {
    const decoded = Buffer.from(text.replace(/\s+/g, ''), 'base64').toString('utf8')
    if (/apiVersion|clusters|current-context/.test(decoded)) return decoded
    throw new SettingsError(
      `Invalid ${INPUT.kubeconfig}: expected a kubeconfig file, kubeconfig YAML, or the same base64-encoded; it is no file, and it looks like base64 but does not decode to a kubeconfig`
    )
  }
  if (!/clusters\s*:|"clusters"/.test(text))
    throw new SettingsError(`Invalid ${INPUT.kubeconfig}: expected kubeconfig YAML (with clusters:) or the same base64-encoded; its content is not shown`)
  return text
}

/** Reads the kubeconfig input: from the file it names, or from the value itself. */
export function readKubeconfigInput(
  value: string,
  env: NodeJS.ProcessEnv,
  readText: (path: string) => string,
  fileExists: (path: string) => boolean
): KubeconfigInput {
  if (!isKubeconfigPath(value, fileExists)) return { content: decodeKubeconfig(value) }
  const given = value.trim()
  const path = resolve(expandHome(given, env))
  let content: string
  try {
    content = readText(path)
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? String(e)
    throw new SettingsError(
      `Invalid ${INPUT.kubeconfig} '${given}': expected a readable kubeconfig file, kubeconfig YAML or base64; cannot read ${path} (${code})`
    )
  }
  if (!/clusters\s*:|"clusters"/.test(content))
    throw new SettingsError(
      `Invalid ${INPUT.kubeconfig} '${given}': expected a kubeconfig file (with clusters:); ${path} is not one (its content is not shown)`
    )
  return { content, path }
}
