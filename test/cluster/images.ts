// The real node's images, made on this machine (no registry outside is reachable): a shell image
// from Debian's busybox-static with its applet links, and the sandbox image from test/cluster/node's
// pause. Each is one gzip layer in an OCI image, pushed to the local registry over its HTTP API
// (the OCI distribution spec's monolithic upload), so the node pulls it as it would any image.
import { execFileSync } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { copyFileSync, chmodSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { gzipSync } from 'node:zlib'

/** Debian's busybox-static. */
const BUSYBOX = '/bin/busybox'

/** An image ready to push: its one layer and its configuration. */
export interface LocalImage {
  repository: string
  tag: string
  /** The gzip layers, lowest first. */
  layers: Buffer[]
  /** The configuration blob (JSON). */
  config: Buffer
}

/** An image in a registry. */
export interface ImageRef {
  registry: string
  repository: string
  tag: string
  /** The manifest's digest. */
  digest: string
}

export const sha256 = (data: Buffer): string => `sha256:${createHash('sha256').update(data).digest('hex')}`

/** A reproducible tar of `root` (owner 0, mtime 0, sorted). */
function tarOf(root: string): Buffer {
  return execFileSync('tar', ['--sort=name', '--owner=0', '--group=0', '--numeric-owner', '--mtime=@0', '-C', root, '-cf', '-', '.'], {
    maxBuffer: 512 * 1024 * 1024
  })
}

function image(repository: string, tag: string, roots: string[], config: Record<string, unknown>): LocalImage {
  const tars = roots.map(tarOf)
  const configBlob = Buffer.from(
    JSON.stringify({
      architecture: 'amd64',
      os: 'linux',
      config,
      rootfs: { type: 'layers', diff_ids: tars.map(sha256) },
      history: roots.map(() => ({ created_by: `job-sweeper test/cluster/images.ts (${repository})` }))
    })
  )
  return { repository, tag, layers: tars.map((t) => gzipSync(t)), config: configBlob }
}

/**
 * The shell image with one more layer of `bytes` random bytes (/payload) as `repository:tag`: a
 * layer no node has yet, so pulling it downloads it (a pass-through can hold that download).
 */
export function imageWithNewLayer(work: string, nodeBin: string, repository: string, tag: string, bytes: number): LocalImage {
  const base = join(work, 'base')
  const extra = join(work, 'extra')
  const { busybox } = buildImages(base, nodeBin)
  mkdirSync(extra, { recursive: true })
  writeFileSync(join(extra, 'payload'), randomBytes(bytes))
  const tar = tarOf(extra)
  rmSync(work, { recursive: true, force: true })
  const config = JSON.parse(busybox.config.toString()) as { rootfs: { diff_ids: string[] }; history: unknown[] }
  config.rootfs.diff_ids.push(sha256(tar))
  config.history.push({ created_by: `job-sweeper test/cluster/images.ts (${repository}: a new layer)` })
  return { repository, tag, layers: [...busybox.layers, gzipSync(tar)], config: Buffer.from(JSON.stringify(config)) }
}

/** Builds the shell and sandbox images in `work` (a scratch directory, emptied first). */
export function buildImages(work: string, nodeBin: string): { busybox: LocalImage; pause: LocalImage } {
  rmSync(work, { recursive: true, force: true })
  const shell = join(work, 'busybox')
  for (const sub of ['bin', 'sbin', 'usr/bin', 'usr/sbin', 'etc', 'tmp', 'proc', 'sys', 'dev']) mkdirSync(join(shell, sub), { recursive: true })
  chmodSync(join(shell, 'tmp'), 0o1777)
  copyFileSync(BUSYBOX, join(shell, 'bin/busybox'))
  chmodSync(join(shell, 'bin/busybox'), 0o755)
  for (const applet of execFileSync(BUSYBOX, ['--list-full'], { encoding: 'utf8' }).split('\n')) {
    if (!applet || applet === 'bin/busybox') continue
    const link = join(shell, applet)
    mkdirSync(dirname(link), { recursive: true })
    symlinkSync(relative(dirname(link), join(shell, 'bin/busybox')), link)
  }
  // User 1000 (the chart's runAsUser) has a name, as on a real base image.
  execFileSync('sh', [
    '-c',
    `printf 'root:x:0:0:root:/root:/bin/sh\\nnobody:x:65534:65534:nobody:/:/bin/false\\napp:x:1000:1000:app:/tmp:/bin/sh\\n' > "$1/etc/passwd"`,
    'sh',
    shell
  ])
  const busybox = image('busybox', 'test', [shell], {
    Env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'],
    Cmd: ['sh']
  })
  const sandbox = join(work, 'pause')
  mkdirSync(sandbox, { recursive: true })
  copyFileSync(join(nodeBin, 'pause'), join(sandbox, 'pause'))
  chmodSync(join(sandbox, 'pause'), 0o755)
  const pause = image('pause', 'test', [sandbox], { Entrypoint: ['/pause'] })
  rmSync(work, { recursive: true, force: true })
  return { busybox, pause }
}

async function pushBlob(registry: string, repository: string, blob: Buffer): Promise<string> {
  const digest = sha256(blob)
  const head = await fetch(`http://${registry}/v2/${repository}/blobs/${digest}`, { method: 'HEAD' })
  if (head.ok) return digest
  const start = await fetch(`http://${registry}/v2/${repository}/blobs/uploads/`, { method: 'POST' })
  const location = start.headers.get('location')
  if (start.status !== 202 || !location) throw new Error(`registry ${registry}: starting an upload to ${repository} answered ${start.status}`)
  const url = new URL(location, `http://${registry}`)
  url.searchParams.set('digest', digest)
  const put = await fetch(url, { method: 'PUT', body: new Uint8Array(blob), headers: { 'content-type': 'application/octet-stream' } })
  if (put.status !== 201) throw new Error(`registry ${registry}: uploading ${digest} to ${repository} answered ${put.status} ${await put.text()}`)
  return digest
}

/** Pushes `img` to `registry` (host:port, plain HTTP); returns where it is. */
export async function pushImage(registry: string, img: LocalImage, tag = img.tag): Promise<ImageRef> {
  const layerDigests: string[] = []
  for (const layer of img.layers) layerDigests.push(await pushBlob(registry, img.repository, layer))
  const configDigest = await pushBlob(registry, img.repository, img.config)
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: configDigest, size: img.config.length },
      layers: img.layers.map((layer, i) => ({ mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', digest: layerDigests[i], size: layer.length }))
    })
  )
  const res = await fetch(`http://${registry}/v2/${img.repository}/manifests/${tag}`, {
    method: 'PUT',
    body: new Uint8Array(manifest),
    headers: { 'content-type': 'application/vnd.oci.image.manifest.v1+json' }
  })
  if (res.status !== 201) throw new Error(`registry ${registry}: pushing ${img.repository}:${tag} answered ${res.status} ${await res.text()}`)
  return { registry, repository: img.repository, tag, digest: sha256(manifest) }
}

/** The instructions of a Containerfile's last stage that make an image's configuration. */
function containerfileConfig(containerfile: string): Record<string, unknown> {
  const lines = containerfile.replace(/\\\n\s*/g, ' ').split('\n')
  const stage = lines.slice(lines.findLastIndex((l) => l.startsWith('FROM ')))
  const value = (instruction: string): string | undefined =>
    stage
      .find((l) => l.startsWith(`${instruction} `))
      ?.slice(instruction.length + 1)
      .trim()
  const env = [...(value('ENV') ?? '').matchAll(/(\w+)=(\S+)/g)].map(([, k, v]) => `${k}=${v}`)
  return {
    Env: env,
    User: value('USER'),
    WorkingDir: value('WORKDIR'),
    Entrypoint: JSON.parse(value('ENTRYPOINT') ?? '[]') as string[],
    Cmd: JSON.parse(value('CMD') ?? '[]') as string[]
  }
}

/**
 * job-sweeper's image as image/Containerfile makes it, assembled here (its base cannot be pulled):
 * a layer with `node` (the Node 24 the tests run) at /usr/local/bin and the shared libraries it
 * loads at their paths, /etc/passwd with user 1000 and /tmp; then a layer of `rootfs` (the build
 * context's rootfs/ that scripts/image.sh makes: /opt/job-sweeper). Its configuration (user,
 * entrypoint, environment) is read from `containerfile`.
 */
export function jobSweeperImage(work: string, node: string, rootfs: string, containerfile: string, tag: string): LocalImage {
  rmSync(work, { recursive: true, force: true })
  const runtime = join(work, 'node')
  for (const sub of ['usr/local/bin', 'etc', 'tmp']) mkdirSync(join(runtime, sub), { recursive: true })
  chmodSync(join(runtime, 'tmp'), 0o1777)
  copyFileSync(node, join(runtime, 'usr/local/bin/node'))
  chmodSync(join(runtime, 'usr/local/bin/node'), 0o755)
  // ldd's lines: "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x…)" and "/lib64/ld-linux-x86-64.so.2 (0x…)".
  const libraries = [...execFileSync('ldd', [node], { encoding: 'utf8' }).matchAll(/(\/\S+) \(0x/g)].map(([, path]) => path)
  if (!libraries.some((l) => l.includes('libc.so'))) throw new Error(`ldd ${node} names no libc: is it a dynamic glibc binary?`)
  for (const library of libraries) {
    mkdirSync(join(runtime, dirname(library)), { recursive: true })
    copyFileSync(library, join(runtime, library))
  }
  writeFileSync(join(runtime, 'etc/passwd'), 'root:x:0:0:root:/root:/sbin/nologin\nnode:x:1000:1000:node:/tmp:/sbin/nologin\n')
  writeFileSync(join(runtime, 'etc/group'), 'root:x:0:\nnode:x:1000:\n')
  const layers = [runtime, rootfs].map(tarOf)
  rmSync(work, { recursive: true, force: true })
  const config = Buffer.from(
    JSON.stringify({
      architecture: 'amd64',
      os: 'linux',
      config: containerfileConfig(containerfile),
      rootfs: { type: 'layers', diff_ids: layers.map(sha256) },
      history: [
        { created_by: 'job-sweeper test/cluster/images.ts (Node and its libraries)' },
        { created_by: 'job-sweeper test/cluster/images.ts (/opt/job-sweeper)' }
      ]
    })
  )
  // Level 1: Node is 120 MB, and the layer lives for one test run.
  return { repository: 'job-sweeper', tag, layers: layers.map((t) => gzipSync(t, { level: 1 })), config }
}
