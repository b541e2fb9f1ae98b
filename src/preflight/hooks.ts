// The hooks the upgrade runs, and what an earlier run may have left in their way. Helm creates each
// hook of the upgrade's events anew (pkg/action/hooks.go execHook), deleting the old one first
// only when the hook's delete policy says before-hook-creation, which is the default when it names
// none (hookSetDeletePolicy). A hook Job that failed under `hook-succeeded` therefore stays, and the
// next upgrade meets it: Helm 3's create answers "already exists"; Helm 4 applies server-side over
// it, and then waits on a Job that has failed already. Pure.
import type { KubeObject } from '../kube/manifest-client.ts'

/** The hook events an upgrade runs; an install (`helm upgrade --install` of a new release) runs the install ones. */
const EVENTS = { upgrade: ['pre-upgrade', 'post-upgrade'], install: ['pre-install', 'post-install'] }

const listOf = (value: string | undefined): string[] =>
  (value ?? '')
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '')

/** The events of the upgrade (or install) this hook runs at, in the manifest's words; none: it does not run. */
export function upgradeEvents(hook: KubeObject, install: boolean): string[] {
  const events = listOf(hook.metadata?.annotations?.['helm.sh/hook'])
  return events.filter((e) => (install ? EVENTS.install : EVENTS.upgrade).includes(e))
}

/** Helm deletes the hook's namesake before creating it: its policy says before-hook-creation, or names none. */
export function deletedBeforeCreation(hook: KubeObject): boolean {
  const policies = listOf(hook.metadata?.annotations?.['helm.sh/hook-delete-policy'])
  return policies.length === 0 || policies.includes('before-hook-creation')
}

/** The hooks the upgrade creates whose namesake, if one exists, is not deleted first: the ones to look up. */
export function hooksToCheck(hooks: KubeObject[], install: boolean): KubeObject[] {
  return hooks.filter((h) => upgradeEvents(h, install).length > 0 && !deletedBeforeCreation(h))
}

/** A Job the Job controller marked Failed. */
export function failedJob(o: KubeObject): boolean {
  const conditions = (o.status as { conditions?: { type?: string; status?: string }[] } | undefined)?.conditions ?? []
  return o.kind === 'Job' && conditions.some((c) => c.type === 'Failed' && c.status === 'True')
}

/** Why the left-over namesake makes the hook fail, in words (the hook's events and policy named). */
export function leftOverWhy(hook: KubeObject, install: boolean, helm: 'create' | 'apply'): string {
  const events = upgradeEvents(hook, install).join(', ')
  const policy = hook.metadata?.annotations?.['helm.sh/hook-delete-policy']
  const kept = `its delete policy (${policy}) does not delete the one an earlier run left`
  return helm === 'create'
    ? `already exists: the ${events} hook is created anew, and ${kept}`
    : `the ${events} hook's Job from an earlier run failed, and ${kept}: Helm applies over it and waits on it, and it stays failed`
}
