// The real node leaves nothing behind: a second node, started beside the cluster's own for this
// test (its own label value, so no other suite's pod lands on it), runs a pod, is stopped the way
// `npm run cluster:down` and jest's teardown stop a node, and every process, mount, network
// namespace, link, cgroup and file it had on this machine is gone; the machine's kernel parameters
// are put back only by the last node's stop (the cluster's own node still runs here).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { apiServerCertFile } from './cluster/apiserver.ts'
import { nodeBinDir } from './cluster/cluster.ts'
import { footprintLeft, machineBefore, nodeFootprint, nodeLeftovers, readSysctls, realNodePod, startRealNode, stopRealNode } from './cluster/node.ts'
import { coreApi, createNamespace, deleteNamespace, eventually, testCluster } from './cluster/testenv.ts'

const describeOnRealNode = process.env.JOB_SWEEPER_REAL_NODE ? describe : describe.skip

describeOnRealNode('the real node’s teardown', () => {
  const name = 'real-node-teardown'
  const labelValue = 'teardown-test'
  let dir: string
  let ns: string
  beforeAll(async () => {
    ns = await createNamespace('node-teardown')
    dir = mkdtempSync(join(tmpdir(), 'real-node-teardown-'))
  })
  afterAll(async () => {
    await stopRealNode(dir)
    rmSync(dir, { recursive: true, force: true })
    await coreApi()
      .deleteNode({ name })
      .catch(() => undefined)
    await deleteNamespace(ns)
  })

  test('a stopped node leaves no process, mount, network namespace, link, cgroup or file of its own on the machine', async () => {
    const cluster = testCluster()
    // The kubelet's token is the second line of the API server's token file.
    const kubeletToken = readFileSync(join(cluster.dir, 'pki', 'tokens.csv'), 'utf8')
      .split('\n')[1]
      .split(',')[0]
    const node = await startRealNode(coreApi(), {
      dir,
      bin: cluster.binDir,
      nodeBin: nodeBinDir(),
      apiPort: Number(new URL(cluster.server).port),
      caFile: apiServerCertFile(cluster.dir),
      kubeletToken,
      step: () => undefined,
      name,
      labelValue
    })
    await coreApi().createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'runs-on-it' },
        spec: realNodePod(
          { restartPolicy: 'Never', containers: [{ name: 'main', image: node.testImage, command: ['sh', '-c', 'echo up; sleep 3600'] }] },
          labelValue
        )
      }
    })
    await eventually(
      'the pod running on the second node',
      () => coreApi().readNamespacedPod({ namespace: ns, name: 'runs-on-it' }),
      (p) => p.spec?.nodeName === name && p.status?.phase === 'Running'
    )

    const footprint = await nodeFootprint(dir)
    // Positive control: the running node has one of each kind.
    for (const kind of ['process', 'mount', 'network', 'link', 'cgroup', 'file']) expect(footprint.filter((f) => f.startsWith(`${kind} `))).not.toEqual([])
    expect(footprint.filter((f) => f.startsWith('file /run/containerd/s/'))).not.toEqual([]) // the pod's shim
    expect(footprint.filter((f) => f.startsWith('file /var/log/containers/runs-on-it_'))).not.toEqual([])
    expect(footprint.filter((f) => f.startsWith('file /var/lib/cni/results/'))).not.toEqual([])
    expect(await footprintLeft(footprint)).toEqual(footprint)

    const kubeletValues = readSysctls()
    await stopRealNode(dir)
    expect(await footprintLeft(footprint)).toEqual([])
    expect(await nodeLeftovers(dir)).toEqual([])
    // The cluster's own node still runs: the machine's values are not put back yet (its kubelet's
    // stay), and the record of them stays for the last node's stop.
    expect(readSysctls()).toEqual(kubeletValues)
    expect(machineBefore()?.sysctls).toEqual(expect.objectContaining({ 'vm.overcommit_memory': expect.any(String) }))
  }, 120_000)
})
