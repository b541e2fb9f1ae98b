// A runner passes every input action.yml declares, with its default where the step's `with:` gives
// none (GitHub's runner and nektos/act alike); the CLI and a step outside a runner give nothing.
// The settings must come out the same either way, or the action and the CLI would differ.
import { readAction } from '../../scripts/docs.ts'
import { parseSettings } from '../../src/settings/settings.ts'

const action = readAction()
const defaults = (name: string): string => {
  const value = action.inputs[name]?.default
  return value === undefined ? '' : String(value)
}

test.each(['pre', 'post', 'sweep'])("phase %s: the settings from the given inputs alone are those from them and action.yml's defaults", (phase) => {
  const given: Record<string, string> = { phase, release: 'app', namespace: 'shop' }
  const alone = parseSettings((name) => given[name] ?? '', {})
  const withDefaults = parseSettings((name) => given[name] ?? defaults(name), {})
  expect(alone).toEqual(withDefaults)
  // The control: a default that is not the code's shows.
  expect(parseSettings((name) => given[name] ?? (name === 'wait-timeout' ? '11m' : defaults(name)), {})).not.toEqual(alone)
})
