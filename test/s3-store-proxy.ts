// A loopback pass-through in front of the test cluster's S3 server (versitygw), for the store's
// failures that a real server shows only under load or in an outage: every request answered 500
// InternalError (as S3 does when it is in trouble), or the store going away in the middle of an
// upload (connections reset, then refused). What it forwards, it forwards unchanged: the signed
// requests stay valid, since the SDK signs the host and port it was given (the proxy's).
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'

/** What the proxy does with the next request. */
export type StoreMode = 'pass' | 'error-500' | 'gone'

export interface StoreProxy {
  /** http://127.0.0.1:<port>: the endpoint to give the SDK. */
  readonly url: string
  /** Requests seen, method and path with the query's upload parameters (`PUT /b/k?partNumber=1`). */
  readonly seen: string[]
  mode: StoreMode
  /** Called with each request before it is handled: a test switches the mode from here (mid-upload). */
  onRequest?: (seen: string[]) => void
  /** Set (from onRequest): the request being handled is passed on this many ms late (a slow upload); cleared once used. */
  delayMs?: number
  close(): Promise<void>
}

const S3_500 =
  '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>InternalError</Code><Message>We encountered an internal error. Please try again.</Message></Error>'

export async function startStoreProxy(upstream: string): Promise<StoreProxy> {
  const target = new URL(upstream)
  const sockets = new Set<Socket>()
  const proxy: StoreProxy = {
    url: '',
    seen: [],
    mode: 'pass',
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      })
  }
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const query = new URL(req.url ?? '/', 'http://x').searchParams
    const upload = ['uploads', 'partNumber', 'uploadId'].filter((p) => query.has(p)).map((p) => `${p}${query.get(p) ? `=${query.get(p)}` : ''}`)
    proxy.seen.push(`${req.method} ${req.url?.split('?')[0]}${upload.length ? `?${upload.join('&')}` : ''}`)
    proxy.onRequest?.(proxy.seen)
    if (proxy.mode === 'gone') return req.socket.destroy()
    if (proxy.mode === 'error-500') {
      req.resume()
      res.writeHead(500, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(S3_500) })
      return res.end(S3_500)
    }
    const pass = (): void => {
      const forward = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      })
      forward.on('error', () => res.destroy())
      req.pipe(forward)
    }
    const delay = proxy.delayMs
    proxy.delayMs = undefined
    if (delay === undefined) pass()
    else {
      req.pause()
      setTimeout(pass, delay)
    }
  })
  server.on('connection', (s: Socket) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  Object.assign(proxy, { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })
  return proxy
}
