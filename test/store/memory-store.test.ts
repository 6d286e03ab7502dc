import { createMemoryStore } from '../../src/store/memory-store.ts'
import { storeContract } from './contract.ts'

storeContract('memory', {
  open: (options) => createMemoryStore(options),
  cleanup: async () => {},
})
