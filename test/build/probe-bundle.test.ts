import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { buildProbe } from './fixtures/build-probe.ts'
import { tempDir } from '../support/temp-dir.ts'
import { cleanEnv } from '../e2e/sea-harness.ts'

// The probe opens lmdb (compression on, a 12 KB value, 1000 keys) and runs 4 tasks on a 2-thread tinypool pool
// whose workers load the bundle itself and open the same database.
const tmp = tempDir('tea-probe-test-')
test.after(() => rmSync(tmp, { recursive: true, force: true }))

let probe: Awaited<ReturnType<typeof buildProbe>>
test.before(async () => {
  probe = await buildProbe(join(tmp, 'build'))
})

const probeEnv = () => cleanEnv({ TEA_CACHE_DIR: join(tmp, 'cache') })

test("the patched bundle has no import.meta, one msgpackr, and no file reads of lmdb's dictionary", () => {
  const text = readFileSync(probe.file, 'utf8')
  assert.not.match(text, 'import.meta')
  assert.not.match(text, 'dict/dict.txt')
  const inputs = Object.keys(probe.metafile.inputs)
  assert.ok(inputs.some((f) => /node_modules\/msgpackr\/pack\.js$/.test(f)))
  assert.not.ok(
    inputs.some((f) => f.includes('lmdb/node_modules/msgpackr')),
    "lmdb's nested msgpackr 1.x must be replaced",
  )
  assert.not.ok(
    inputs.some((f) => f.includes('node-gyp-build-optional-packages')),
    "lmdb's native loader must be replaced",
  )
  assert.not.ok(
    inputs.some((f) => f.includes('tinypool/dist/entry/')),
    "tinypool's worker entry travels as a string, not as a module",
  )
})

test('run from the checkout: lmdb in the main thread and in pool workers that load the bundle itself', () => {
  const db = join(tmp, 'db1')
  const r = spawnSync(process.execPath, [probe.file, db], { encoding: 'utf8', env: probeEnv(), timeout: 60_000 })
  assert.is(r.status, 0, r.stderr)
  const out = JSON.parse(r.stdout)
  assert.is(out.range, 1000)
  assert.is(out.bigOk, true)
  assert.is(out.workers.length, 4)
  for (const w of out.workers) {
    assert.is(w.ok, true)
    assert.is(w.count, 1000)
  }
  assert.is(out.workers[0].len, 12_000)
  assert.match(out.lmdbNative, /node_modules\/@lmdb\/lmdb-linux-x64\//)
})

test('copied out of the checkout: a clear error without the addon, and it works with lmdb.node beside it', () => {
  const away = join(tmp, 'away')
  mkdirSync(away)
  const file = join(away, 'probe.cjs')
  copyFileSync(probe.file, file)
  const missing = spawnSync(process.execPath, [file, join(away, 'db')], { cwd: away, encoding: 'utf8', env: probeEnv(), timeout: 60_000 })
  assert.is.not(missing.status, 0)
  assert.match(missing.stderr, "lmdb's native addon was not found")
  assert.match(missing.stderr, 'TEA_LMDB_NATIVE')
  const prebuild = join(resolve('node_modules/@lmdb/lmdb-linux-x64'), 'node.napi.glibc.node')
  copyFileSync(prebuild, join(away, 'lmdb.node'))
  const ok = spawnSync(process.execPath, [file, join(away, 'db')], { cwd: away, encoding: 'utf8', env: probeEnv(), timeout: 60_000 })
  assert.is(ok.status, 0, ok.stderr)
  assert.is(JSON.parse(ok.stdout).lmdbNative, join(away, 'lmdb.node'))
})

test.run()
