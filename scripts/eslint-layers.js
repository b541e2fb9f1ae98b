// The layers of src/ as an ESLint rule (`npm run lint`): a value import goes down the floors, or
// stays on its floor, never up. Type-only imports (`import type`, `export type`) may cross any way:
// they leave nothing in the bundle and load nothing.
import { readdirSync, readFileSync, statSync } from 'node:fs'
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
  // The cluster client; it names inputs (settings) when a kubeconfig does not load. Beside it, where
  // saved logs go (a directory, a bucket): the other outside service the engine writes to.
  ['kube', 'store'],
  ['observe'],
  ['plan'],
  ['execute'],
  ['report'],
  // The preflight: dry runs (an observe) and verdicts (a plan) of every object of a rendered release, whole in its folder; run.ts calls it.
  ['preflight'],
  // One phase, start to end, and the run's cancellation; the keeper, a long-running loop over the same floors.
  ['run.ts', 'cancel.ts', 'keeper.ts', 'let-go.ts'],
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

/**
 * The folders and files directly in src/ that import each other, type imports included, as a
 * circle (`a → b → a`), or undefined. Type imports may cross the floors, but a circle of them is
 * still two places that cannot be understood apart: the floors hold only if the graph has none.
 * `edges` maps each top-level name to the names it imports.
 */
export function importCircle(edges) {
  const state = new Map()
  const path = []
  const visit = (node) => {
    if (state.get(node) === 'done') return undefined
    if (state.get(node) === 'open') return [...path.slice(path.indexOf(node)), node]
    state.set(node, 'open')
    path.push(node)
    for (const next of [...(edges.get(node) ?? [])].sort()) {
      const circle = visit(next)
      if (circle) return circle
    }
    path.pop()
    state.set(node, 'done')
    return undefined
  }
  for (const node of [...edges.keys()].sort()) {
    const circle = visit(node)
    if (circle) return circle.join(' → ')
  }
  return undefined
}

/** src/'s top-level imports, type imports included: each folder or file directly in src/ → the ones it imports. */
export function srcImportGraph() {
  const top = (file) => relative(SRC, file).split(sep)[0]
  const edges = new Map()
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name)
      if (statSync(path).isDirectory()) walk(path)
      else if (path.endsWith('.ts')) {
        const from = top(path)
        const text = readFileSync(path, 'utf8')
        for (const m of text.matchAll(/^(?:import|export)\s[^'"]*?from\s+'(\.[^']+)'/gm)) {
          const to = top(resolve(dirname(path), m[1]))
          if (to !== from) edges.set(from, (edges.get(from) ?? new Set()).add(to))
        }
      }
    }
  }
  walk(SRC)
  return edges
}
