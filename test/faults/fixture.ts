// One fault proxy for a test file: started before its first test, its rules, request log and any
// pause cleared after each test, closed after the last. With `tally`, the faults each test met
// (and the decoys it kept) are counted and printed once at the end (the README's figures).
import { testCluster } from '../cluster/testenv.ts'
import { FaultTally } from './product.ts'
import { startFaultProxy, type FaultProxy, type FaultRule, type RuleHandle } from './proxy.ts'

export interface FaultProxyFixture {
  /** The file's proxy; read it in a test or a hook (it starts in beforeAll). */
  readonly proxy: FaultProxy
  /** Adds rules after the existing ones, for this test only (counted for the tally). */
  inject(...rules: FaultRule[]): RuleHandle[]
}

export interface FaultProxyFixtureOptions {
  /** Print `<file>: N faults injected and survived, M decoys kept` after the last test. */
  tally?: { file: string; decoys: () => number }
}

export function useFaultProxy(options: FaultProxyFixtureOptions = {}): FaultProxyFixture {
  let proxy: FaultProxy | undefined
  let rules: RuleHandle[] = []
  const tally = new FaultTally()
  const started = (): FaultProxy => {
    if (!proxy) throw new Error('the fault proxy is not started yet: use it in a test or a hook')
    return proxy
  }
  beforeAll(async () => {
    proxy = await startFaultProxy(testCluster())
  })
  afterEach(async () => {
    tally.add(rules, options.tally?.decoys())
    rules = []
    if (!proxy) return
    proxy.clearRules()
    proxy.requests.reset()
    await proxy.resume()
  })
  afterAll(async () => {
    await proxy?.close()
    if (options.tally) tally.print(options.tally.file)
  })
  return {
    get proxy() {
      return started()
    },
    inject(...added) {
      const handles = added.map((rule) => started().addRule(rule))
      rules.push(...handles)
      return handles
    }
  }
}
