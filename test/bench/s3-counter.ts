// Counts the requests made to the cluster's S3 server, as the server receives them: a plain HTTP
// proxy in front of it, through which the keeper (its --s3-endpoint), the minimal loop and the raw
// PUTs all reach it. A count at the wire, not a constant: every PUT, GET and retry of the SDK is
// one. The signature holds: the Host header the client signed is passed on as it came, and the
// headers dropped here (Expect, the hop-by-hop ones) are never signed.
//
// Run as its own process (so its CPU is its own): scripts/node24 test/bench/s3-counter.ts <S3 endpoint>;
// prints its endpoint on the first line; GET <its endpoint>/__counts answers the counts so far, as
// JSON by `METHOD what` (what: the kind of key a PUT writes: log, job.json, attempts/, other).
import { Agent, createServer, request, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'

const target = new URL(process.argv[2] ?? '')
const agent = new Agent({ keepAlive: true })
const counts: Record<string, number> = {}
const HOP_BY_HOP = ['connection', 'keep-alive', 'transfer-encoding', 'expect', 'proxy-connection', 'upgrade']

const passOn = (headers: IncomingHttpHeaders): IncomingHttpHeaders =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.includes(name.toLowerCase())))

/** A PUT's kind of key, by how the keeper and the loop name them. */
function what(method: string, url: string): string {
  if (method !== 'PUT') return method
  const path = url.split('?')[0]
  if (path.endsWith('.log')) return 'PUT log'
  if (path.endsWith('/job.json')) return 'PUT job.json'
  if (path.includes('/attempts/')) return 'PUT attempts/'
  return 'PUT other'
}

const server = createServer((req, res) => {
  const url = req.url ?? '/'
  if (url === '/__counts') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(counts))
  const kind = what(req.method ?? 'GET', url)
  counts[kind] = (counts[kind] ?? 0) + 1
  const upstream = request({ host: target.hostname, port: target.port, method: req.method, path: url, headers: passOn(req.headers), agent }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, passOn(answer.headers))
    answer.pipe(res)
  })
  upstream.on('error', (e) => res.destroy(e))
  req.pipe(upstream)
})
server.listen(0, '127.0.0.1', () => process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`))
process.on('SIGTERM', () => {
  server.closeAllConnections()
  server.close(() => process.exit(0))
  agent.destroy()
})
