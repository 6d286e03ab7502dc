import { natsServerMissing } from '../../../support/nats-server.ts'
import { reportSkip } from '../../../support/skip.ts'
import { storeContract } from '../store-contract.ts'
import { natsStores } from './contract-stores.ts'

const missing = natsServerMissing()
if (missing) reportSkip(`task store contract: NATS JetStream: ${missing}`)
else {
  const { open, teardown } = natsStores('t')
  storeContract('NATS JetStream', open, teardown)
}
