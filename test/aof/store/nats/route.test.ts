import { natsServerMissing } from '../../../support/nats-server.ts'
import { reportSkip } from '../../../support/skip.ts'
import { routeContract } from '../route-contract.ts'
import { natsStores } from './contract-stores.ts'

const missing = natsServerMissing()
if (missing) reportSkip(`router and files contract: NATS JetStream: ${missing}`)
else {
  const { open, teardown } = natsStores('r')
  routeContract('NATS JetStream', open, teardown)
}
