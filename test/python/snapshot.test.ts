/**
 * The interpreter's memory snapshot (src/python/snapshot.ts): the first start makes it in the cache dir, later
 * starts restore it and draw their random state again, a snapshot that will not restore is made again, and
 * TEA_PYTHON_SNAPSHOT=0 starts without one. Pyodide's snapshot options are internal to Pyodide: these tests are what
 * holds the version in package.json to them. A restored interpreter keeps the str hash seed of the one the
 * snapshot came from, which is how a test tells a restored start from a fresh one.
 */
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { PythonEngine, type PythonOutcome } from '../../src/python/engine.ts'
import { snapshotFile } from '../../src/python/snapshot.ts'
import { runtimeFiles } from '../../src/sea/runtime-files.ts'
import { tempDir } from '../support/temp-dir.ts'

const t = suite<{ cache: string; loader: string; env: Record<string, string | undefined> }>('Python snapshot')
t.before((c) => {
  c.cache = tempDir('tea-python-snapshot-')
  c.loader = runtimeFiles('python', ['pyodide.cjs'], 'pyodide/pyodide.js')[0]!
  c.env = { TEA_CACHE_DIR: process.env.TEA_CACHE_DIR, TEA_PYTHON_SNAPSHOT: process.env.TEA_PYTHON_SNAPSHOT }
  process.env.TEA_CACHE_DIR = c.cache
  delete process.env.TEA_PYTHON_SNAPSHOT
})
t.after((c) => {
  for (const [k, v] of Object.entries(c.env)) v === undefined ? delete process.env[k] : (process.env[k] = v)
  rmSync(c.cache, { recursive: true, force: true })
})

/** What one interpreter reports: its str hash seed shows through hash(), its random state through random(). */
async function probe(loader: string): Promise<{ hash: number; random: number }> {
  const py = await PythonEngine.start({ loader })
  const o: PythonOutcome = await py.run('import random\nreturn {"hash": hash("tea"), "random": random.random()}', {}, {}, undefined)
  if (o.kind !== 'done') throw new Error(JSON.stringify(o))
  return o.update as { hash: number; random: number }
}

t('the first start makes the snapshot; the next restores it (same hash seed) and draws its random state again', async (c) => {
  const file = snapshotFile(c.loader)
  assert.ok(file.startsWith(join(c.cache, 'python-snapshot')), file)
  const first = await probe(c.loader)
  assert.ok(statSync(file).size > 1_000_000, 'no snapshot was kept')
  const second = await probe(c.loader)
  assert.is(second.hash, first.hash, 'the second start did not come from the snapshot of the first')
  assert.is.not(second.random, first.random, 'a restored interpreter repeated the random numbers of the first')
})

t('a snapshot cut short, or from another Pyodide (its magic number wrong), is made again and the start goes on', async (c) => {
  const file = snapshotFile(c.loader)
  const size = statSync(file).size
  writeFileSync(file, Buffer.alloc(4096))
  const fresh = await probe(c.loader)
  assert.is(statSync(file).size, size, 'the bad snapshot was not made again')
  assert.is((await probe(c.loader)).hash, fresh.hash, 'the snapshot made again is not the one restored next')
  assert.equal(
    readdirSync(join(c.cache, 'python-snapshot')).filter((f) => f.endsWith('.tmp')),
    [],
  )
})

t(
  'D1 a snapshot that is not the one tea wrote (made from an interpreter whose json.dumps was patched) is never restored: it is made again',
  async (c) => {
    const file = snapshotFile(c.loader)
    await probe(c.loader) // tea's own snapshot exists
    const { loadPyodide } = createRequire(c.loader)(c.loader) as {
      loadPyodide(o: Record<string, unknown>): Promise<{ runPython(code: string): unknown; makeMemorySnapshot(): Uint8Array }>
    }
    const evil = await loadPyodide({ indexURL: `${dirname(c.loader)}/`, _makeSnapshot: true })
    evil.runPython('import json\njson.dumps = lambda *a, **k: "PATCHED"')
    writeFileSync(file, evil.makeMemorySnapshot())
    const py = await PythonEngine.start({ loader: c.loader })
    assert.equal(await py.run('import json\nreturn {"d": json.dumps(1)}', {}, {}, undefined), {
      kind: 'done',
      update: { d: '1' },
      output: [],
    })
    const again = readFileSync(file)
    assert.is(again.subarray(0, 8).toString(), 'TEASNAP1', 'the replaced snapshot was not made again')
    assert.is(statSync(file).mode & 0o777, 0o600)
    assert.is(statSync(dirname(file)).mode & 0o777, 0o700)
  },
)

t('TEA_PYTHON_SNAPSHOT=0 starts from scratch: a hash seed of its own', async (c) => {
  const restored = await probe(c.loader)
  process.env.TEA_PYTHON_SNAPSHOT = '0'
  try {
    const own = await probe(c.loader)
    assert.is.not(own.hash, restored.hash)
  } finally {
    delete process.env.TEA_PYTHON_SNAPSHOT
  }
})

t.run()
