/**
 * Issue 9 point 2: each checkpoint record carries a CRC-32, so a byte flipped inside a stored value is
 * CHECKPOINT_CORRUPT on resume, never a silently different state; records from before checksums still read.
 */
import { rmSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { _openRawDb, openLmdbStore } from '../../src/store/lmdb-store.ts'
import { rejects } from '../support/expect.ts'
import { tempDir } from '../support/temp-dir.ts'

async function withRun(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = tempDir('tea-crc-')
  try {
    const store = openLmdbStore(dir)
    await store.createRun({
      id: 'r',
      agent: 'a',
      agentPath: '/a.yaml',
      agentHash: 'h',
      status: 'running',
      node: null,
      step: 0,
      createdAt: 1,
      updatedAt: 1,
    })
    await store.snapshot('r', { step: 0, node: null, state: { start: true }, cursor: { next: 'a' } }, 3)
    await store.appendStep('r', { step: 1, node: 'a', update: { amount: 12345, note: 'paid in full' }, cursor: { next: 'b' } })
    await store.flush()
    await store.close()
    await fn(dir)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

test('an intact log loads; a byte flipped inside a value is CHECKPOINT_CORRUPT naming the run and record', async () => {
  await withRun(async (dir) => {
    const ok = openLmdbStore(dir)
    assert.equal((await ok.loadLatest('r'))?.state, { start: true, amount: 12345, note: 'paid in full' })
    await ok.close()
    const raw = _openRawDb(dir, 'checkpoints')
    const [key] = raw.keys(['r', 1], ['r', 2])
    const bytes = Buffer.from(raw.get(key!)!)
    const at = bytes.indexOf('paid')
    bytes[at] = bytes[at]! ^ 0x20 // 'paid' → 'Paid': still decodes, still a valid record
    await raw.put(key!, bytes)
    await raw.close()
    const damaged = openLmdbStore(dir)
    const e = await rejects(damaged.loadLatest('r'), 'CHECKPOINT_CORRUPT', 'record 1 of run r', 'checksum')
    assert.match(e.hint ?? '', 'tea runs prune')
    await damaged.close()
  })
})

test('a record written before checksums (no seal byte) is read as it is', async () => {
  await withRun(async (dir) => {
    const raw = _openRawDb(dir, 'checkpoints')
    const [key] = raw.keys(['r', 1], ['r', 2])
    const sealed = Buffer.from(raw.get(key!)!)
    assert.is(sealed[0], 0xc1, 'new records are sealed')
    await raw.put(key!, sealed.subarray(5))
    await raw.close()
    const store = openLmdbStore(dir)
    assert.equal((await store.loadLatest('r'))?.state, { start: true, amount: 12345, note: 'paid in full' })
    await store.close()
  })
})

test.run()
