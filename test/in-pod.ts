// A container of a rendered manifest run here as Kubernetes would run it in a pod (kwok runs no
// containers): its own command and args, its env, as its ServiceAccount through the in-cluster
// configuration (token file, CA, namespace, KUBERNETES_SERVICE_HOST/PORT) and nothing else: no
// kubeconfig, nothing inherited (a Secret's keys in its env are read from the cluster). The image's files come from the build context scripts/image.sh
// assembles, and each volume mount is an empty directory.
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { V1Container } from '@kubernetes/client-node'
import { SERVICE_ACCOUNT_TOKEN } from '../src/kube/in-cluster.ts'
import { coreApi, kubeConfig, testCluster } from './cluster/testenv.ts'
import { runCommand, type CommandRun } from './command.ts'

const root = join(import.meta.dirname, '..')

/** The image's root filesystem as far as job-sweeper's files go: the build context's rootfs/. */
export function imageRootfs(): string {
  const context = join(mkdtempSync(join(tmpdir(), 'image-context-')), 'context')
  const made = spawnSync(join(root, 'scripts', 'image.sh'), ['context', context], { encoding: 'utf8' })
  if (made.status !== 0) throw new Error(`scripts/image.sh context failed: ${made.stderr}`)
  return join(context, 'rootfs')
}

export interface PodRun extends CommandRun {
  /** The ServiceAccount token the run had (to check that no output shows it). */
  token: string
  /** Where each of the container's volume mounts was (mountPath → local directory). */
  mounts: Map<string, string>
}

/** The programs a container's command may name, and what runs each here: the image has Node only. */
export const IMAGE_PROGRAMS: Readonly<Record<string, string>> = { node: process.execPath }

/**
 * Runs `container` as ServiceAccount `serviceAccount` of `namespace`. The program its command names
 * runs as `programs` says (by default `node` is the Node running the tests, and nothing else runs);
 * a path under the image's root is taken from `rootfs`, a path under a volume mount from that
 * mount's directory. `extraArgs` go after its own (e.g. --json, to read the result).
 */
export async function runAsPod(
  namespace: string,
  serviceAccount: string,
  container: V1Container,
  rootfs: string,
  extraArgs: string[] = [],
  programs: Readonly<Record<string, string>> = IMAGE_PROGRAMS
): Promise<PodRun> {
  const podRoot = mkdtempSync(join(tmpdir(), 'pod-root-'))
  const saDir = join(podRoot, dirname(SERVICE_ACCOUNT_TOKEN))
  mkdirSync(saDir, { recursive: true })
  const tokenRequest = await coreApi().createNamespacedServiceAccountToken({ name: serviceAccount, namespace, body: { spec: { expirationSeconds: 3600 } } })
  const token = tokenRequest.status?.token ?? ''
  if (token === '') throw new Error(`no token for ServiceAccount ${namespace}/${serviceAccount}`)
  writeFileSync(join(saDir, 'token'), token, { mode: 0o600 })
  writeFileSync(join(saDir, 'ca.crt'), Buffer.from(kubeConfig().getCurrentCluster()?.caData ?? '', 'base64'))
  writeFileSync(join(saDir, 'namespace'), namespace)

  const mounts = new Map((container.volumeMounts ?? []).map((m) => [m.mountPath, mkdtempSync(join(tmpdir(), 'pod-volume-'))]))
  const local = (value: string): string => {
    for (const [mountPath, dir] of mounts) if (value === mountPath || value.startsWith(`${mountPath}/`)) return dir + value.slice(mountPath.length)
    return value.startsWith('/opt/') ? join(rootfs, value) : value
  }
  const [program, ...commandArgs] = [...(container.command ?? []), ...(container.args ?? [])].map(local)
  const executable = Object.hasOwn(programs, program) ? programs[program] : undefined
  if (executable === undefined)
    throw new Error(`container ${container.name} runs '${program}': expected one of ${Object.keys(programs).join(', ')} (what the image holds)`)

  const api = new URL(testCluster().server)
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: mkdtempSync(join(tmpdir(), 'pod-home-')), // no ~/.kube/config, and no KUBECONFIG
    KUBERNETES_SERVICE_HOST: api.hostname,
    KUBERNETES_SERVICE_PORT: api.port,
    JOB_SWEEPER_IN_CLUSTER_ROOT: podRoot
  }
  for (const e of container.env ?? []) {
    // A Secret's key, read as the kubelet reads it: from the pod's namespace.
    const ref = e.valueFrom?.secretKeyRef
    if (ref) {
      const secret = await coreApi().readNamespacedSecret({ namespace, name: ref.name ?? '' })
      env[e.name] = Buffer.from(secret.data?.[ref.key] ?? '', 'base64').toString('utf8')
    } else env[e.name] = local(e.value ?? '')
  }
  const run = await runCommand(executable, [...commandArgs, ...extraArgs], env).finally(() => rmSync(podRoot, { recursive: true, force: true }))
  return { ...run, token, mounts }
}
