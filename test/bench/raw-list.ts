// The floor of a sweep's plan: every Job listed in pages of 500 and parsed, nothing decided or
// kept — what any client must at least do. Run as its own process (the benchmark measures its
// time and peak RSS): scripts/node24 test/bench/raw-list.ts <label selector>; prints the count.
import { KubeConfig } from '@kubernetes/client-node'
import { Rest } from '../../src/kube/rest.ts'

const kc = new KubeConfig()
kc.loadFromDefault()
const rest = new Rest(kc)
let count = 0
let next: string | undefined
try {
  do {
    const page = await rest.request<{ items: unknown[]; metadata?: { continue?: string } }>('GET', '/apis/batch/v1/jobs', {
      query: { labelSelector: process.argv[2], limit: 500, continue: next }
    })
    count += page.items.length
    next = page.metadata?.continue || undefined
  } while (next)
} finally {
  await rest.close()
}
process.stdout.write(`${count}\n`)
