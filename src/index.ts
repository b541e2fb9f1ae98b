// Entry point of the action, for both `main` and `post` (action.yml): see run().
import { run } from './main.ts'

await run()
