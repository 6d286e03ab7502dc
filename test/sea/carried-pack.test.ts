import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { isTeaError } from '../../src/core/errors.ts'
import { llamaModule } from '../../src/sea/llama-runtime.ts'
import { carriedBytes, type SeaApi } from '../../src/sea/sea-api.ts'
import { tempDir } from '../support/temp-dir.ts'

// A feature's files travel as one SEA asset, `<feature>.pack`, each found by the offset and size the build
// recorded in carried.json (scripts/build/sea-build.mjs, packFeatures): read in place, bounds checked.
const tmp = tempDir('tea-pack-test-')
test.after(() => rmSync(tmp, { recursive: true, force: true }))

const pack = Buffer.concat([Buffer.from('AAAA'), Buffer.from('bbbbbb'), Buffer.from('c')])
const carried = {
  'llama/a.so': { hash: '0', size: 4, pack: 'llama.pack', offset: 0 },
  'llama/b.so': { hash: '0', size: 6, pack: 'llama.pack', offset: 4 },
  'llama/past-end.so': { hash: '0', size: 6, pack: 'llama.pack', offset: 8 },
  'lmdb.node': { hash: '0', size: 3 },
  // Appended to the executable (Node 20.11): counted back from its end.
  'lua/glue.wasm': { hash: '0', size: 5, pack: '<executable>', offset: 9 },
  'lua/index.cjs': { hash: '0', size: 4, pack: '<executable>', offset: 4 },
  'lua/too-far.cjs': { hash: '0', size: 4, pack: '<executable>', offset: 4000 },
}
const assets: Record<string, ArrayBuffer> = {
  'llama.pack': pack.buffer.slice(pack.byteOffset, pack.byteOffset + pack.length),
  'lmdb.node': new Uint8Array([1, 2, 3]).buffer,
}
let copies = 0
const sea = {
  getAsset(key: string, encoding?: 'utf8') {
    if (key === 'carried.json' && encoding === 'utf8') return JSON.stringify(carried)
    const a = assets[key]
    if (!a) throw new Error(`no asset ${key}`)
    copies++
    return a.slice(0)
  },
  getRawAsset(key: string) {
    const a = assets[key]
    if (!a) throw new Error(`no asset ${key}`)
    return a
  },
} as SeaApi

test("issue 30 item 3: a packed file is read in place from its feature's pack, by the offset and size the build recorded", () => {
  assert.is(Buffer.from(carriedBytes('llama/a.so', sea)!).toString(), 'AAAA')
  assert.is(Buffer.from(carriedBytes('llama/b.so', sea)!).toString(), 'bbbbbb')
  assert.is(copies, 0, 'the pack was copied')
  // A record past the pack's end (a damaged executable) gives nothing rather than other bytes.
  assert.is(carriedBytes('llama/past-end.so', sea), undefined)
  assert.is(carriedBytes('llama/absent.so', sea), undefined)
  // A file carried as an asset of its own still reads as before.
  assert.equal([...carriedBytes('lmdb.node', sea)!], [1, 2, 3])
})

test("issue 30 item 3: on Node 20.11 a feature's files are read from the end of the executable, by their distance from it", () => {
  const exe = join(tmp, 'tea-armv7')
  writeFileSync(exe, Buffer.concat([Buffer.alloc(100, 0x7f), Buffer.from('GLUE!'), Buffer.from('init')]))
  assert.is(Buffer.from(carriedBytes('lua/glue.wasm', undefined, exe)!).toString(), 'GLUE!')
  assert.is(Buffer.from(carriedBytes('lua/index.cjs', undefined, exe)!).toString(), 'init')
  assert.is(carriedBytes('lua/too-far.cjs', undefined, exe), undefined)
  assert.is(carriedBytes('lua/glue.wasm', undefined, join(tmp, 'absent')), undefined)
})

test('issue 30 item 3: from source (no build carried llama/) llamaModule is a coded error, not a crash', () => {
  try {
    llamaModule()
    assert.unreachable('llamaModule loaded without a carried runtime')
  } catch (e) {
    assert.ok(isTeaError(e, 'CODE_ERROR'), String(e))
    assert.match((e as Error).message, 'carries no llama.cpp runtime')
  }
})

test.run()
