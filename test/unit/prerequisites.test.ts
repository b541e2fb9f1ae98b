// One rule for the outside tools the tests need (test/cluster/prerequisites.ts): present → run;
// missing → skipped with one line naming what is missing and how to get it; under CI=true a
// failure instead, except the real node on a host that can never run one (not root, or cgroup v2:
// GitHub's hosted runners), which is skipped and said there too.
import { decide, thisHost, type Decision, type Host, type OutsideTool } from '../cluster/prerequisites.ts'

const CGROUP_V2 = 'the real node needs a cgroup v1 host (this one has no /sys/fs/cgroup/memory: cgroup v2)'
const NOT_ROOT = 'the real node needs root (network namespaces, cgroups, mounts)'

const host = (ci: boolean, root: boolean, cgroupV1: boolean, requireRealNode = false): Host => ({
  ci,
  requireRealNode,
  realNodeHost: root && cgroupV1 ? undefined : !root ? NOT_ROOT : CGROUP_V2
})

const outcome = (d: Decision): string => (d.run ? 'run' : 'skip' in d ? 'skip' : 'fail')

const MISSING: Record<OutsideTool, string> = {
  chromium: 'no Chromium found (tried /usr/bin/chromium)',
  unzip: 'no zipinfo and unzip on PATH',
  'real node': 'no real node: /root/.cache/job-sweeper/node/bin/runc was not built'
}

// tool × present/missing × CI/not × root/not × cgroup v1/v2 → outcome
const cases: [string, OutsideTool, boolean, boolean, boolean, boolean, string][] = []
for (const tool of ['chromium', 'unzip', 'real node'] as OutsideTool[]) {
  for (const present of [true, false]) {
    for (const ci of [false, true]) {
      for (const root of [true, false]) {
        for (const v1 of [true, false]) {
          const expected = present
            ? 'run'
            : !ci
              ? 'skip'
              : tool !== 'real node'
                ? 'fail' // .ci/run installs Chromium and unzip (with sudo where it is not root)
                : root && v1
                  ? 'fail' // this machine kind: the real node stays required on CI
                  : 'skip' // a GitHub-hosted runner: said and skipped, not failed
          cases.push([
            `${tool} ${present ? 'present' : 'missing'}, ${ci ? 'CI' : 'not CI'}, ${root ? 'root' : 'not root'}, cgroup ${v1 ? 'v1' : 'v2'} → ${expected}`,
            tool,
            present,
            ci,
            root,
            v1,
            expected
          ])
        }
      }
    }
  }
}

test.each(cases)('%s', (_name, tool, present, ci, root, v1, expected) => {
  expect(outcome(decide(tool, present ? undefined : MISSING[tool], host(ci, root, v1)))).toBe(expected)
})

test('a skip is one line: what is skipped, what is missing, and how to get it', () => {
  expect(decide('chromium', MISSING.chromium, host(false, false, false))).toEqual({
    run: false,
    skip: 'test/summary-browser.test.ts skipped: no Chromium found (tried /usr/bin/chromium); to run them: apt-get install chromium, or set CHROMIUM to a Chromium or Chrome binary'
  })
  const unzip = decide('unzip', MISSING.unzip, host(false, true, true))
  expect('skip' in unzip && unzip.skip).toBe("test/act.test.ts's upload-logs tests skipped: no zipinfo and unzip on PATH; to run them: apt-get install unzip")
  const node = decide('real node', `no real node: ${CGROUP_V2}`, host(true, false, false))
  expect('skip' in node && node.skip).toMatch(
    /^test\/real-node\*\.test\.ts, .* skipped: no real node: the real node needs a cgroup v1 host .*; to run them: run npm test as root/
  )
  for (const d of [unzip, node]) expect('skip' in d && d.skip.includes('\n')).toBe(false)
})

test('a failure names the setting that requires the tool, what is missing and how to get it', () => {
  expect(decide('unzip', MISSING.unzip, host(true, false, false))).toEqual({
    run: false,
    fail: "CI=true, but test/act.test.ts's upload-logs tests cannot run: no zipinfo and unzip on PATH; apt-get install unzip (.ci/run installs it)"
  })
})

test('JOB_SWEEPER_REQUIRE_REAL_NODE=1 requires the real node anywhere, CI or not, and says so', () => {
  for (const h of [host(false, true, true, true), host(false, false, false, true), host(true, false, false, true)]) {
    const d = decide('real node', MISSING['real node'], h)
    expect('fail' in d && d.fail).toMatch(/^JOB_SWEEPER_REQUIRE_REAL_NODE=1, but /)
  }
  expect(decide('chromium', MISSING.chromium, host(false, true, true, true))).toHaveProperty('skip')
})

test('the host from the environment: CI only when CI=true exactly', () => {
  expect(thisHost(undefined, { CI: 'true' })).toEqual({ ci: true, requireRealNode: false, realNodeHost: undefined })
  expect(thisHost(NOT_ROOT, { CI: '1', JOB_SWEEPER_REQUIRE_REAL_NODE: '1' })).toEqual({ ci: false, requireRealNode: true, realNodeHost: NOT_ROOT })
  expect(thisHost(NOT_ROOT, {})).toEqual({ ci: false, requireRealNode: false, realNodeHost: NOT_ROOT })
})
