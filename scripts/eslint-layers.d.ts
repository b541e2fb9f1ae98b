// Types of eslint-layers.js for the tests that import it (test/unit/layers.test.ts).
import type { Rule } from 'eslint'

export declare const SRC: string
export declare const FLOORS: string[][]
export declare function floorOf(file: string): number | undefined
export declare function layerProblem(importer: string, target: string): string | undefined
export declare function importCircle(edges: Map<string, Set<string>>): string | undefined
export declare function srcImportGraph(): Map<string, Set<string>>
export declare const layersRule: Rule.RuleModule
