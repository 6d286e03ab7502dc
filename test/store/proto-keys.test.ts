/**
 * Issue 9 point 7: a `__proto__` key is data, kept through a checkpoint (msgpackr's decoder renamed it to
 * `__proto_`): escaped on the way into LMDB and restored on the way out, never a prototype.
 */
import { rmSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { openLmdbStore } from '../../src/store/lmdb-store.ts'
import { escapeProtoKeys, restoreProtoKeys } from '../../src/store/proto-keys.ts'
import { tempDir } from '../support/temp-dir.ts'

const withProto = (): Record<string, unknown> =>
  JSON.parse('{"a": 1, "__proto__": {"polluted": true}, "list": [{"__proto__": 2}], "__proto_": "x", "__proto__\\u0000": "nul"}')

test('escape and restore are inverse, keep every key and its order, and never set a prototype', () => {
  const value = withProto()
  const escaped = escapeProtoKeys(value) as Record<string, unknown>
  assert.not.ok(Object.keys(escaped).includes('__proto__'), 'nothing reaches the decoder as __proto__')
  const back = restoreProtoKeys(escaped) as Record<string, unknown>
  assert.equal(Object.keys(back), ['a', '__proto__', 'list', '__proto_', '__proto__\u0000'])
  assert.ok(Object.hasOwn(back, '__proto__'))
  assert.is(Object.getPrototypeOf(back), Object.prototype)
  assert.equal(JSON.stringify(back), JSON.stringify(value))
  assert.is(({} as { polluted?: boolean }).polluted, undefined)
})

test('values without such keys are returned as they are (no copy)', () => {
  const plain = { a: { b: [1, { c: 2 }] } }
  assert.is(escapeProtoKeys(plain), plain)
  assert.is(restoreProtoKeys(plain), plain)
})

test('a __proto__ state key survives a checkpoint round trip through LMDB', async () => {
  const dir = tempDir('tea-proto-')
  try {
    const store = openLmdbStore(dir)
    const state = withProto()
    await store.createRun({
      id: 'p',
      agent: 'a',
      agentPath: '/a.yaml',
      agentHash: 'h',
      status: 'running',
      node: null,
      step: 0,
      createdAt: 1,
      updatedAt: 1,
    })
    await store.snapshot('p', { step: 1, node: 'n', state, cursor: { next: '__end__' } }, 3)
    await store.memoryPut('ns', 'k', state)
    await store.flush()
    await store.close()
    const again = openLmdbStore(dir)
    const loaded = await again.loadLatest('p')
    assert.equal(JSON.stringify(loaded?.state), JSON.stringify(state))
    assert.ok(Object.hasOwn(loaded!.state, '__proto__'))
    assert.equal(JSON.stringify((await again.memoryGet('ns', 'k')).value), JSON.stringify(state))
    await again.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test.run()
