// A fault-injecting proxy on loopback in front of the REAL kube-apiserver, for fault tests and
// benchmarks. It terminates TLS with the API server's own certificate and key, so the cluster's
// kubeconfig CA validates it unchanged, and forwards each request over HTTPS to the real server —
// headers, body and streaming responses (watches, pod logs) untouched unless a rule applies:
//
//   const proxy = await startFaultProxy(testCluster())
//   const rule = proxy.addRule({ method: 'DELETE', path: /\/jobs\//, times: 2, fault: { kind: 'status', code: 429, retryAfterSeconds: 1 } })
//   … run the product with proxy.kubeconfig (a child process: runAsync from observe.ts, never
//     spawnSync, which would block the event loop the proxy serves from) …
//   expect(rule.fired).toBe(2)
//   expect(proxy.requests.count({ method: 'DELETE', path: /\/jobs\// })).toBe(jobs + 2)
//   await proxy.close()
//
// Node's own net/tls/https only: a TLS-terminating HTTP/1.1 forwarder is short, and holding the
// raw TCP socket is what makes a real RST (resetAndDestroy) possible. HTTP/2 is not offered
// (ALPN http/1.1), so kubectl talks HTTP/1.1 to it; connection upgrades (exec, attach,
// port-forward) are refused.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer as createHttpServer, type Server as HttpServer, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http'
import { Agent, request as httpsRequest } from 'node:https'
import { createServer as createNetServer, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { createSecureContext, type SecureContext, TLSSocket } from 'node:tls'
import { KubeConfig } from '@kubernetes/client-node'
import { StreamCutter } from './cut.ts'
import { RequestLog, type ProxiedRequest } from './requests.ts'
import { resetConnection } from './reset.ts'
import { answerHeaders, withoutHopByHop } from './headers.ts'
import { writeProxyKubeconfig } from './kubeconfig.ts'
import { ActiveRule, seededRandom, statusBody, type Fault, type FaultRule, type RequestKey, type RuleHandle } from './rules.ts'

export type { Fault, FaultRule, RequestMatch, RuleHandle } from './rules.ts'
export type { ProxiedRequest, RequestLog } from './requests.ts'

/** How a paused proxy looks to clients. */
export type PauseMode =
  /** Nothing listens on the port: connections are refused (ECONNREFUSED). */
  | 'refuse'
  /** Connections are accepted and reset at once (ECONNRESET). */
  | 'reset'
  /** Connections are accepted and never answered (the client's timeout fires). */
  | 'hang'
  /**
   * Connections and TLS are accepted, requests are read and never answered: an overloaded API
   * server, or a load balancer whose backend is gone. The client's connect succeeds; only its
   * deadline for the answer fires.
   */
  | 'unanswered'

export interface FaultProxyOptions {
  /** Seed of the generator behind rules' `probability` (default: random). */
  seed?: number
}

export class FaultProxy {
  /** https://127.0.0.1:<port> of the proxy. */
  readonly url: string
  /** A kubeconfig (mode 0600, in a private temp dir) like the cluster's, but pointing here. */
  readonly kubeconfig: string
  /** Every request received, with counts by pattern and by route. */
  readonly requests = new RequestLog()
  /** TCP connections accepted so far (a client that reuses its connections opens few). */
  connections = 0

  private readonly rules: ActiveRule[] = []
  private readonly random: () => number
  private readonly listener: Server
  private readonly sockets = new Set<Socket>()
  private readonly rawOf = new WeakMap<object, Socket>()
  private readonly tlsOf = new WeakMap<Socket, TLSSocket>()
  private readonly agent: Agent
  private readonly upstream: URL
  private readonly port: number
  private readonly secureContext: SecureContext
  private readonly http: HttpServer
  private readonly tempDir: string
  private paused: PauseMode | undefined
  private closed = false

  /** Use startFaultProxy(). */
  constructor(init: { listener: Server; port: number; upstream: URL; cert: Buffer; key: Buffer; kubeconfig: string; tempDir: string; seed?: number }) {
    this.listener = init.listener
    this.port = init.port
    this.upstream = init.upstream
    this.url = `https://127.0.0.1:${init.port}`
    this.kubeconfig = init.kubeconfig
    this.tempDir = init.tempDir
    this.random = init.seed === undefined ? Math.random : seededRandom(init.seed)
    this.agent = new Agent({ keepAlive: true, ca: init.cert })
    this.secureContext = createSecureContext({ cert: init.cert, key: init.key })
    this.http = createHttpServer((req, res) => this.handle(req, res).catch(() => req.socket.destroy()))
    this.http.on('upgrade', (_req, socket: Socket) => socket.destroy())
    this.listener.on('connection', (raw) => this.accept(raw))
  }

  /** Adds a rule after the existing ones; the first rule that fires on a request decides its fault. */
  addRule(rule: FaultRule): RuleHandle {
    const active = new ActiveRule(rule)
    this.rules.push(active)
    return active
  }

  /** Removes every rule; requests pass through untouched again. */
  clearRules(): void {
    for (const rule of this.rules) rule.remove()
    this.rules.length = 0
  }

  /** A client-node KubeConfig for the proxy. */
  kubeConfig(): KubeConfig {
    const kc = new KubeConfig()
    kc.loadFromFile(this.kubeconfig)
    return kc
  }

  /** Environment for a child process (kubectl, helm, the CLI) that should go through the proxy. */
  env(): Record<string, string> {
    return { KUBECONFIG: this.kubeconfig }
  }

  /**
   * Makes the API server unreachable through the proxy, as `mode` says. Open connections, watch
   * streams included, are reset.
   */
  async pause(mode: PauseMode = 'refuse'): Promise<void> {
    if (this.paused) throw new Error(`the fault proxy is already paused (${this.paused})`)
    this.paused = mode
    // close() calls back once every connection is gone, hence the resets in between.
    const closed = mode === 'refuse' ? new Promise<void>((resolve) => this.listener.close(() => resolve())) : undefined
    for (const socket of this.sockets) this.resetSocket(socket)
    await closed
  }

  /** Serves again, on the same port. */
  async resume(): Promise<void> {
    const mode = this.paused
    if (!mode) return
    for (const socket of this.sockets) this.resetSocket(socket) // the ones left hanging
    if (mode === 'refuse') await listen(this.listener, this.port)
    this.paused = undefined
  }

  /** Stops listening, drops every connection and removes the kubeconfig. */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    const closed = this.paused === 'refuse' ? undefined : new Promise<void>((resolve) => this.listener.close(() => resolve()))
    for (const socket of this.sockets) socket.destroy()
    await closed
    this.agent.destroy()
    rmSync(this.tempDir, { recursive: true, force: true })
  }

  /** A new TCP connection: reset, held, or handed to TLS and HTTP. */
  private accept(raw: Socket): void {
    this.connections++
    this.sockets.add(raw)
    raw.on('close', () => this.sockets.delete(raw))
    raw.on('error', () => undefined)
    if (this.paused === 'reset') this.resetSocket(raw)
    if (this.paused && this.paused !== 'unanswered') return
    const tls = new TLSSocket(raw, { isServer: true, secureContext: this.secureContext, ALPNProtocols: ['http/1.1'] })
    tls.on('error', () => raw.destroy())
    this.rawOf.set(tls, raw)
    this.tlsOf.set(raw, tls)
    this.http.emit('connection', tls)
  }

  /** One HTTP request: count it, pick a fault, answer or forward. */
  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://proxy.invalid')
    const key: RequestKey = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams }
    const entry: ProxiedRequest = { method: key.method, path: key.path, query: url.search.slice(1) }
    this.requests.record(entry)
    if (this.paused === 'unanswered') return // held until the client gives up, or resume() resets it
    const fault = this.rules.find((rule) => rule.fires(key, this.random))?.rule.fault
    if (fault) entry.fault = fault.kind

    if (fault?.kind === 'status') {
      req.resume()
      req.on('end', () => {
        entry.status = fault.code
        const headers: OutgoingHttpHeaders = { 'content-type': 'application/json', 'cache-control': 'no-cache, private' }
        if (fault.retryAfterSeconds !== undefined) headers['retry-after'] = String(fault.retryAfterSeconds)
        res.writeHead(fault.code, headers).end(statusBody(fault))
      })
      return
    }
    if (fault?.kind === 'reset' && fault.when === 'before') return this.reset(req)
    if (fault?.kind === 'delay') {
      await sleep(fault.ms)
      if (req.destroyed) return
    }
    this.forward(req, res, entry, fault)
  }

  private reset(req: IncomingMessage): void {
    const raw = this.rawOf.get(req.socket)
    if (raw) this.resetSocket(raw)
    else req.socket.destroy()
  }

  /** Resets a connection, or destroys it if it is already ending (see resetConnection). */
  private resetSocket(raw: Socket): void {
    resetConnection(raw, this.tlsOf.get(raw))
  }

  private forward(req: IncomingMessage, res: ServerResponse, entry: ProxiedRequest, fault: Fault | undefined): void {
    const headers = withoutHopByHop(req.rawHeaders)
    headers.host = this.upstream.host
    // Cuts count body bytes and lines as the client reads them: no compression.
    if (fault?.kind === 'cut') delete headers['accept-encoding']
    const upstream = httpsRequest({ agent: this.agent, hostname: this.upstream.hostname, port: this.upstream.port, method: req.method, path: req.url, headers })
    // The client went away (a watch stopped, a request aborted): so does the upstream request.
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy()
    })
    upstream.on('error', () => {
      // The real server is unreachable or reset the connection: the client sees a reset too
      // (a transparent proxy), not a 502 from a gateway that does not exist in production.
      if (!res.headersSent) this.reset(req)
      else if (!res.writableEnded) res.destroy()
    })
    upstream.on('response', (answer) => {
      entry.status = answer.statusCode
      if (fault?.kind === 'reset') {
        answer.destroy()
        entry.status = undefined
        return this.reset(req)
      }
      const out = answerHeaders(answer.rawHeaders, fault?.kind === 'cut')
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, out)
      res.flushHeaders()
      if (fault?.kind !== 'cut') {
        answer.pipe(res)
        return
      }
      const cutter = new StreamCutter(fault)
      let done = false
      answer.on('data', (chunk: Buffer) => {
        if (done) return
        const { pass, cut } = cutter.take(chunk)
        if (!cut) {
          if (!res.write(pass)) answer.pause()
          return
        }
        done = true
        answer.destroy()
        this.cut(req, res, pass, fault.how ?? 'close')
      })
      res.on('drain', () => answer.resume())
      // An 'end' already queued when the cut destroyed the answer must not end the response
      // cleanly; a body shorter than the cut point arrives whole.
      answer.on('end', () => done || res.end())
    })
    req.pipe(upstream)
  }

  private cut(req: IncomingMessage, res: ServerResponse, last: Buffer, how: 'close' | 'reset' | 'end'): void {
    if (how === 'end') {
      res.end(last)
      return
    }
    res.write(last, () => {
      // The bytes are with the kernel; on loopback the client has them before the close.
      if (how === 'reset') setTimeout(() => this.reset(req), 20)
      else req.socket.end()
    })
  }
}

/** Starts a fault proxy in front of `cluster`'s API server, on a free loopback port. */
export async function startFaultProxy(cluster: { dir: string; server: string; kubeconfig: string }, options: FaultProxyOptions = {}): Promise<FaultProxy> {
  const cert = readFileSync(join(cluster.dir, 'pki', 'apiserver.crt'))
  const key = readFileSync(join(cluster.dir, 'pki', 'apiserver.key'))
  const listener = createNetServer()
  const port = await listen(listener, 0)
  const tempDir = mkdtempSync(join(tmpdir(), 'job-sweeper-proxy-'))
  const kubeconfig = join(tempDir, 'kubeconfig')
  writeProxyKubeconfig(cluster.kubeconfig, `https://127.0.0.1:${port}`, kubeconfig)
  return new FaultProxy({ listener, port, upstream: new URL(cluster.server), cert, key, kubeconfig, tempDir, seed: options.seed })
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject)
      const address = server.address()
      if (typeof address === 'object' && address) resolve(address.port)
      else reject(new Error('the fault proxy has no port'))
    })
  })
}
