import { rmSync } from 'node:fs'
import { openLmdbStore } from '../../src/store/lmdb-store.ts'
import { storeContract } from './contract.ts'
import { tempDir } from '../support/temp-dir.ts'

const dirs: string[] = []

storeContract('lmdb', {
  open(options) {
    const dir = tempDir('tea-store-')
    dirs.push(dir)
    return openLmdbStore(dir, options)
  },
  async cleanup() {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
  },
})
