import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { isTeaError } from '../../src/core/errors.ts'
import type { LocateContext } from '../../src/sea/lmdb-addon.ts'
import { explainLoadFailure, loadLmdbAddon, locateLmdbAddon, pickPrebuild } from '../../src/sea/lmdb-addon.ts'
import { tempDir } from '../support/temp-dir.ts'

const tmp = tempDir('tea-addon-test-')
test.after(() => rmSync(tmp, { recursive: true, force: true }))
const repoFile = resolve('package.json')

function ctx(over: Partial<LocateContext> = {}): LocateContext {
  return {
    env: {},
    besideDirs: [],
    seaAddon: () => undefined,
    embeddedAddon: () => undefined,
    resolveFrom: [],
    platform: 'linux',
    arch: 'x64',
    abi: '115',
    cacheRoot: join(tmp, 'cache'),
    ...over,
  }
}

test('an explicit TEA_LMDB_NATIVE path comes first', () => {
  const file = join(tmp, 'explicit.node')
  writeFileSync(file, 'x')
  const beside = join(tmp, 'beside')
  mkdirSync(beside)
  writeFileSync(join(beside, 'lmdb.node'), 'y')
  assert.equal(locateLmdbAddon(ctx({ env: { TEA_LMDB_NATIVE: file }, besideDirs: [beside] })), { path: file, from: 'env' })
  assert.equal(locateLmdbAddon(ctx({ besideDirs: [beside] })), { path: join(beside, 'lmdb.node'), from: 'beside' })
})

test('a TEA_LMDB_NATIVE path that does not exist is an error naming it', () => {
  try {
    locateLmdbAddon(ctx({ env: { TEA_LMDB_NATIVE: join(tmp, 'missing.node') } }))
    assert.unreachable()
  } catch (e) {
    assert.ok(isTeaError(e, 'NATIVE_LOAD_FAILED'))
    assert.match((e as Error).message, 'missing.node')
  }
})

test('a SEA asset is written to the cache dir, before embedded bytes are considered', () => {
  const r = locateLmdbAddon(
    ctx({ seaAddon: () => new TextEncoder().encode('asset'), embeddedAddon: () => Buffer.from('emb').toString('base64') }),
  )
  assert.is(r.from, 'sea-asset')
  assert.ok(r.path.startsWith(join(tmp, 'cache', 'native')))
  assert.is(readFileSync(r.path, 'utf8'), 'asset')
})

test('embedded base64 bytes are decoded into the cache dir (Node 20.11, no assets)', () => {
  const r = locateLmdbAddon(ctx({ embeddedAddon: () => Buffer.from('embedded addon').toString('base64') }))
  assert.is(r.from, 'embedded')
  assert.is(readFileSync(r.path, 'utf8'), 'embedded addon')
})

test('with the hash and size the build recorded, a copy an earlier start wrote is found without reading the carried bytes', () => {
  const bytes = new TextEncoder().encode('carried addon')
  const carried = () => ({ hash: 'feedc0ffee000001', size: bytes.length })
  const first = locateLmdbAddon(ctx({ seaAddon: () => bytes, carried }))
  assert.is(first.path, join(tmp, 'cache', 'native', 'feedc0ffee000001', 'lmdb.node'), 'the recorded hash names the folder')
  const again = locateLmdbAddon(
    ctx({
      seaAddon: () => {
        throw new Error('the carried bytes were read')
      },
      carried,
    }),
  )
  assert.equal(again, { path: first.path, from: 'sea-asset' })
  // A copy of another size (a torn write, another build) is not taken for it.
  writeFileSync(first.path, 'short')
  assert.is(readFileSync(locateLmdbAddon(ctx({ seaAddon: () => bytes, carried })).path, 'utf8'), 'carried addon')
})

test('in a checkout the prebuild package is found through node_modules', () => {
  const r = locateLmdbAddon(ctx({ resolveFrom: [join(tmp, 'nowhere.js'), repoFile], abi: '999' }))
  assert.is(r.from, 'node_modules')
  assert.match(r.path, /@lmdb\/lmdb-linux-x64\/node\.napi\.glibc\.node$/)
})

test('nothing found: NATIVE_LOAD_FAILED says where it looked', () => {
  try {
    locateLmdbAddon(ctx({ besideDirs: [join(tmp, 'b')], resolveFrom: [join(tmp, 'nowhere.js')] }))
    assert.unreachable()
  } catch (e) {
    assert.ok(isTeaError(e, 'NATIVE_LOAD_FAILED'))
    assert.match((e as Error).message, 'TEA_LMDB_NATIVE')
    assert.match((e as Error).message, '@lmdb/lmdb-linux-x64')
  }
})

test('the ABI-specific prebuild is preferred to N-API, musl builds are never picked', () => {
  const files = ['node.abi115.glibc.node', 'node.napi.glibc.node', 'node.napi.musl.node']
  assert.is(pickPrebuild(files, '115'), 'node.abi115.glibc.node')
  assert.is(pickPrebuild(files, '137'), 'node.napi.glibc.node')
  assert.is(pickPrebuild(['node.napi.musl.node'], '137'), undefined)
})

test('a dlopen failure from a noexec cache dir becomes CACHE_DIR_UNUSABLE with the TEA_CACHE_DIR hint', () => {
  const err = new Error('/c/native/1/lmdb.node: failed to map segment from shared object')
  const e = explainLoadFailure(err, { path: '/c/native/1/lmdb.node', from: 'sea-asset' })
  assert.is(e.code, 'CACHE_DIR_UNUSABLE')
  assert.match(e.hint ?? '', 'TEA_CACHE_DIR')
  const other = explainLoadFailure(new Error('GLIBC_2.34 not found'), { path: '/x/lmdb.node', from: 'beside' })
  assert.is(other.code, 'NATIVE_LOAD_FAILED')
  assert.match(other.hint ?? '', 'glibc')
})

test("loading the real prebuild returns lmdb's native exports and records the path for worker threads", () => {
  const env: NodeJS.ProcessEnv = {}
  const exports = loadLmdbAddon(ctx({ env, resolveFrom: [repoFile], abi: process.versions.modules })) as Record<string, unknown>
  assert.type(exports.Env, 'function')
  assert.match(env.TEA_LMDB_NATIVE ?? '', /@lmdb\/lmdb-linux-x64\/node\..*\.node$/)
})

test.run()
