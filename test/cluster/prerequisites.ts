// The outside tools some tests need, one rule for all (scripts/tools.sh installs them where this
// machine lets it): a test whose tool is missing is skipped, and npm test names what is missing and
// how to get it in one line per tool, at its start (global-setup.ts) and again at its end
// (global-teardown.ts). Under CI=true a missing tool fails the run instead, except the real node
// where the host can never run one (not root, or cgroup v2, as GitHub's hosted runners are).
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'

/** The outside tools the tests know. */
export type OutsideTool = 'chromium' | 'unzip' | 'real node'

/** What needs each tool, and how to get it. */
export const OUTSIDE_TOOLS: Record<OutsideTool, { neededBy: string; get: string }> = {
  chromium: { neededBy: 'test/summary-browser.test.ts', get: 'apt-get install chromium, or set CHROMIUM to a Chromium or Chrome binary' },
  unzip: { neededBy: "test/act.test.ts's upload-logs tests", get: 'apt-get install unzip' },
  'real node': {
    neededBy: 'test/real-node*.test.ts, test/in-container.test.ts and the tests on the real node',
    get: 'run npm test as root on a cgroup v1 host; test/cluster/build.sh installs the rest (gcc, libseccomp-dev, containernetworking-plugins, busybox-static)'
  }
}

/** The host facts the decision depends on. */
export interface Host {
  /** CI=true: every tool the host can run is required. */
  ci: boolean
  /** JOB_SWEEPER_REQUIRE_REAL_NODE=1: the real node is required even outside CI. */
  requireRealNode: boolean
  /** Why this host can never run the real node (realNodeHost()), or undefined. */
  realNodeHost: string | undefined
}

/** Whether a tool's tests run, are skipped (with the line that says why), or fail the run. */
export type Decision = { run: true } | { run: false; skip: string } | { run: false; fail: string }

/** The decision for one tool: `missing` is what is missing (undefined: the tool is there). */
export function decide(tool: OutsideTool, missing: string | undefined, host: Host): Decision {
  if (missing === undefined) return { run: true }
  const { neededBy, get } = OUTSIDE_TOOLS[tool]
  const line = `${neededBy} skipped: ${missing}; to run them: ${get}`
  const required = tool === 'real node' ? host.requireRealNode || (host.ci && !host.realNodeHost) : host.ci
  if (!required) return { run: false, skip: line }
  const why = tool === 'real node' && host.requireRealNode ? 'JOB_SWEEPER_REQUIRE_REAL_NODE=1' : 'CI=true'
  return { run: false, fail: `${why}, but ${neededBy} cannot run: ${missing}; ${get} (.ci/run installs it)` }
}

/** The host as the environment and the machine describe it. */
export function thisHost(realNodeHost: string | undefined, env: NodeJS.ProcessEnv = process.env): Host {
  return { ci: env.CI === 'true', requireRealNode: env.JOB_SWEEPER_REQUIRE_REAL_NODE === '1', realNodeHost }
}

/** The browsers the summary test can drive, first found wins: $CHROMIUM, then the usual paths. */
export function chromiumCandidates(env: NodeJS.ProcessEnv = process.env): string[] {
  return [env.CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].filter((c): c is string => !!c)
}

export const findChromium = (): string | undefined => chromiumCandidates().find((c) => existsSync(c))

function onPath(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** What is missing of each tool on this machine (undefined: there); the real node's from the cluster. */
export function missingTools(realNodeSkipped: string | undefined): Record<OutsideTool, string | undefined> {
  return {
    chromium: findChromium() ? undefined : `no Chromium found (tried ${chromiumCandidates().join(', ')})`,
    unzip: onPath('zipinfo') && onPath('unzip') ? undefined : 'no zipinfo and unzip on PATH',
    'real node': realNodeSkipped === undefined ? undefined : `no real node: ${realNodeSkipped}`
  }
}

/** Set by global-setup.ts for the workers: the tools whose tests are skipped, with their lines. */
const SKIPPED_ENV = 'JOB_SWEEPER_SKIPPED_TOOLS'

/**
 * Decides every tool for this run: returns the skip lines (one per missing tool), records them for
 * the workers, or throws the failures (CI=true) in one error.
 */
export function settlePrerequisites(realNodeSkipped: string | undefined, host: Host): string[] {
  const missing = missingTools(realNodeSkipped)
  const decisions = (Object.keys(OUTSIDE_TOOLS) as OutsideTool[]).map((tool) => [tool, decide(tool, missing[tool], host)] as const)
  const failures = decisions.flatMap(([, d]) => ('fail' in d ? [d.fail] : []))
  if (failures.length) throw new Error(failures.join('\n'))
  const skipped = Object.fromEntries(decisions.flatMap(([tool, d]) => ('skip' in d ? [[tool, d.skip]] : [])))
  process.env[SKIPPED_ENV] = JSON.stringify(skipped)
  return Object.values(skipped)
}

/** The skip lines global-setup.ts recorded (none when it did not run). */
export function skippedTools(): Partial<Record<OutsideTool, string>> {
  return JSON.parse(process.env[SKIPPED_ENV] ?? '{}') as Partial<Record<OutsideTool, string>>
}

/** The lines npm test prints at its start and its end when tools are missing. */
export function skippedReport(lines: string[]): string {
  return lines.length ? `\nskipped for want of an outside tool (CONTRIBUTING.md: Prerequisites):\n${lines.map((l) => `  - ${l}`).join('\n')}\n` : ''
}

/** `test`, or `test.skip` where global-setup.ts found `tool` missing. */
// A function, not a constant: this module is also loaded outside jest, where there is no `test`.
export const testNeeding =
  (tool: OutsideTool) =>
  (...args: Parameters<typeof test>): void =>
    (skippedTools()[tool] ? test.skip : test)(...args)
