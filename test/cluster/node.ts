// The real node (issue 25): a kubelet with containerd and runc, beside kwok's fake node, so tests can
// see what a real container does (its real log, exit code, OOM kill, image pull, the kubelet's own
// answers) instead of an imitation of it.
//
// It is built like a kind node, without a container engine:
// - its own network namespace (`jsw-<id>`) with one veth pair: the node's address inside it, the
//   pair's other end outside, so the API server reaches the kubelet (logs) at an address inside a
//   namespace of ours, never one of the machine's own interfaces. There is no default route: pods
//   reach nothing but their node.
// - The API server and the registry listen on the machine's loopback; `forward` (test/cluster/node)
//   listens on the namespace's loopback at the same ports and connects them through, so the kubelet
//   uses the cluster's kubeconfig URL and containerd pulls from the same 127.0.0.1:<port> tests push to.
// - its own cgroup in every cgroup v1 hierarchy (`/jsw-<id>`): the kubelet's cgroupRoot (pods under
//   it) and, under `runtime/`, the kubelet, containerd and the shims containerd starts. Stopping the
//   node kills every process in it, so nothing it started outlives it.
// - every state directory under <dir>/node (kubelet, containerd, pod logs, the pods' network
//   namespace mounts), unmounted and removed on stop.
// - a taint and a label: only a pod that asks for the real node (realNodePod()) runs there; every
//   other pod of the suites stays on kwok.
//
// The kubelet sets three kernel parameters of the whole machine when they differ from what it wants
// (vm.overcommit_memory, kernel.panic, kernel.panic_on_oops). The machine's own values are recorded
// by the first node to start (in MACHINE_FILE) and written back by the last to stop, so nodes of
// several clusters that overlap, in any order, leave the machine as they found it.
import { execFile as execFileCallback, execFileSync } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { CoreV1Api, V1PodSpec } from '@kubernetes/client-node'
import { freePort, isAlive, logTail, recordedPid, startProcess, stopProcesses, waitFor } from './processes.ts'
import { buildImages, pushImage, type ImageRef } from './images.ts'

const execFile = promisify(execFileCallback)

/** The real node's name. */
export const REAL_NODE_NAME = 'real-node-0'
/** Label and taint key of the real node: a pod must select it and tolerate it (realNodePod()). */
export const REAL_NODE_LABEL = 'job-sweeper.test/real-node'

/** The processes of the node under <dir>/pids, in start order (stopped in reverse). */
export const NODE_PROCESSES = ['8a-registry', '8b-forward', '8c-containerd', '8d-kubelet'] as const

/** The v1 hierarchies the node makes its cgroup in (the kubelet needs every one it uses). */
const CGROUP_V1 = '/sys/fs/cgroup'

/** Kernel parameters the kubelet sets (container manager, protectKernelDefaults: false). */
const KUBELET_SYSCTLS = ['vm.overcommit_memory', 'kernel.panic', 'kernel.panic_on_oops']

/** Where the real node is, as recorded in <dir>/node/node.json and cluster.json. */
export interface RealNode {
  /** The Node's name. */
  name: string
  /** The node's address, inside its network namespace. */
  address: string
  /** The network namespace, under /run/netns. */
  netns: string
  /** The veth end outside the namespace. */
  hostLink: string
  /** The node's cgroup in every v1 hierarchy (the kubelet's cgroupRoot). */
  cgroup: string
  /** The node's state directory. */
  stateDir: string
  /** host:port of the local OCI registry (the CNCF distribution registry) on loopback. */
  registry: string
  /**
   * host:port on loopback that the node reaches too, where nothing listens until a test starts a
   * server there: a pass-through in front of the registry that holds a pull (a slow registry).
   */
  pullProxy: string
  /** A shell image (busybox) in the registry, for test pods. */
  testImage: string
  /** The sandbox image, pinned in containerd. */
  pauseImage: string
  /** The API server as the node's pods reach it: the `kubernetes` Service's address and port. */
  apiService: string
  /** The cluster's S3 server as the node's pods reach it (http://<address>:<port>), if it has one. */
  s3Endpoint?: string
}

/**
 * What the machine was before its first node started, written back when its last node stops: the
 * kernel parameters' values, and the directories the nodes' programs write to that did not exist.
 * On /run: gone with a reboot, as the kernel parameters the kubelet set are.
 */
const MACHINE_FILE = '/run/job-sweeper-real-node.json'

export interface MachineBefore {
  sysctls: Record<string, string>
  createdDirs: string[]
}

/**
 * Why this host can never run the real node (not root; not a cgroup v1 host, as GitHub's hosted
 * runners are not), or undefined. scripts/tools.sh's real_node_host says the same in the shell.
 */
export function realNodeHost(): string | undefined {
  const why = [
    ...(process.getuid?.() !== 0 ? ['root (network namespaces, cgroups, mounts)'] : []),
    ...(existsSync(join(CGROUP_V1, 'memory', 'cgroup.procs')) ? [] : [`a cgroup v1 host (this one has no ${CGROUP_V1}/memory: cgroup v2)`])
  ]
  return why.length ? `the real node needs ${why.join(' and ')}` : undefined
}

/** Why this machine cannot run the real node, or undefined when it can. */
export function realNodeUnsupported(nodeBin: string): string | undefined {
  const host = realNodeHost()
  if (host) return host
  for (const binary of ['containerd', 'containerd-shim-runc-v2', 'runc', 'registry', 'pause', 'forward']) {
    if (existsSync(join(nodeBin, binary))) continue
    // build.sh leaves the reason it did not build the node's runtime (a missing gcc, a Debian package).
    const notBuilt = join(nodeBin, '.not-built')
    return existsSync(notBuilt) ? readFileSync(notBuilt, 'utf8').trim() : `${join(nodeBin, binary)} was not built (test/cluster/build.sh says why)`
  }
  if (!existsSync('/bin/busybox')) return "no /bin/busybox (Debian's busybox-static) for the test image"
  for (const plugin of ['bridge', 'host-local', 'loopback']) {
    if (!existsSync(join(CNI_BIN, plugin))) return `no CNI plugin ${CNI_BIN}/${plugin} (Debian's containernetworking-plugins)`
  }
  for (const tool of ['ip', 'nsenter', 'mount', 'umount']) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' })
    } catch {
      return `no ${tool} on PATH`
    }
  }
  return undefined
}

/** Debian's containernetworking-plugins. */
const CNI_BIN = '/usr/lib/cni'

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/** The node's identifiers, derived from the cluster's directory so two clusters never share them. */
function identity(dir: string): { id: string; netns: string; hostLink: string; cgroup: string } {
  const id = createHash('sha256').update(dir).digest('hex').slice(0, 6)
  return { id, netns: `jsw-${id}`, hostLink: `jsw${id}h`, cgroup: `/jsw-${id}` }
}

async function run(command: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await execFile(command, args, { encoding: 'utf8' })
    return stdout
  } catch (e) {
    const err = e as { stderr?: string; message: string }
    throw new Error(`${command} ${args.join(' ')}: ${err.stderr?.trim() || err.message}`, { cause: e })
  }
}

/** A /30 in 10.233.0.0/16 no interface of this machine uses: the node's end is .2, the outside end .1. */
async function freeSubnet(): Promise<{ outside: string; node: string }> {
  const used = await run('ip', ['-o', '-4', 'addr', 'show'])
  for (let attempt = 0; attempt < 100; attempt++) {
    const n = 4 * Math.floor(Math.random() * 16_000) + 4
    const base = `10.233.${Math.floor(n / 256)}.`
    const last = n % 256
    const outside = `${base}${last + 1}`
    if (!used.includes(` ${outside}/`) && !used.includes(` ${base}${last + 2}/`)) return { outside, node: `${base}${last + 2}` }
  }
  throw new Error('no free /30 in 10.233.0.0/16')
}

/**
 * Every hierarchy mounted under /sys/fs/cgroup (named ones included), as directories. With
 * `v1Only`, without the cgroup2 of a hybrid host (/sys/fs/cgroup/unified), where the node makes
 * nothing itself but runc does.
 */
function cgroupHierarchies(v1Only = true): string[] {
  return readdirSync(CGROUP_V1)
    .map((name) => join(CGROUP_V1, name))
    .filter((path) => !(v1Only && path === join(CGROUP_V1, 'unified')) && existsSync(join(path, 'cgroup.procs')) && !statSync(path).isSymbolicLink())
}

function makeCgroups(cgroup: string): void {
  for (const h of cgroupHierarchies()) {
    for (const sub of [cgroup, `${cgroup}/runtime`]) {
      const path = join(h, sub)
      mkdirSync(path, { recursive: true })
      // A new cpuset cgroup has no CPUs or memory nodes: it takes its parent's.
      if (h.endsWith('/cpuset')) {
        for (const f of ['cpuset.cpus', 'cpuset.mems']) writeFileSync(join(path, f), readFileSync(join(path, '..', f)))
      }
    }
  }
}

/** Moves `pid` into the node's runtime cgroup in every hierarchy (its children follow it). */
function enterCgroup(cgroup: string, pid: number): void {
  for (const h of cgroupHierarchies()) writeFileSync(join(h, cgroup, 'runtime', 'cgroup.procs'), String(pid))
}

/** Every pid in the node's cgroup tree (of one hierarchy: each process is in every one). */
function cgroupPids(cgroup: string): number[] {
  const root = join(CGROUP_V1, 'pids', cgroup)
  if (!existsSync(root)) return []
  const pids: number[] = []
  const walk = (path: string): void => {
    try {
      for (const line of readFileSync(join(path, 'cgroup.procs'), 'utf8').split('\n')) if (line) pids.push(Number(line))
      for (const entry of readdirSync(path, { withFileTypes: true })) if (entry.isDirectory()) walk(join(path, entry.name))
    } catch {
      // removed meanwhile
    }
  }
  walk(root)
  return pids
}

/** The cgroup directories left of the node, in every hierarchy. */
function nodeCgroupsLeft(dir: string): string[] {
  const { cgroup } = identity(dir)
  return cgroupHierarchies(false)
    .map((h) => join(h, cgroup))
    .filter((path) => existsSync(path))
}

/** Mount points under `root`, deepest first. */
function mountsUnder(root: string): string[] {
  const points = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((point): point is string => !!point)
    .map((point) => point.replace(/\\040/g, ' '))
    .filter((point) => point === root || point.startsWith(`${root}/`))
  return [...new Set(points)].sort((a, b) => b.length - a.length)
}

/**
 * Everything a running node (started in `dir`) has on this machine, each as `<kind> <what>`: its
 * processes (and every one in its cgroup: containers, shims), mounts, network namespace, veth link,
 * cgroups, and the files its programs write outside <dir>/node (shim sockets, container log links,
 * the CNI cache). footprintLeft() says which of them still exist.
 */
export async function nodeFootprint(dir: string): Promise<string[]> {
  const { cgroup } = identity(dir)
  const state = join(dir, 'node')
  const pids = cgroupPids(cgroup)
  const files = [
    ...shimSocketsOf(pids).filter((socket) => existsSync(socket)),
    ...safeList(CNI_CACHE)
      .filter((name) => containerIds(state).some((id) => name.includes(`-${id}-`)))
      .map((name) => join(CNI_CACHE, name)),
    ...safeList(CONTAINER_LOG_LINKS)
      .map((name) => join(CONTAINER_LOG_LINKS, name))
      .filter((link) => linksInto(link, state))
  ]
  return [...(await nodeLeftovers(dir)), ...files.map((f) => `file ${f}`)]
}

/** Which of a footprint's things still exist. */
export async function footprintLeft(footprint: string[]): Promise<string[]> {
  const netns = (await run('ip', ['netns', 'list'])).split('\n').map((line) => line.split(' ')[0])
  const mounts = new Set(
    readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .map((line) => line.split(' ')[4])
  )
  return footprint.filter((entry) => {
    const [kind, ...rest] = entry.split(' ')
    const what = rest.join(' ')
    if (kind === 'process') return running(Number(/^\d+/.exec(what)?.[0]))
    if (kind === 'mount') return mounts.has(what)
    if (kind === 'network') return netns.includes(what.replace(/^namespace /, ''))
    if (kind === 'link') return existsSync(`/sys/class/net/${what}`)
    if (kind === 'cgroup' || kind === 'file') return existsOrLink(what)
    return true
  })
}

/** Alive and not a zombie (a killed child its parent has not reaped yet holds nothing but its pid). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z'
  } catch {
    return false
  }
}

function existsOrLink(path: string): boolean {
  try {
    lstatSync(path)
    return true
  } catch {
    return false
  }
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir)
  } catch {
    return []
  }
}

function linksInto(link: string, state: string): boolean {
  try {
    return readlinkSync(link).startsWith(`${state}/`)
  } catch {
    return false
  }
}

/** What is left of a node (started in `dir`) on this machine: empty after stopRealNode(). */
export async function nodeLeftovers(dir: string): Promise<string[]> {
  const { netns, hostLink, cgroup } = identity(dir)
  const left: string[] = []
  for (const pid of cgroupPids(cgroup)) left.push(`process ${pid} in cgroup ${cgroup}`)
  for (const name of NODE_PROCESSES) {
    const pid = recordedPid(dir, name)
    if (pid && isAlive(pid)) left.push(`process ${pid} (${name})`)
  }
  for (const point of mountsUnder(join(dir, 'node'))) left.push(`mount ${point}`)
  if ((await run('ip', ['netns', 'list'])).split('\n').some((line) => line.split(' ')[0] === netns)) left.push(`network namespace ${netns}`)
  if (existsSync(`/sys/class/net/${hostLink}`)) left.push(`link ${hostLink}`)
  for (const path of nodeCgroupsLeft(dir)) left.push(`cgroup ${path}`)
  return left
}

/** The machine's record of what it was before its first node (undefined when no node has run since the last stopped). */
export function machineBefore(): MachineBefore | undefined {
  return existsSync(MACHINE_FILE) ? (JSON.parse(readFileSync(MACHINE_FILE, 'utf8')) as MachineBefore) : undefined
}

/** The kernel parameters' values now. */
export function readSysctls(): Record<string, string> {
  return Object.fromEntries(KUBELET_SYSCTLS.map((name) => [name, readFileSync(`/proc/sys/${name.replace(/\./g, '/')}`, 'utf8').trim()]))
}

function writeSysctls(values: Record<string, string>): void {
  for (const [name, value] of Object.entries(values)) writeFileSync(`/proc/sys/${name.replace(/\./g, '/')}`, value)
}

/**
 * Stops the node of the cluster in `dir` and removes everything it made: its processes (and every
 * process in its cgroup: containers, shims), mounts, veth pair, network namespace,
 * cgroups and state; writes the kernel parameters back. Safe to call when no node ran.
 */
export async function stopRealNode(dir: string): Promise<void> {
  const { netns, hostLink, cgroup } = identity(dir)
  await stopProcesses(dir, 5000, [...NODE_PROCESSES])
  const shimSockets = shimSocketsOf(cgroupPids(cgroup))
  for (let round = 0; round < 50; round++) {
    const pids = cgroupPids(cgroup)
    if (pids.length === 0) break
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // gone
      }
    }
    await sleep(100)
  }
  for (const point of mountsUnder(join(dir, 'node'))) await run('umount', ['-l', point]).catch(() => undefined)
  // The veth pair by its outside end, at once: a namespace's deletion takes its links down later,
  // in the kernel's own time (a CI run found the outside end still there after the stop).
  await run('ip', ['link', 'delete', hostLink]).catch(() => undefined)
  await run('ip', ['netns', 'delete', netns]).catch(() => undefined)
  for (const h of cgroupHierarchies(false)) removeCgroupTree(join(h, cgroup))
  removeMachineFiles(join(dir, 'node'), shimSockets)
  rmSync(join(dir, 'node'), { recursive: true, force: true })
  // The last node of the machine puts back what the first found.
  const others = (await run('ip', ['netns', 'list'])).split('\n').some((line) => line.startsWith('jsw-'))
  if (!others && existsSync(MACHINE_FILE)) {
    const before = JSON.parse(readFileSync(MACHINE_FILE, 'utf8')) as MachineBefore
    writeSysctls(before.sysctls)
    removeCreatedDirs(before.createdDirs)
    rmSync(MACHINE_FILE, { force: true })
  }
}

/**
 * The paths outside <dir>/node the node's programs write to, fixed in their code: containerd's
 * shim sockets, the kubelet's links to container logs, the CNI library's result cache, and `ip
 * netns`'s directory. Those the node made are removed on stop (and the directories, when it made them).
 */
const SHIM_SOCKETS = '/run/containerd/s'
const CONTAINER_LOG_LINKS = '/var/log/containers'
const CNI_CACHE = '/var/lib/cni/results'
const MACHINE_DIRS = [SHIM_SOCKETS, '/run/containerd', CONTAINER_LOG_LINKS, CNI_CACHE, '/var/lib/cni', '/run/netns']

/** The sockets of the shims running in the node's cgroup (containerd names each by a hash of its address, namespace and id). */
function shimSocketsOf(pids: number[]): string[] {
  const sockets: string[] = []
  for (const pid of pids) {
    let args: string[]
    try {
      args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
    } catch {
      continue
    }
    if (!args[0]?.endsWith('containerd-shim-runc-v2')) continue
    const flag = (name: string): string | undefined => args[args.indexOf(name) + 1]
    const [ns, id, address] = [flag('-namespace'), flag('-id'), flag('-address')]
    if (!ns || !id || !address) continue
    for (const path of [join(address, ns, id), join(address, ns, id, 'debug')]) {
      sockets.push(join(SHIM_SOCKETS, createHash('sha256').update(path).digest('hex')))
    }
  }
  return sockets
}

/** The ids of the node's sandboxes and containers, from containerd's state (CNI names its cache files by them). */
function containerIds(state: string): string[] {
  const ids: string[] = []
  for (const path of [
    join(state, 'containerd/root/io.containerd.grpc.v1.cri/sandboxes'),
    join(state, 'containerd/root/io.containerd.grpc.v1.cri/containers'),
    join(state, 'containerd/state/io.containerd.runtime.v2.task/k8s.io')
  ]) {
    try {
      ids.push(...readdirSync(path))
    } catch {
      // none
    }
  }
  return ids
}

function removeMachineFiles(state: string, shimSockets: string[]): void {
  for (const socket of shimSockets) rmSync(socket, { force: true })
  const ids = containerIds(state)
  for (const name of safeList(CNI_CACHE)) if (ids.some((id) => name.includes(`-${id}-`))) rmSync(join(CNI_CACHE, name), { force: true })
  for (const name of safeList(CONTAINER_LOG_LINKS)) {
    const link = join(CONTAINER_LOG_LINKS, name)
    if (linksInto(link, state)) rmSync(link, { force: true })
  }
}

function removeCreatedDirs(createdDirs: string[]): void {
  for (const path of MACHINE_DIRS) {
    if (!createdDirs.includes(path)) continue
    try {
      // `ip netns add` makes its directory a mount point of its own (shared, for the namespaces' bind mounts).
      if (path === '/run/netns' && readdirSync(path).length === 0 && mountsUnder(path).includes(path)) execFileSync('umount', [path])
      rmdirSync(path)
    } catch {
      // not empty (another user's files) or gone
    }
  }
}

/** rmdir a cgroup and its children, deepest first (a cgroup directory holds only kernel files). */
function removeCgroupTree(path: string): void {
  if (!existsSync(path)) return
  for (const entry of readdirSync(path, { withFileTypes: true })) if (entry.isDirectory()) removeCgroupTree(join(path, entry.name))
  try {
    rmdirSync(path)
  } catch {
    // busy: nodeLeftovers() names it
  }
}

/** What the node's start needs from the cluster. */
export interface NodeStartOptions {
  /** The cluster's directory. */
  dir: string
  /** The set's binaries (kubelet). */
  bin: string
  /** containerd, runc, registry, pause, forward. */
  nodeBin: string
  /** The API server's port on 127.0.0.1. */
  apiPort: number
  /** The API server's serving certificate (the kubelet's kubeconfig trusts it). */
  caFile: string
  /** The kubelet's token (a line of the API server's token file). */
  kubeletToken: string
  /** Progress lines. */
  step: (what: string) => void
  /** The Node's name: REAL_NODE_NAME unless a test starts a second node. */
  name?: string
  /** The value of its REAL_NODE_LABEL label and taint: `true` unless a test starts a second node (whose pods must not be the suites'). */
  labelValue?: string
  /** The S3 server's port on 127.0.0.1, which the pods reach on the API server's Service address. */
  s3Port?: number
}

/**
 * Starts the real node of the cluster in `dir` and waits until it is Ready. Throws, having stopped
 * what it started, when any part fails.
 */
export async function startRealNode(core: CoreV1Api, options: NodeStartOptions): Promise<RealNode> {
  const { dir, bin, nodeBin, apiPort, caFile, kubeletToken, step, name = REAL_NODE_NAME, labelValue = 'true', s3Port } = options
  await stopRealNode(dir)
  const { netns, hostLink, cgroup } = identity(dir)
  const state = join(dir, 'node')
  for (const sub of ['kubelet', 'containerd/root', 'containerd/state', 'pod-logs', 'cni/net.d', 'cni/ipam', 'registry', 'certs.d']) {
    mkdirSync(join(state, sub), { recursive: true })
  }
  // What the last node's stop puts back, recorded before anything changes, by the first node
  // (one whose cluster died without a stop leaves the file, and its record stands).
  if (!existsSync(MACHINE_FILE)) {
    const before: MachineBefore = { sysctls: readSysctls(), createdDirs: MACHINE_DIRS.filter((path) => !existsSync(path)) }
    writeFileSync(MACHINE_FILE, JSON.stringify(before))
  }
  try {
    // The registry, on the machine's loopback; the images the node runs.
    const [registryPort, pullProxyPort] = [await freePort(), await freePort()]
    const registry = `127.0.0.1:${registryPort}`
    const pullProxy = `127.0.0.1:${pullProxyPort}`
    writeFileSync(join(state, 'registry.json'), JSON.stringify(registryConfig(registry, join(state, 'registry'))))
    startProcess(dir, '8a-registry', join(nodeBin, 'registry'), ['serve', join(state, 'registry.json')], { OTEL_TRACES_EXPORTER: 'none' })
    await waitFor(
      'the registry',
      async () => (await fetch(`http://${registry}/v2/`, { signal: AbortSignal.timeout(2000) })).ok,
      30_000,
      () => logTail(dir, '8a-registry')
    )
    const images = await buildImages(join(state, 'images'), nodeBin)
    const testImage = await pushImage(registry, images.busybox)
    const pauseImage = await pushImage(registry, images.pause)
    step(`registry ready at ${registry}, images pushed`)

    // The network namespace and its veth pair; the cgroups.
    const { outside, node: address } = await freeSubnet()
    await run('ip', ['netns', 'add', netns])
    await run('ip', ['link', 'add', hostLink, 'type', 'veth', 'peer', 'name', `${hostLink.slice(0, -1)}n`])
    await run('ip', ['link', 'set', `${hostLink.slice(0, -1)}n`, 'netns', netns])
    await run('ip', ['-n', netns, 'link', 'set', `${hostLink.slice(0, -1)}n`, 'name', 'eth0'])
    await run('ip', ['-n', netns, 'addr', 'add', `${address}/30`, 'dev', 'eth0'])
    await run('ip', ['-n', netns, 'link', 'set', 'eth0', 'up'])
    await run('ip', ['-n', netns, 'link', 'set', 'lo', 'up'])
    // The API server as its pods find it (KUBERNETES_SERVICE_HOST/PORT, the in-cluster
    // configuration): the `kubernetes` Service's address, which kube-proxy would route to the API
    // server, is the node's own and forward listens on it; the pods' network routes it to the node.
    // (No kube-proxy runs: a Service of the tests' own has no address the pods reach.)
    const api = await apiService(core)
    await run('ip', ['-n', netns, 'addr', 'add', `${api.address}/32`, 'dev', 'lo'])
    await run('ip', ['addr', 'add', `${outside}/30`, 'dev', hostLink])
    await run('ip', ['link', 'set', hostLink, 'up'])
    makeCgroups(cgroup)
    const node: RealNode = {
      name,
      address,
      netns,
      hostLink,
      cgroup,
      stateDir: state,
      registry,
      pullProxy,
      testImage: imageName(testImage),
      pauseImage: imageName(pauseImage),
      apiService: `${api.address}:${api.port}`,
      s3Endpoint: s3Port ? `http://${api.address}:${s3Port}` : undefined
    }
    writeFileSync(join(state, 'node.json'), JSON.stringify(node, null, 2))
    const netnsPath = `/run/netns/${netns}`

    const forwardPid = startProcess(dir, '8b-forward', join(nodeBin, 'forward'), [
      netnsPath,
      String(apiPort),
      String(registryPort),
      String(pullProxyPort),
      `${api.address}:${api.port}=${apiPort}`,
      // The S3 server on the same address: the pods' one route leads there.
      ...(s3Port ? [`${api.address}:${s3Port}`] : [])
    ])
    enterCgroup(cgroup, forwardPid)

    writeFileSync(join(state, 'cni/net.d/10-bridge.conflist'), JSON.stringify(cniConfig(join(state, 'cni/ipam'), api.address)))
    // Plain HTTP to the registry and to the pull proxy's port.
    for (const host of [registry, pullProxy]) {
      mkdirSync(join(state, 'certs.d', host), { recursive: true })
      writeFileSync(join(state, 'certs.d', host, 'hosts.toml'), `server = "http://${host}"\n\n[host."http://${host}"]\n  capabilities = ["pull", "resolve"]\n`)
    }
    writeFileSync(join(state, 'containerd.toml'), containerdConfig(state, nodeBin, node.pauseImage))
    const containerdPid = startProcess(
      dir,
      '8c-containerd',
      'nsenter',
      [`--net=${netnsPath}`, '--', join(nodeBin, 'containerd'), '--config', join(state, 'containerd.toml')],
      {
        PATH: `${nodeBin}:${process.env.PATH ?? ''}`
      }
    )
    enterCgroup(cgroup, containerdPid)
    const socket = join(state, 'containerd.sock')
    await waitFor(
      'containerd',
      async () => {
        await run(join(nodeBin, 'ctr'), ['--address', socket, 'version'])
        return true
      },
      30_000,
      () => logTail(dir, '8c-containerd')
    )
    step('containerd ready')

    const kubeconfig = join(state, 'kubelet.kubeconfig')
    writeFileSync(kubeconfig, kubeletKubeconfig(`https://127.0.0.1:${apiPort}`, caFile, kubeletToken), { mode: 0o600 })
    writeFileSync(join(state, 'kubelet.yaml'), JSON.stringify(kubeletConfig(node, state, labelValue)))
    const kubeletPid = startProcess(dir, '8d-kubelet', 'nsenter', [
      `--net=${netnsPath}`,
      '--',
      join(bin, 'kubelet'),
      `--config=${join(state, 'kubelet.yaml')}`,
      `--kubeconfig=${kubeconfig}`,
      `--root-dir=${join(state, 'kubelet')}`,
      `--hostname-override=${name}`,
      `--node-ip=${address}`,
      `--node-labels=${REAL_NODE_LABEL}=${labelValue}`,
      '--v=1'
    ])
    enterCgroup(cgroup, kubeletPid)
    await waitFor(
      `node ${name} Ready`,
      async () => {
        const n = await core.readNode({ name })
        return n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false
      },
      90_000,
      () => `kubelet:\n${logTail(dir, '8d-kubelet')}\ncontainerd:\n${logTail(dir, '8c-containerd', 8)}`
    )
    step(`real node ${name} Ready at ${address}`)
    return node
  } catch (e) {
    await stopRealNode(dir).catch(() => undefined)
    throw e
  }
}

function imageName(ref: ImageRef): string {
  return `${ref.registry}/${ref.repository}:${ref.tag}`
}

/** The distribution registry's configuration (JSON is YAML). */
function registryConfig(address: string, root: string): object {
  return {
    version: 0.1,
    log: { level: 'warn', accesslog: { disabled: true } },
    storage: { filesystem: { rootdirectory: root }, delete: { enabled: true } },
    http: { addr: address }
  }
}

/** The `kubernetes` Service's address and port: where a pod's in-cluster configuration finds the API server. */
async function apiService(core: CoreV1Api): Promise<{ address: string; port: number }> {
  const service = await core.readNamespacedService({ namespace: 'default', name: 'kubernetes' })
  const address = service.spec?.clusterIP
  const port = service.spec?.ports?.find((p) => p.name === 'https')?.port
  if (!address || !port) throw new Error(`the kubernetes Service has no address or https port: ${JSON.stringify(service.spec)}`)
  return { address, port }
}

/**
 * The pods' network, inside the node's namespace: a bridge, addresses from host-local, and one
 * route out: to the API server's Service address (`apiAddress`), which the node holds.
 */
function cniConfig(ipamDir: string, apiAddress: string): object {
  return {
    cniVersion: '1.0.0',
    name: 'job-sweeper-node',
    plugins: [
      {
        type: 'bridge',
        bridge: 'cni0',
        isGateway: true,
        ipMasq: false,
        ipam: { type: 'host-local', ranges: [[{ subnet: '10.88.0.0/16' }]], routes: [{ dst: `${apiAddress}/32` }], dataDir: ipamDir }
      }
    ]
  }
}

/** containerd's configuration (version 3, containerd 2.x). */
function containerdConfig(state: string, nodeBin: string, pauseImage: string): string {
  const q = (s: string): string => JSON.stringify(s)
  return `version = 3
root = ${q(join(state, 'containerd/root'))}
state = ${q(join(state, 'containerd/state'))}
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.blockfile", "io.containerd.snapshotter.v1.erofs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing", "io.containerd.nri.v1.nri", "io.containerd.internal.v1.opt"]

[grpc]
  address = ${q(join(state, 'containerd.sock'))}

[ttrpc]
  address = ${q(join(state, 'containerd.sock.ttrpc'))}

[debug]
  level = "warn"

[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = ${q(pauseImage)}
  [plugins."io.containerd.cri.v1.images".registry]
    config_path = ${q(join(state, 'certs.d'))}

[plugins."io.containerd.cri.v1.runtime"]
  # This VM drops CAP_SYS_RESOURCE: no process may lower its OOM score (runc init fails otherwise).
  restrict_oom_score_adj = true
  # The pods' network namespaces under <state>/netns, not the machine's /var/run/netns.
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        BinaryName = ${q(join(nodeBin, 'runc'))}
        Root = ${q(join(state, 'runc'))}
        SystemdCgroup = false
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = [${q(CNI_BIN)}]
    conf_dir = ${q(join(state, 'cni/net.d'))}

[plugins."io.containerd.grpc.v1.cri"]
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
`
}

function kubeletKubeconfig(server: string, caFile: string, token: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'local', cluster: { server, 'certificate-authority-data': readFileSync(caFile).toString('base64') } }],
    users: [{ name: 'kubelet', user: { token } }],
    contexts: [{ name: 'local', context: { cluster: 'local', user: 'kubelet' } }],
    'current-context': 'local'
  })
}

/** The kubelet's configuration (JSON is YAML). */
function kubeletConfig(node: RealNode, state: string, labelValue: string): object {
  return {
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    address: node.address,
    readOnlyPort: 0,
    healthzBindAddress: '127.0.0.1',
    // The API server reads logs without a client certificate: anonymous, and every request allowed.
    authentication: { anonymous: { enabled: true }, webhook: { enabled: false } },
    authorization: { mode: 'AlwaysAllow' },
    containerRuntimeEndpoint: `unix://${join(state, 'containerd.sock')}`,
    cgroupDriver: 'cgroupfs',
    cgroupRoot: node.cgroup,
    // This VM has cgroup v1; since 1.35 the kubelet refuses it unless told.
    failCgroupV1: false,
    failSwapOn: false,
    // Two kubelets on one machine delete each other's pod log folders unless each has its own.
    podLogsDir: join(state, 'pod-logs'),
    registerWithTaints: [{ key: REAL_NODE_LABEL, value: labelValue, effect: 'NoSchedule' }],
    // A small disk must not evict the test pods or collect the test images.
    evictionHard: { 'memory.available': '50Mi', 'nodefs.available': '1%', 'imagefs.available': '1%', 'nodefs.inodesFree': '1%' },
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    clusterDomain: 'cluster.local',
    clusterDNS: ['10.0.0.10'],
    serializeImagePulls: false,
    // The kubelet rotates a running container's log past this (10Mi by default), and serves only
    // the current file: a test of a 20 MiB log must not depend on when its monitor last looked.
    containerLogMaxSize: '64Mi',
    maxPods: 30
  }
}

/** A pod spec that runs on the real node (or the one whose label is `labelValue`): selects it and tolerates its taint. */
export function realNodePod(spec: V1PodSpec, labelValue = 'true'): V1PodSpec {
  return {
    ...spec,
    nodeSelector: { ...spec.nodeSelector, [REAL_NODE_LABEL]: labelValue },
    tolerations: [...(spec.tolerations ?? []), { key: REAL_NODE_LABEL, operator: 'Exists', effect: 'NoSchedule' }]
  }
}

/** A token for the kubelet's user (system:masters: no Node authorizer runs here). */
export function newKubeletToken(): string {
  return randomBytes(24).toString('hex')
}
