// The bundled CLI (the package's bin, dist/cli/job-sweeper.mjs) against the real cluster: exit codes, --json, text.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { runAction } from './action.ts'
import { runCli } from './bin.ts'
import { getJob, waitForJobCondition } from './cluster/testenv.ts'
import { helmChart, release, useScenario } from './scenario.ts'

const jobSweeper = (...args: string[]) => runCli(args)

const names = (jobs: { name: string }[]): string[] => jobs.map((j) => j.name).sort()

describe('usage', () => {
  test('--help lists the commands and exit codes; each command has its own help', async () => {
    const help = await jobSweeper('--help')
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('Commands:\n  pre ')
    expect(help.stdout).toContain('Exit codes: 0 done; 1 a Job failed')
    expect(help.stdout).toContain('2 bad usage; 3 the cluster or job-sweeper errored')
    const post = await jobSweeper('post', '--help')
    expect(post.code).toBe(0)
    expect(post.stdout).toContain('--failure-grace DURATION')
  })

  test.each([
    [['deploy'], "Unknown command 'deploy': expected one of pre, post, sweep"],
    [['pre', '--release', 'x', '--frobnicate', '1'], "Unknown option '--frobnicate'"],
    [['pre', '--namespace', 'x'], 'No scope: set at least one of release, manifest, selector or jobs'],
    [
      ['pre', '--release', 'x', '--manifest', '/nonexistent/rendered.yaml'],
      "Invalid --manifest '/nonexistent/rendered.yaml': expected a readable file of rendered manifests; cannot read it (ENOENT)"
    ],
    [['post', '--release', 'x', '--context', 'nope'], "Invalid --context 'nope': expected a context of the kubeconfig (job-sweeper-local)"]
  ])('bad usage %j exits 2', async (args, message) => {
    const run = await jobSweeper(...args)
    expect(run.code).toBe(2)
    expect(run.stderr).toContain(message)
    expect(run.stdout).toBe('')
  })

  test('--json always prints one JSON object: bad usage (exit 2) says why in errors; without --json nothing goes to standard output', async () => {
    const run = await jobSweeper('pre', '--release', 'x', '--json', '--frobnicate', '1')
    expect(run.code).toBe(2)
    expect(JSON.parse(run.stdout)).toEqual({ phase: 'pre', errors: [expect.stringContaining("Unknown option '--frobnicate'")], warnings: [], cancelled: false })
    const bad = await jobSweeper('post', '--release', 'x', '--failure-grace', '3 days', '--json')
    expect(JSON.parse(bad.stdout)).toMatchObject({ phase: 'post', errors: [expect.stringContaining("Invalid --failure-grace '3 days'")] })
  })

  test('a bad value gets the same message from the CLI as from the action, each naming it as its user typed it', async () => {
    const run = await jobSweeper('post', '--release', 'x', '--failure-grace', '3 days')
    const action = await runAction({ phase: 'post', release: 'x', 'failure-grace': '3 days' })
    const expected = "'3 days': expected never, or a duration like 90s, 15m, 1h30m, 7d, or seconds"
    expect(run.code).toBe(2)
    expect(run.stderr).toContain(`job-sweeper: Invalid --failure-grace ${expected}\n`)
    expect(action.stdout).toContain(`::error::Invalid failure-grace ${expected}\n`)
  })

  test('kubectl’s habits: -n, -l and -A, --version, and every command named when one is unknown', async () => {
    const version = await jobSweeper('--version')
    expect([version.code, version.stdout]).toEqual([
      0,
      `job-sweeper ${JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8')).version}\n`
    ])
    const unknown = await jobSweeper('archive')
    expect(unknown.stderr).toContain("Unknown command 'archive': expected one of pre, post, sweep, preflight, keeper")
    // -n and -A together are refused as --namespace and --all-namespaces are: the short flags are those.
    const both = await jobSweeper('sweep', '-A', '-n', 'prod', '-l', 'app=web')
    expect([both.code, both.stderr]).toEqual([2, expect.stringContaining("Invalid --all-namespaces 'true' with --namespace 'prod'")])
    for (const command of ['pre', 'sweep']) expect((await jobSweeper(command, '--help')).stdout).toContain('--keeper-namespace NS')
  })
})

describe('against the cluster', () => {
  const scenario = useScenario('cli')
  let ns: string
  beforeEach(() => {
    ns = scenario.ns
  })

  test('pre → helm upgrade → post, with --json, and post needs no saved state', async () => {
    expect(helmChart('install', ns, { hookJob: false }, '--wait', '--wait-for-jobs').code).toBe(0)
    const pre = await jobSweeper('pre', '--release', release, '--namespace', ns, '--json')
    expect(pre.code).toBe(0)
    const preJson = JSON.parse(pre.stdout)
    expect(names(preJson.pruned)).toEqual([`${release}-migrate`])
    expect(preJson['pruned-count']).toBe(1)
    expect(preJson.errors).toEqual([])
    // At least the list, the delete and its Event; a handful more (a watch, a namespace read) at most.
    expect(preJson['api-requests']).toBeGreaterThanOrEqual(3)
    expect(preJson['api-requests']).toBeLessThanOrEqual(10)

    const upgrade = helmChart('upgrade', ns, { hookJob: false, migrationVersion: '2', 'seedJob.enabled': true, 'seedJob.fail': true })
    expect(upgrade.code).toBe(0)
    await waitForJobCondition(ns, `${release}-seed`, 'Failed')

    const post = await jobSweeper('post', '--release', release, '--namespace', ns, '--wait-for-jobs', '1m', '--failure-grace', '2d', '--json')
    expect(post.code).toBe(1) // the seed Job failed: a Job's failure, not the cluster's (3)
    const postJson = JSON.parse(post.stdout)
    expect(names(postJson['ttl-set'])).toEqual([`${release}-migrate`, `${release}-seed`])
    expect(postJson.errors).toEqual([
      expect.stringMatching(
        new RegExp(
          `^Job ${ns}/${release}-seed failed: BackoffLimitExceeded .*; pod ${release}-seed-\\w+: container seed exit code 1; kept for failure-grace 2d so it can be inspected$`
        )
      )
    ])
    expect((await getJob(ns, `${release}-seed`))?.spec?.ttlSecondsAfterFinished).toBe(172800)
  })

  test('an input that does nothing in the command is warned about by name, saying why; every bad input in one error', async () => {
    const run = await jobSweeper('pre', '--release', release, '--namespace', ns, '--dry-run', '--wait-for-jobs', '5m', '--preflight', 'warn', '--json')
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout).warnings).toEqual([
      "--wait-for-jobs '5m' does nothing in the pre command: only post waits for the Jobs it gives TTLs (pre waits for the running Jobs it would delete, as --on-running and --wait-timeout say)",
      "--preflight 'warn' does nothing without --manifest: pre checks the rendered release only when --manifest gives it"
    ])
    const bad = await jobSweeper('pre', '--release', release, '--namespace', ns, '--wait-timeout', '3 days', '--on-running', 'maybe')
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain(
      "job-sweeper: 2 invalid inputs:\n- Invalid --on-running 'maybe': expected one of wait, delete, fail\n- Invalid --wait-timeout '3 days'"
    )
  })

  test('--json when the run fails before it has a result (a namespace that does not exist): one JSON object naming why, exit 3 (not a Job failure)', async () => {
    const run = await jobSweeper('pre', '--release', release, '--namespace', `${ns}-missing`, '--json')
    expect(run.code).toBe(3)
    expect(JSON.parse(run.stdout)).toEqual({
      phase: 'pre',
      errors: [expect.stringContaining(`namespace '${ns}-missing' does not exist`)],
      warnings: [],
      cancelled: false
    })
  })

  test('without --json: a readable table on standard output, progress on standard error', async () => {
    const run = await jobSweeper('sweep', '--namespace', ns, '--selector', 'app.kubernetes.io/component=migrate', '--dry-run')
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('job-sweeper: sweep phase in namespaces ' + ns)
    expect(run.stdout).toContain('DRY RUN — nothing was changed.')
    expect(run.stdout).toMatch(/^✅ \d+ would be pruned · \d+ kept$/m)
    expect(run.stdout).toMatch(/^Job +Status +Outcome +Finished +TTL \/ time left +Logs \(in logs-dir\) +Reason$/m)
    expect(run.stdout).toMatch(new RegExp(`^${release}-pre-upgrade-hook +(running|succeeded) +kept .*hook Job`, 'm'))
    expect(run.stderr).toContain('--- Observe')
  })
})
