// How Helm will write the release's existing objects, decided the way Helm 4 decides it: `helm
// upgrade` (its default `--server-side=auto`) applies server-side when the last revision's record
// (of any status) says `apply_method: ssa`, and patches client-side otherwise (Helm 3 records no method and
// always patches). Without a release name, or when its record cannot be read, the objects' field
// managers stand in for the record: Helm 4's server-side apply leaves an `Apply` entry of `helm`.
// The record also holds the manifest a client-side patch is computed from (three-way.ts).
import { PENDING_STATUSES, type KubeObject, type ManifestClient } from '../kube/manifest-client.ts'

/** The field manager Helm 4 writes as (cmd/helm/helm.go sets kube.ManagedFieldsManager = "helm"). */
export const HELM_FIELD_MANAGER = 'helm'

/** How the upgrade writes objects that exist, and why preflight thinks so. */
export interface ReleaseMode {
  write: 'apply' | 'patch'
  /** In words, for the summary: which record or object said so. */
  why: string
}

/** Helm 4's server-side apply wrote this object. */
export function appliedByHelm(o: KubeObject): boolean {
  return (o.metadata?.managedFields ?? []).some((m) => m.manager === HELM_FIELD_MANAGER && m.operation === 'Apply' && !m.subresource)
}

function fromFieldManagers(live: KubeObject[], because: string): ReleaseMode {
  const applied = live.find(appliedByHelm)
  if (applied)
    return { write: 'apply', why: `${because}; field manager ${HELM_FIELD_MANAGER} applied ${applied.kind} ${applied.metadata?.name} server-side (Helm 4)` }
  if (live.length === 0) return { write: 'apply', why: `${because}; no object of the release exists yet, so each is created` }
  return { write: 'patch', why: `${because}; no object shows Helm 4's server-side apply, so a client-side patch (Helm 3)` }
}

/**
 * The release as the upgrade finds it: how it writes, the previous revision's manifest when known
 * (a client-side patch's `original`; the objects the upgrade builds first; which objects are new to
 * the release), whether Helm will refuse it outright, and whether it is an install.
 */
export interface DecidedMode {
  mode: ReleaseMode
  /** The manifest of the revision the upgrade is computed from (pkg/action/upgrade.go's currentRelease). */
  previousManifest?: string
  /** Its revision number, for the summary. */
  previousRevision?: number
  /** Helm refuses the upgrade before writing anything, in Helm's words. */
  blocked?: string
  /** No revision of the release exists (or the last was uninstalled): `helm upgrade --install` installs it. */
  install: boolean
}

/** Without the previous manifest a patch is two-way: the summary says so, beside the mode. */
function twoWay(mode: ReleaseMode, because: string, warn: (m: string) => void, install = false): DecidedMode {
  if (mode.write !== 'patch') return { mode, install }
  warn(
    `preflight checks with a two-way patch (${because}): fields the chart stopped setting are not removed in the dry run, as Helm's three-way patch would remove them`
  )
  return { mode: { write: 'patch', why: `${mode.why}, two-way (${because})` }, install }
}

export async function decideMode(
  client: ManifestClient,
  namespace: string,
  release: string | undefined,
  live: KubeObject[],
  warn: (m: string) => void
): Promise<DecidedMode> {
  if (release === undefined) return twoWay(fromFieldManagers(live, 'no release given'), 'no release given, so no previous manifest', warn)
  const history = await client.releaseHistory(namespace, release)
  if ('refused' in history) {
    const why = history.refused.status === 0 ? history.refused.body : String(history.refused.status)
    warn(`preflight could not read the release record of ${release} in ${namespace} (${why}); the objects' field managers decide how Helm writes them`)
    return twoWay(
      fromFieldManagers(live, `the release record of ${release} could not be read`),
      `the release record of ${release} could not be read (${why})`,
      warn
    )
  }
  if ('absent' in history) {
    // `helm upgrade --install` installs: every object is created, and one that exists must be the release's to be adopted.
    return { mode: fromFieldManagers(live, `no revision of ${release} in ${namespace}: helm upgrade --install installs it`), install: true }
  }
  const { last, current } = history
  // Concurrent `helm upgrade`s fail here (upgrade.go errPending): a deploy cancelled mid-upgrade leaves its revision pending.
  const blocked = PENDING_STATUSES.has(last.status)
    ? `another operation (install/upgrade/rollback) is in progress: revision ${last.revision} of ${release} is ${last.status} (a deploy that was cancelled or is still running; helm rollback, or helm history to see it)`
    : current === undefined
      ? `${release} has no deployed releases: revision ${last.revision} is ${last.status}`
      : undefined
  // Helm 4's --server-side=auto follows the last revision of any status (getUpgradeServerSideValue).
  const mode: ReleaseMode =
    last.method === 'ssa'
      ? { write: 'apply', why: `the release record of ${release} says server-side apply (Helm 4)` }
      : {
          write: 'patch',
          why: `the release record of ${release} says ${last.method === 'csa' ? 'client-side apply' : 'nothing (Helm 3)'}: a client-side patch${current ? `, three-way from revision ${current.revision}'s manifest` : ''}`
        }
  return { mode, previousManifest: current?.manifest, previousRevision: current?.revision, blocked, install: false }
}
