// The layers of src/ as an ESLint rule (`npm run lint`): a value import goes down the floors, or
// stays on its floor, never up. Type-only imports (`import type`, `export type`) may cross any way:
// they leave nothing in the bundle and load nothing.
import { dirname, join, relative, resolve, sep } from 'node:path'

export const SRC = join(import.meta.dirname, '..', 'src')

/**
 * The floors of src/, lowest first: a folder (or a file directly in src/) on each.
 * Why: data flows settings → observe → plan → execute → report, and a floor that loads none above it can be tested alone.
 */
export const FLOORS = [
  // Text shown to people or read from them: durations, shortened lists, secrets hidden.
  ['text'],
  // The inputs, parsed once.
  ['settings'],
  // The cluster client; it names inputs (settings) when a kubeconfig does not load.
  ['kube'],
  ['observe'],
  ['plan'],
  ['execute'],
  ['report'],
  // One phase, start to end, and the run's cancellation; preflight is a phase of its own, whole in its folder.
  ['run.ts', 'cancel.ts', 'preflight'],
  // The entry points: the action, the CLI and their launcher.
  ['main.ts', 'index.ts', 'cli.ts', 'cli', 'launch']
]

/** The floor of a file in src/ (its index in FLOORS), or undefined when it is on none. */
export function floorOf(file) {
  const top = relative(SRC, file).split(sep)[0]
  const floor = FLOORS.findIndex((names) => names.includes(top))
  return floor < 0 ? undefined : floor
}

const floorName = (floor) => FLOORS[floor].join(', ')

/** Why `importer` may not value-import `target` (both absolute paths), or undefined if it may. */
export function layerProblem(importer, target) {
  const [from, to] = [floorOf(importer), floorOf(target)]
  const none = [importer, target].find((f) => floorOf(f) === undefined)
  if (none !== undefined) return `${relative(SRC, none)} is on no floor: add it to FLOORS in scripts/eslint-layers.js`
  if (to <= from) return undefined
  return `${floorName(from)} may not import values from ${floorName(to)}, a higher floor (${FLOORS.map((f) => f.join('/')).join(' → ')}): move the helper down, or use import type`
}

// Every specifier of the declaration is a type (`import { type A, type B }`), and there is one.
const allTypes = (specifiers, kind) => specifiers.length > 0 && specifiers.every((s) => s[kind] === 'type')

/** @type {import('eslint').Rule.RuleModule} */
export const layersRule = {
  meta: { type: 'problem', docs: { description: 'value imports in src/ go down its floors only' }, schema: [] },
  create(context) {
    const file = context.filename
    if (relative(SRC, file).startsWith('..')) return {}
    const check = (node, source, typeOnly) => {
      if (typeOnly || typeof source?.value !== 'string' || !source.value.startsWith('.')) return
      const problem = layerProblem(file, resolve(dirname(file), source.value))
      if (problem) context.report({ node, message: `'${source.value}': ${problem}` })
    }
    return {
      ImportDeclaration: (node) => check(node, node.source, node.importKind === 'type' || allTypes(node.specifiers, 'importKind')),
      ExportNamedDeclaration: (node) => check(node, node.source, node.exportKind === 'type' || allTypes(node.specifiers, 'exportKind')),
      ExportAllDeclaration: (node) => check(node, node.source, node.exportKind === 'type'),
      ImportExpression: (node) => check(node, node.source, false)
    }
  }
}
