import { rmSync } from 'node:fs'
import { aofContext } from '../../../../src/aof/index.ts'
import { fsTaskStore } from '../../../../src/aof/store/fs/store.ts'
import type { StoreHandle } from '../store-contract.ts'
import { tempDir } from '../../../support/temp-dir.ts'

/**
 * The filesystem side of a contract suite (store-contract.ts, route-contract.ts, bdd-contract.ts): each test gets a
 * data dir of its own; `other` opens a second store on the same folder, as a second process would.
 */
export function fsStores(prefix: string): () => Promise<StoreHandle> {
  return async () => {
    const dir = tempDir(prefix)
    const open = () => fsTaskStore(aofContext(dir, { lock: { timeoutMs: 10_000 } }))
    return {
      store: open(),
      other: async () => open(),
      cleanup: async () => rmSync(dir, { recursive: true, force: true }),
    }
  }
}
