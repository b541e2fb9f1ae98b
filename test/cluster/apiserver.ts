// kube-apiserver's part of the local cluster: its flags, its readiness, and what fault tests do
// to it — SIGKILL mid-run, then a start exactly as it was (the command every process records in
// <dir>/commands): same binary, same flags, same port and the same serving certificate (kept in
// <dir>/pki once generated), so clients reconnect to the same URL with an unchanged kubeconfig.
// etcd keeps the data. The controllers, scheduler and kwok reconnect by themselves, but with
// client-go's backoff, which grows with each restart that comes within 2 minutes of the last
// (seconds after the first, a minute or more after the third): see restartControllers().
import { existsSync, readFileSync } from 'node:fs'
import { request } from 'node:https'
import { join } from 'node:path'
import { isAlive, logTail, recordedPid, startProcess, startProcessAgain, waitFor } from './processes.ts'

/** The process name under <dir>/pids and <dir>/logs. */
export const API_SERVER = '2-kube-apiserver'

/** kube-apiserver's binary and flags. */
export interface ApiServerCommand {
  /** Absolute path of the kube-apiserver binary. */
  command: string
  /** Its flags, in order. */
  args: string[]
}

/** What the flags are made of; everything else is fixed for a local, loopback-only cluster. */
export interface ApiServerOptions {
  bin: string
  pki: string
  etcdUrl: string
  port: number
  /** The ServiceAccount admission plugin on (a pod gets its ServiceAccount's token volume), as in a real cluster. */
  serviceAccounts?: boolean
}

/** The flags of the local cluster's kube-apiserver. */
export function apiServerCommand({ bin, pki, etcdUrl, port, serviceAccounts = false }: ApiServerOptions): ApiServerCommand {
  return {
    command: join(bin, 'kube-apiserver'),
    args: [
      `--etcd-servers=${etcdUrl}`,
      // Self-signed serving certificate for 127.0.0.1, generated at the first start and reused by
      // every later start (kube-apiserver only generates one when the files are missing).
      `--cert-dir=${pki}`,
      `--secure-port=${port}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      // The `kubernetes` Service's endpoints cannot be a loopback address; nothing here needs it.
      '--endpoint-reconciler-type=none',
      '--service-cluster-ip-range=10.0.0.0/24',
      '--authorization-mode=RBAC',
      `--token-auth-file=${join(pki, 'tokens.csv')}`,
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${join(pki, 'sa.pub')}`,
      `--service-account-signing-key-file=${join(pki, 'sa.key')}`,
      // Unless asked for, no serviceaccount controllers run, so no namespace gets a `default`
      // ServiceAccount, and the admission plugin that needs it is off. TaintNodesByCondition would
      // taint the new node not-ready, and only the node-lifecycle controller (not run here) lifts that taint.
      `--disable-admission-plugins=${serviceAccounts ? '' : 'ServiceAccount,'}TaintNodesByCondition`,
      // kwok serves pod logs on the fake node's kubelet port with a self-signed certificate.
      '--kubelet-preferred-address-types=InternalIP',
      '--allow-privileged=true'
    ]
  }
}

/** Starts kube-apiserver with `command` (recorded in <dir>/commands for restarts); returns its pid. */
export function startApiServer(dir: string, command: ApiServerCommand): number {
  return startProcess(dir, API_SERVER, command.command, command.args)
}

/** The serving certificate (also the CA every kubeconfig of the cluster trusts). */
export const apiServerCertFile = (dir: string): string => join(dir, 'pki', 'apiserver.crt')

/** The admin token, from the token file kube-apiserver reads (never logged). */
export function adminToken(dir: string): string {
  const token = readFileSync(join(dir, 'pki', 'tokens.csv'), 'utf8').split(',')[0]
  if (!token) throw new Error(`no token in ${join(dir, 'pki', 'tokens.csv')}`)
  return token
}

/** True when `url` answers 200 over TLS verified against `caFile`. */
export function httpsOk(url: string, caFile: string, token?: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(url, { ca: readFileSync(caFile), headers: token ? { Authorization: `Bearer ${token}` } : {}, timeout: 2000 }, (res) => {
      res.resume()
      resolve(res.statusCode === 200)
    })
    req.on('error', () => resolve(false))
    req.on('timeout', () => req.destroy())
    req.end()
  })
}

/** Waits for the serving certificate to exist and /readyz to answer 200. */
export async function waitForApiServer(dir: string, server: string, timeoutMs = 90_000): Promise<void> {
  const caFile = apiServerCertFile(dir)
  const tail = (): string => logTail(dir, API_SERVER)
  await waitFor('kube-apiserver certificate', async () => existsSync(caFile), 60_000, tail)
  await waitFor('kube-apiserver /readyz', () => httpsOk(`${server}/readyz`, caFile, adminToken(dir)), timeoutMs, tail)
}

/** The pid recorded for kube-apiserver, or 0 when there is none. */
export function apiServerPid(dir: string): number {
  return recordedPid(dir, API_SERVER)
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/**
 * SIGKILLs the cluster's kube-apiserver — only that process, by its recorded pid (it runs in
 * its own process group) — and waits until it is gone, so its port refuses connections.
 */
export async function killApiServer(cluster: { dir: string }): Promise<void> {
  const pid = apiServerPid(cluster.dir)
  if (!pid || !isAlive(pid)) throw new Error(`kube-apiserver of the cluster in ${cluster.dir} is not running`)
  process.kill(pid, 'SIGKILL')
  const deadline = Date.now() + 10_000
  while (isAlive(pid)) {
    if (Date.now() > deadline) throw new Error(`kube-apiserver (pid ${pid}) still alive 10s after SIGKILL`)
    await sleep(20)
  }
}

/**
 * Starts the cluster's kube-apiserver again with its recorded binary and flags (same port, same
 * certificate) and waits for /readyz. Fails if one is still running.
 */
export async function startApiServerAgain(cluster: { dir: string; server: string }, timeoutMs = 90_000): Promise<void> {
  const pid = apiServerPid(cluster.dir)
  if (pid && isAlive(pid)) throw new Error(`kube-apiserver of the cluster in ${cluster.dir} is still running (pid ${pid})`)
  startProcessAgain(cluster.dir, API_SERVER)
  await waitForApiServer(cluster.dir, cluster.server, timeoutMs)
}

/** How long a restart took, as a client would experience it. */
export interface ApiServerRestart {
  /** From the SIGKILL to the new process's start. */
  downMs: number
  /** From the SIGKILL until /readyz answered again. */
  unavailableMs: number
}

/** Kills kube-apiserver, keeps it down for `downMs`, then starts it again and waits until ready. */
export async function restartApiServer(cluster: { dir: string; server: string }, downMs: number): Promise<ApiServerRestart> {
  const killed = Date.now()
  await killApiServer(cluster)
  // setTimeout runs on the monotonic clock and may fire a millisecond before Date.now() says so.
  while (Date.now() - killed < downMs) await sleep(Math.max(1, downMs - (Date.now() - killed)))
  const started = Date.now()
  await startApiServerAgain(cluster)
  return { downMs: started - killed, unavailableMs: Date.now() - killed }
}
