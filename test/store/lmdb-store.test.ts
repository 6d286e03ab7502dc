import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openLmdbStore } from '../../src/store/lmdb-store.ts'
import { storeContract } from './contract.ts'

const dirs: string[] = []

storeContract('lmdb', {
  open(options) {
    const dir = mkdtempSync(join(tmpdir(), 'tea-store-'))
    dirs.push(dir)
    return openLmdbStore(dir, options)
  },
  async cleanup() {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
  },
})
