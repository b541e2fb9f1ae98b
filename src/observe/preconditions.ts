// Checks of the scope against the cluster, before and after the Jobs are read: a namespace that does
// not exist is an error (a typo would otherwise read as "nothing to do"), and a release with neither
// Jobs nor a Helm release record is a warning (likewise, probably a misspelt name).
import type { JobsClient } from '../kube/client.ts'
import { apiErrorMessage, statusCode } from '../kube/errors.ts'

/** A namespace the run was told to work in does not exist: the run stops before reading Jobs. */
export class MissingNamespace extends Error {
  override name = 'MissingNamespace'
}

/**
 * Throws MissingNamespace when a namespace does not exist. A 403 skips the check: namespaces are
 * cluster-scoped, so a namespaced Role (the README's) cannot grant reading one.
 */
export async function checkNamespaces(client: JobsClient, namespaces: string[], fromContext: boolean): Promise<void> {
  const missing: string[] = []
  await Promise.all(
    namespaces.map(async (ns) => {
      try {
        if (!(await client.namespaceExists(ns))) missing.push(ns)
      } catch (e) {
        if (statusCode(e) !== 403) throw e
      }
    })
  )
  if (missing.length === 0) return
  const why = fromContext ? ` (the kubeconfig context's namespace; set the namespace input)` : ''
  const names = missing.sort().map((ns) => `'${ns}'`)
  throw new MissingNamespace(missing.length === 1 ? `namespace ${names[0]} does not exist${why}` : `namespaces ${names.join(', ')} do not exist${why}`)
}

/**
 * For a release scope that matched no Job: a warning when none of the namespaces holds a Helm
 * release record of it (Helm's default Secret storage, or its ConfigMap driver), else undefined.
 * Advisory only: when the records may not be read (403: the README's Role does not grant listing
 * Secrets, on purpose) it says nothing, and when the check fails it says so in a warning.
 */
export async function missingReleaseWarning(client: JobsClient, release: string, namespaces: string[]): Promise<string | undefined> {
  try {
    for (const kind of ['Secret', 'ConfigMap'] as const) {
      const found = await Promise.all(namespaces.map((ns) => client.hasHelmRecord(ns, release, kind)))
      if (found.some(Boolean)) return undefined
    }
  } catch (e) {
    if (statusCode(e) === 403) return undefined
    return `could not check whether Helm release '${release}' exists: ${apiErrorMessage(e)}`
  }
  const where = namespaces.length === 1 ? `namespace '${namespaces[0]}'` : `namespaces ${namespaces.map((ns) => `'${ns}'`).join(', ')}`
  return `no Helm release '${release}' in ${where} (no release record): is the name right?`
}
