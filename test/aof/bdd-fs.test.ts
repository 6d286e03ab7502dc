import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { aofContext } from '../../src/aof/index.ts'
import { fsTaskStore } from '../../src/aof/store-fs.ts'
import { bddContract } from './bdd-contract.ts'

bddContract('filesystem', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tea-bdd-fs-'))
  const open = () => fsTaskStore(aofContext(dir, { lock: { timeoutMs: 10_000 } }))
  return {
    store: open(),
    other: async () => open(),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  }
})
