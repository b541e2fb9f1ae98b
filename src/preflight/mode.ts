// How Helm will write the release's existing objects, decided the way Helm 4 decides it: `helm
// upgrade` (its default `--server-side=auto`) applies server-side when the last deployed revision's
// record says `applyMethod: ssa`, and patches client-side otherwise (Helm 3 records no method and
// always patches). Without a release name, or when its record cannot be read, the objects' field
// managers stand in for the record: Helm 4's server-side apply leaves an `Apply` entry of `helm`.
// The record also holds the manifest a client-side patch is computed from (three-way.ts).
import type { KubeObject, ManifestClient } from '../kube/manifest-client.ts'

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

/** The release mode, and the previous revision's manifest when the upgrade patches (the patch's `original`). */
export interface DecidedMode {
  mode: ReleaseMode
  previousManifest?: string
}

/** Without the previous manifest a patch is two-way: the summary says so, beside the mode. */
function twoWay(mode: ReleaseMode, because: string, warn: (m: string) => void): DecidedMode {
  if (mode.write !== 'patch') return { mode }
  warn(
    `preflight checks with a two-way patch (${because}): fields the chart stopped setting are not removed in the dry run, as Helm's three-way patch would remove them`
  )
  return { mode: { write: 'patch', why: `${mode.why}, two-way (${because})` } }
}

export async function decideMode(
  client: ManifestClient,
  namespace: string,
  release: string | undefined,
  live: KubeObject[],
  warn: (m: string) => void
): Promise<DecidedMode> {
  if (release === undefined) return twoWay(fromFieldManagers(live, 'no release given'), 'no release given, so no previous manifest', warn)
  const record = await client.releaseRecord(namespace, release)
  if ('refused' in record) {
    warn(
      `preflight could not read the release record of ${release} in ${namespace} (${record.refused.status}); the objects' field managers decide how Helm writes them`
    )
    return twoWay(
      fromFieldManagers(live, `the release record of ${release} could not be read`),
      `the release record of ${release} could not be read (${record.refused.status})`,
      warn
    )
  }
  if ('absent' in record)
    return twoWay(fromFieldManagers(live, `no deployed revision of ${release} in ${namespace}`), `no deployed revision of ${release}`, warn)
  if (record.method === 'ssa') return { mode: { write: 'apply', why: `the release record of ${release} says server-side apply (Helm 4)` } }
  return {
    mode: {
      write: 'patch',
      why: `the release record of ${release} says ${record.method === 'csa' ? 'client-side apply' : 'nothing (Helm 3)'}: a client-side patch, three-way from revision ${record.revision}'s manifest`
    },
    previousManifest: record.manifest
  }
}
