// upload-logs (src/report/artifact.ts): what a phase stored in logs-dir, and only that, with its
// report file, goes up as one artifact named for the job and the phase; a name the run already
// has gets -2, -3…; a failed upload is a warning in the summary and leaves the outputs empty. The
// real upload, to nektos/act's artifact server, is in test/act.test.ts; here the uploader is a
// scripted fake of our own narrow interface.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { artifactName, uploadSavedLogs, type ArtifactUploader } from '../../src/report/artifact.ts'
import type { RunResult } from '../../src/execute/outcome.ts'
import { writeReport } from '../../src/report/write.ts'
import { parseSettings } from '../../src/settings/settings.ts'
import { DiskSink } from '../../src/store/disk-sink.ts'
import { recorded } from '../../src/store/recorded.ts'
import { secretMasker } from '../../src/text/secrets.ts'
import { executorOf } from '../fake/executor.ts'
import { newJob } from './jobs.ts'

const env = { GITHUB_JOB: 'deploy', GITHUB_RUN_ATTEMPT: '1' }
const runUrl = 'https://github.com/acme/shop/actions/runs/42'

/** An uploader that records its calls and answers each with the next of `answers` (an Error is thrown). */
function uploader(...answers: ({ id: number; size: number } | Error)[]): ArtifactUploader & { calls: { name: string; files: string[]; root: string }[] } {
  const calls: { name: string; files: string[]; root: string }[] = []
  return {
    calls,
    upload: async (name, files, root) => {
      calls.push({ name, files, root })
      const answer = answers.shift() ?? new Error('no answer scripted')
      if (answer instanceof Error) throw answer
      return answer
    }
  }
}

describe('the artifact', () => {
  test.each([
    [{ GITHUB_JOB: 'deploy' }, 'pre', 'job-sweeper-logs-deploy-pre'],
    [{ GITHUB_JOB: 'deploy', GITHUB_RUN_ATTEMPT: '1' }, 'post', 'job-sweeper-logs-deploy-post'],
    [{ GITHUB_JOB: 'deploy', GITHUB_RUN_ATTEMPT: '3' }, 'sweep', 'job-sweeper-logs-deploy-sweep-attempt3'],
    [{}, 'pre', 'job-sweeper-logs-job-pre']
  ] as const)('%j, phase %s: %s', (given, phase, name) => {
    expect(artifactName(phase, given)).toBe(name)
  })

  test('the stored keys (once each) and the report file, under logs-dir; its page in the run', async () => {
    const up = uploader({ id: 7, size: 1234 })
    const keys = ['prod/app-migrate/u1/app-migrate-x1/main.log', 'prod/app-migrate/u1/job.json', 'prod/app-migrate/u1/job.json']
    const artifact = await uploadSavedLogs(keys, '/tmp/logs', '/tmp/logs/job-sweeper-pre.json', 'pre', up, runUrl, env)
    expect(up.calls).toEqual([
      {
        name: 'job-sweeper-logs-deploy-pre',
        files: ['/tmp/logs/prod/app-migrate/u1/app-migrate-x1/main.log', '/tmp/logs/prod/app-migrate/u1/job.json', '/tmp/logs/job-sweeper-pre.json'],
        root: '/tmp/logs'
      }
    ])
    expect(artifact).toEqual({ name: 'job-sweeper-logs-deploy-pre', url: 'https://github.com/acme/shop/actions/runs/42/artifacts/7', files: 3, bytes: 1234 })
  })

  test('no log stored: nothing is uploaded (positive control above: one stored key is)', async () => {
    const up = uploader({ id: 1, size: 1 })
    expect(await uploadSavedLogs([], '/tmp/logs', '/tmp/logs/job-sweeper-post.json', 'post', up, runUrl, env)).toBeUndefined()
    expect(up.calls).toEqual([])
  })

  test('a name the run already has (a matrix): -2, then -3', async () => {
    const taken = new Error(
      'Failed to CreateArtifact: Received non-retryable error: Failed request: (409) Conflict: an artifact with this name already exists on the workflow run'
    )
    const up = uploader(taken, taken, { id: 9, size: 10 })
    const artifact = await uploadSavedLogs(['prod/j/job.json'], '/l', undefined, 'pre', up, runUrl, env)
    expect(up.calls.map((c) => c.name)).toEqual(['job-sweeper-logs-deploy-pre', 'job-sweeper-logs-deploy-pre-2', 'job-sweeper-logs-deploy-pre-3'])
    expect(artifact?.name).toBe('job-sweeper-logs-deploy-pre-3')
  })

  test('another failure is not retried under another name: it is thrown', async () => {
    const up = uploader(new Error('Failed to CreateArtifact: Received non-retryable error: Failed request: (401) Unauthorized'))
    await expect(uploadSavedLogs(['prod/j/job.json'], '/l', undefined, 'pre', up, runUrl, env)).rejects.toThrow('(401) Unauthorized')
    expect(up.calls).toHaveLength(1)
  })
})

describe('what the run stored', () => {
  test('a recorded sink lists a key once its write completed, and not a write that failed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'upload-logs-'))
    try {
      const sink = recorded(new DiskSink(dir))
      await (await sink.open('prod/j/p/main.log', 'text/plain')).write(Readable.from(['whole\n']))
      const broken = new Readable({ read: () => undefined })
      const failing = (await sink.open('prod/j/p/sidecar.log', 'text/plain')).write(broken)
      broken.destroy(new Error('read ECONNRESET'))
      await expect(failing).rejects.toThrow()
      await (await sink.open('prod/j/p/init.log', 'text/plain')).discard()
      expect(sink.stored).toEqual(['prod/j/p/main.log'])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test("pre's result lists the logs and job.json it saved, and not the running Job it kept (no log asked of it)", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'upload-logs-'))
    try {
      const failed = newJob({ name: 'app-migrate', release: 'app', status: 'failed' })
      const ex = executorOf({ release: 'app', 'logs-dir': dir, 'on-running': 'fail' }, [failed])
      ex.client.addPod(
        failed,
        {
          metadata: { name: 'app-migrate-x1', uid: 'pod-1' },
          spec: { containers: [{ name: 'main' }] },
          status: { phase: 'Failed', containerStatuses: [{ name: 'main', state: { terminated: { exitCode: 1 } } } as never] }
        },
        { main: 'boom\n' }
      )
      const result = await ex.execute()
      expect(result.errors).toEqual([])
      expect(result.stored).toEqual(['prod/app-migrate/uid-app-migrate/app-migrate-x1/main.log', 'prod/app-migrate/uid-app-migrate/job.json'])
      expect(readFileSync(join(dir, 'prod/app-migrate/uid-app-migrate/app-migrate-x1/main.log'), 'utf8')).toBe('boom\n')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('the step', () => {
  const saved: Record<string, string | undefined> = {}
  // One directory for the block: @actions/core's summary keeps the first GITHUB_STEP_SUMMARY it read.
  const dir = mkdtempSync(join(tmpdir(), 'upload-logs-step-'))
  beforeAll(() => {
    for (const name of ['GITHUB_OUTPUT', 'GITHUB_STEP_SUMMARY']) {
      saved[name] = process.env[name]
      process.env[name] = join(dir, name)
    }
  })
  beforeEach(() => {
    for (const name of ['GITHUB_OUTPUT', 'GITHUB_STEP_SUMMARY']) writeFileSync(join(dir, name), '')
  })
  afterAll(() => {
    for (const [name, value] of Object.entries(saved))
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    rmSync(dir, { recursive: true, force: true })
  })
  const output = (name: string): string | undefined =>
    new RegExp(`^${name}<<(ghadelimiter_[\\w-]+)\\n([^]*?)\\n\\1$`, 'm').exec(readFileSync(join(dir, 'GITHUB_OUTPUT'), 'utf8'))?.[2]
  const summary = (): string => readFileSync(join(dir, 'GITHUB_STEP_SUMMARY'), 'utf8')
  const result = { phase: 'pre' as const, namespace: 'prod', dryRun: false, outcomes: [], errors: [], warnings: [], stored: ['prod/j/p/main.log'] }

  test('uploaded: the outputs name it, the summary links it, and the upload was given the report file', async () => {
    let reportFile: string | undefined
    await writeReport(result, join(dir, 'logs'), undefined, async (file) => {
      reportFile = file
      return { name: 'job-sweeper-logs-deploy-pre', url: 'https://github.com/acme/shop/actions/runs/42/artifacts/7', files: 2, bytes: 300 }
    })
    expect(reportFile).toBe(join(dir, 'logs', 'job-sweeper-pre.json'))
    expect([output('logs-artifact'), output('logs-artifact-url')]).toEqual([
      'job-sweeper-logs-deploy-pre',
      'https://github.com/acme/shop/actions/runs/42/artifacts/7'
    ])
    expect(summary()).toContain(
      'Logs uploaded as the artifact [`job-sweeper-logs-deploy-pre`](https://github.com/acme/shop/actions/runs/42/artifacts/7): 2 file(s), 300 bytes zipped.'
    )
  })

  test('an upload that fails: a warning in the summary saying where the logs are, the outputs empty, and no throw', async () => {
    await writeReport(result, join(dir, 'logs'), undefined, async () => {
      throw new Error('Unable to get the ACTIONS_RUNTIME_TOKEN env variable')
    })
    expect([output('logs-artifact'), output('logs-artifact-url')]).toEqual(['', ''])
    // Markdown-escaped in the summary (its '_' as &#95;), as everything that did not come from job-sweeper.
    expect(summary().replaceAll('&#95;', '_')).toContain(
      `⚠️ upload-logs: the logs could not be uploaded (Unable to get the ACTIONS_RUNTIME_TOKEN env variable); they are on the runner in ${join(dir, 'logs')}`
    )
  })

  test('an upload error that quotes a secret the run knows: shown as ***', async () => {
    const token = 'ghs_upload0secret0token0value'
    secretMasker.add(token)
    await writeReport(result, join(dir, 'logs'), undefined, async () => {
      throw new Error(`Failed to CreateArtifact: 401 for token ${token}`)
    })
    expect(summary()).not.toContain(token)
    expect(summary()).toContain('401 for token &#42;&#42;&#42;') // *** as markdown-escaped
  })

  test('uploaded: the Logs column names the artifact and links it, not the runner paths that vanish with the job', async () => {
    const withJob = {
      ...result,
      outcomes: [
        {
          namespace: 'prod',
          name: 'j',
          status: 'failed' as const,
          ageSeconds: 60,
          action: 'delete' as const,
          result: 'pruned' as const,
          waited: false,
          reason: 'failed',
          logs: { files: [{ file: 'prod/j/p/main.log', bytes: 3, truncated: false }], failures: [] }
        }
      ]
    } as unknown as RunResult
    await writeReport(withJob, join(dir, 'logs'), undefined, async () => ({
      name: 'job-sweeper-logs-deploy-pre',
      url: 'https://github.com/acme/shop/actions/runs/42/artifacts/7',
      files: 2
    }))
    expect(summary()).toContain('[Logs (in artifact job-sweeper-logs-deploy-pre)](https://github.com/acme/shop/actions/runs/42/artifacts/7)')
    expect(summary()).toContain('<code>prod/j/p/main.log</code>')
    // Without the upload, a runner's directory is said to last the job only (GITHUB_ACTIONS is set in a runner).
    const was = process.env.GITHUB_ACTIONS
    process.env.GITHUB_ACTIONS = 'true'
    writeFileSync(join(dir, 'GITHUB_STEP_SUMMARY'), '')
    await writeReport(withJob, join(dir, 'logs')).finally(() => {
      if (was === undefined) delete process.env.GITHUB_ACTIONS
      else process.env.GITHUB_ACTIONS = was
    })
    expect(summary()).toContain('Logs (in logs-dir, on the runner until the job ends)')
  })

  test('upload-logs off: no line about artifacts (positive control: the tests above)', async () => {
    await writeReport(result, join(dir, 'logs'))
    expect(output('logs-artifact')).toBe('')
    expect(summary()).not.toContain('artifact')
    expect(summary()).toContain('No Jobs in scope')
  })
})

describe('the input', () => {
  const parse = (inputs: Record<string, string>) =>
    parseSettings((name) => ({ release: 'app', ...inputs })[name] ?? '', {}, { readText: () => '', exists: () => false })
  test.each([
    [{}, false],
    [{ 'upload-logs': 'true' }, true],
    [{ 'upload-logs': 'TRUE', 'logs-dir': '/tmp/l' }, true]
  ])('%j: %s', (inputs, expected) => {
    expect(parse(inputs).uploadLogs).toBe(expected)
  })
  test.each([
    [{ 'upload-logs': 'yes' }, "Invalid upload-logs 'yes': expected true or false"],
    [
      { 'upload-logs': 'true', 'logs-dir': 's3://bucket/deploys' },
      "Invalid upload-logs 'true' with logs-dir 's3://bucket/deploys': expected a directory as logs-dir, whose files are uploaded; logs saved to a bucket are kept there"
    ]
  ])('%j is refused', (inputs, message) => {
    expect(() => parse(inputs)).toThrow(message)
  })
})
