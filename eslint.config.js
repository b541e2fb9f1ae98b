import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import { layersRule } from './scripts/eslint-layers.js'

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', '.cluster/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        fetch: 'readonly',
        AbortSignal: 'readonly',
        URL: 'readonly'
      }
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-console': 'off'
    }
  },
  {
    // The layers of src/: see FLOORS in scripts/eslint-layers.js.
    files: ['src/**/*.ts'],
    plugins: { 'job-sweeper': { rules: { layers: layersRule } } },
    rules: { 'job-sweeper/layers': 'error' }
  }
)
