// Entry point of the action, for both `main` and `post` (action.yml): see actionStep().
import { actionStep } from './main.ts'

await actionStep()
