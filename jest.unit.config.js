// The unit tier alone (`npm run test:unit`): test/unit/, no control plane started. `npm test`
// runs these too, beside the cluster suites.
import base from './jest.config.js'

const { globalSetup, globalTeardown, ...rest } = base
void globalSetup
void globalTeardown
export default { ...rest, roots: ['<rootDir>/test/unit'] }
