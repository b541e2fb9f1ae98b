// dist/index.js, the action's main and post entry (action.yml): runs the action (dist/action.js,
// built from src/index.ts) in a worker thread; see engine-thread.ts.
import { runEngine } from './engine-thread.ts'

runEngine(new URL('./action.js', import.meta.url))
