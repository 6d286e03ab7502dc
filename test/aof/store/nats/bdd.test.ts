import { natsServerMissing } from '../../../support/nats-server.ts'
import { reportSkip } from '../../../support/skip.ts'
import { bddContract } from '../bdd-contract.ts'
import { natsStores } from './contract-stores.ts'

const missing = natsServerMissing()
if (missing) reportSkip(`AOF-BDD contract: NATS JetStream: ${missing}`)
else {
  const { open, teardown } = natsStores('b')
  bddContract('NATS JetStream', open, teardown)
}
