// Smoke test of the committed bundle, run as the runner runs it.
import { runAction } from './action.ts'
import { createNamespace, deleteNamespace } from './cluster/testenv.ts'

let ns: string
beforeAll(async () => {
  ns = await createNamespace('bundle')
})
afterAll(async () => {
  await deleteNamespace(ns)
})

test('node dist/index.js runs main and post steps and exits cleanly', async () => {
  const main = await runAction({ release: 'nothing-here', namespace: ns })
  expect(main.stderr).toBe('')
  expect(main.code).toBe(0)
  expect(main.outputs.pruned).toBe('[]')
  expect(main.outputs.kept).toBe('[]')
  expect(main.summary).toContain('No Jobs in scope: nothing to do.')
  expect(main.state.isPost).toBe('true')

  const post = await runAction({ release: 'nothing-here', namespace: ns }, { post: main })
  expect(post.code).toBe(0)
})

test('a bad input fails the step with a message naming it', async () => {
  const run = await runAction({ release: 'x', namespace: ns, 'wait-timeout': '3 days' })
  expect(run.code).toBe(1)
  expect(run.stdout).toContain("::error::Invalid wait-timeout '3 days': expected a duration like 90s, 15m, 1h30m, 7d, or seconds")
  expect(run.summary).toContain('## job-sweeper: pre phase failed')
  expect(run.summary).toContain('Invalid wait-timeout &#39;3 days&#39;')
  expect(run.outputs).toEqual({}) // no outputs claim anything happened
})

test('an unreachable cluster fails the step with a summary that says so', async () => {
  const kubeconfig =
    'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:65531"}}]\nusers: [{name: u, user: {}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n'
  const run = await runAction({ phase: 'sweep', selector: 'a=b', kubeconfig })
  expect(run.code).toBe(1)
  expect(run.stdout).toContain('::error::')
  expect(run.summary).toContain('## job-sweeper: sweep phase failed')
  expect(run.summary).toContain('cluster unreachable: read namespace default kept failing for') // the first request
  expect(run.summary).toContain('(last: connect ECONNREFUSED 127.0.0.1:65531)')
})
