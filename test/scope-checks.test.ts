// The scope checked against the cluster: a namespace that does not exist fails the step before any
// Job is read (nothing deleted), and a release with neither Jobs nor a Helm release record warns
// that its name may be wrong. Each absence is set beside a run where the thing exists.
import { outputNames, runAction, type ActionRun } from './action.ts'
import { getJob, helm, run } from './cluster/testenv.ts'
import { chart, finishedReleaseJob, release, useScenario } from './scenario.ts'

const scenario = useScenario('checks')
let ns: string
beforeEach(() => {
  ns = scenario.ns
})

const errors = (r: ActionRun): string[] => r.stdout.split('\n').filter((l) => l.startsWith('::error'))
const warnings = (r: ActionRun): string[] => r.stdout.split('\n').filter((l) => l.startsWith('::warning'))

describe('a namespace that does not exist', () => {
  test.each([['pre'], ['post']])('%s: fails naming it, and the summary says so', async (phase) => {
    const missing = `${ns}-typo`
    const r = await runAction({ phase, release, namespace: missing })
    expect(r.code).toBe(1)
    expect(errors(r)).toEqual([`::error::namespace '${missing}' does not exist`])
    expect(r.summary).toContain(`namespace &#39;${missing}&#39; does not exist`)
  })

  test('sweep over a list with one missing: fails and deletes nothing, where the same sweep without it deletes', async () => {
    await finishedReleaseJob(ns, `${release}-migrate`)
    const inputs = { phase: 'sweep', jobs: `${release}-migrate`, ttl: '0s' }
    const bad = await runAction({ ...inputs, namespace: `${ns}, ${ns}-typo` })
    expect(bad.code).toBe(1)
    expect(errors(bad)).toEqual([`::error::namespace '${ns}-typo' does not exist`])
    expect(await getJob(ns, `${release}-migrate`)).toBeDefined()

    const good = await runAction({ ...inputs, namespace: ns })
    expect(errors(good)).toEqual([])
    expect(outputNames(good, 'pruned')).toEqual([`${release}-migrate`])
  })
})

describe('a release with no Jobs', () => {
  /** Installs the chart as `name` without its hook Job (`driver`: Helm's storage), then clears its Jobs. */
  async function releaseWithoutJobs(name: string, driver: 'secret' | 'configmap'): Promise<void> {
    const installed = run('helm', ['install', name, chart, '-n', ns, '--set', 'hookJob=false', '--wait', '--wait-for-jobs'], { HELM_DRIVER: driver })
    expect(installed.stderr).toBe('')
    const pre = await runAction({ release: name, namespace: ns })
    expect(outputNames(pre, 'pruned')).toEqual([`${name}-migrate`])
  }

  test('a misspelt release name warns that there is no release record', async () => {
    await releaseWithoutJobs('shop', 'secret')
    const r = await runAction({ release: 'shpo', namespace: ns })
    expect(r.code).toBe(0)
    const warning = `no Helm release 'shpo' in namespace '${ns}' (no release record): is the name right?`
    expect(warnings(r)).toEqual([`::warning::${warning}`])
    expect(r.summary).toContain(warning.replaceAll("'", '&#39;')) // escaped for Markdown
  })

  test.each([['secret'], ['configmap']] as const)('an installed release (Helm storage: %s) with no Jobs left: no warning', async (driver) => {
    await releaseWithoutJobs(`shop-${driver}`, driver)
    for (const phase of ['pre', 'post']) {
      const r = await runAction({ phase, release: `shop-${driver}`, namespace: ns })
      expect([phase, r.code, warnings(r)]).toEqual([phase, 0, []])
      expect(r.summary).toContain('No Jobs in scope')
    }
    expect(helm('status', `shop-${driver}`, '-n', ns).code).toBe(driver === 'secret' ? 0 : 1) // the default driver reads Secrets only
  })
})
