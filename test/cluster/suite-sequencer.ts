// The order suites start in: jest's own (failed first, then the longest), except that the suites
// that need the whole cluster (`@cluster whole`, see suite-environment.ts) go first. They run one
// at a time either way; first, they do not wait for a shared suite to end while a worker idles.
import { readFileSync } from 'node:fs'
import type { Test } from '@jest/test-result'
import JestSequencer from '@jest/test-sequencer'

// The package is CommonJS with an ES wrapper: its class is the default export or that export's `default`.
type SequencerClass = typeof JestSequencer extends { default: infer C } ? C : typeof JestSequencer
const Sequencer = ((JestSequencer as { default?: unknown }).default ?? JestSequencer) as SequencerClass

/** Whether the suite's first docblock says `@cluster whole`. */
export function needsWholeCluster(path: string): boolean {
  const docblock = /^\s*\/\*\*[^]*?\*\//.exec(readFileSync(path, 'utf8').slice(0, 4000))?.[0] ?? ''
  return /@cluster\s+whole/.test(docblock)
}

export default class SuiteSequencer extends Sequencer {
  override async sort(tests: Test[]): Promise<Test[]> {
    const ordered = await super.sort(tests)
    return [...ordered.filter((t) => needsWholeCluster(t.path)), ...ordered.filter((t) => !needsWholeCluster(t.path))]
  }
}
