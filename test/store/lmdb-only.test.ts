import { execFileSync, spawn } from 'node:child_process'
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { open } from 'lmdb'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { skipIf } from '../support/skip.ts'
import { isTeaError, type TeaError } from '../../src/core/errors.ts'
import { _openRawDb, openLmdbStore } from '../../src/store/lmdb-store.ts'
import type { Store } from '../../src/store/types.ts'
import { run } from './contract.ts'
import { tempDir as newTempDir } from '../support/temp-dir.ts'

const dirs: string[] = []
function tempDir(): string {
  const dir = newTempDir('tea-lmdb-')
  dirs.push(dir)
  return dir
}
test.after.each(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

async function caught(fn: () => unknown): Promise<TeaError> {
  try {
    await fn()
  } catch (e) {
    assert.ok(isTeaError(e), `expected a TeaError, got ${String(e)}`)
    return e as TeaError
  }
  throw new Error('expected a failure')
}

async function threeSteps(store: Store, runId: string): Promise<void> {
  await store.snapshot(runId, { step: 0, node: null, state: { n: 0, text: 'start' }, cursor: { next: 'a' } })
  for (let i = 1; i <= 3; i++) await store.appendStep(runId, { step: i, node: 'a', update: { n: i }, cursor: { next: 'a' } })
}

test('creates the data dir and one environment file tea.lmdb in it', async () => {
  const dir = join(tempDir(), 'nested', 'data')
  const store = openLmdbStore(dir)
  await store.memoryPut('default', 'k', 1)
  await store.close()
  const raw = _openRawDb(dir, 'memory')
  assert.is(raw.keys(['default', ''], ['default', '\u{10ffff}']).length, 1)
  await raw.close()
})

test('runs, checkpoints, plans and memory survive close and reopen', async () => {
  const dir = tempDir()
  const a = openLmdbStore(dir)
  await a.createRun(run('r1', { status: 'interrupted', node: 'a', step: 3 }))
  await threeSteps(a, 'r1')
  await a.putPlanHeader('r1', 'p', { goal: 'g' })
  await a.putSubtask('r1', 'p', 's1', { status: 'completed', result: 'ok' })
  await a.memoryPut('default', 'fact', { sky: 'blue' })
  await a.close()

  const b = openLmdbStore(dir)
  assert.equal(await b.getRun('r1'), run('r1', { status: 'interrupted', node: 'a', step: 3 }))
  assert.equal(await b.loadLatest('r1'), { step: 3, node: 'a', state: { n: 3, text: 'start' }, cursor: { next: 'a' } })
  assert.equal(b.checkpointStats('r1').updates, 3)
  assert.equal((await b.getPlan('r1', 'p'))?.subtasks.get('s1'), { status: 'completed', result: 'ok' })
  assert.equal(await b.memoryGet('default', 'fact'), { found: true, value: { sky: 'blue' } })
  // Appending after a reopen continues the sequence instead of overwriting records.
  await b.appendStep('r1', { step: 4, node: 'b', update: { n: 4 }, cursor: { next: '__end__' } })
  assert.equal((await b.loadLatest('r1'))?.state, { n: 4, text: 'start' })
  await b.close()
})

test('plans and memory are opened at their first use: a run that uses neither creates neither (issue 14)', async () => {
  const dir = tempDir()
  const a = openLmdbStore(dir)
  await a.createRun(run('r1'))
  await threeSteps(a, 'r1')
  await a.close()
  const named = (): string[] => {
    const env = open({ path: join(dir, 'tea.lmdb'), readOnly: true })
    try {
      return [...env.getKeys()].map(String).sort()
    } finally {
      void env.close()
    }
  }
  assert.equal(named(), ['checkpoints', 'runs'])
  // First used while the run's own writes are still queued: they open, and everything commits.
  const b = openLmdbStore(dir)
  const pending = threeSteps(b, 'r2')
  await Promise.all([pending, b.putPlanHeader('r2', 'p', { goal: 'g' }), b.memoryPut('default', 'k', 1)])
  assert.equal((await b.getPlan('r2', 'p'))?.header, { goal: 'g' })
  assert.equal(await b.memoryGet('default', 'k'), { found: true, value: 1 })
  await b.close()
  assert.equal(named(), ['checkpoints', 'memory', 'plans', 'runs'])
})

test('a second store on the same path sees what the first committed, both ways', async () => {
  const dir = tempDir()
  const a = openLmdbStore(dir)
  const b = openLmdbStore(dir)
  await a.createRun(run('r1'))
  await a.memoryPut('default', 'k', { shape: 'new' })
  assert.is((await b.getRun('r1'))?.id, 'r1')
  assert.equal(await b.memoryGet('default', 'k'), { found: true, value: { shape: 'new' } })
  await b.putPlanHeader('r1', 'p', { other: 'shape', n: 1 })
  assert.equal((await a.getPlan('r1', 'p'))?.header, { other: 'shape', n: 1 })
  await b.close()
  // Closing one store leaves the other working.
  await a.memoryPut('default', 'after', 2)
  assert.equal(await a.memoryGet('default', 'after'), { found: true, value: 2 })
  await a.close()
})

test('a store opened in a worker thread on the same data dir shares committed data both ways', async () => {
  const dir = tempDir()
  const store = openLmdbStore(dir)
  await store.memoryPut('default', 'from-main', 'hello')
  await store.putPlanHeader('r1', 'main-plan', { by: 'main' })
  await store.putSubtask('r1', 'main-plan', 's1', { status: 'pending' })
  const worker = new Worker(new URL('./worker-entry.mjs', import.meta.url), { workerData: { dir } })
  const reply = await new Promise<{ seen: unknown }>((resolve, reject) => {
    worker.once('message', resolve)
    worker.once('error', reject)
  })
  await worker.terminate()
  assert.equal(reply.seen, { found: true, value: 'hello' })
  assert.equal(await store.memoryGet('default', 'from-worker'), { found: true, value: { thread: 'worker' } })
  // Plan numbers are allocated atomically across threads: the two plans' subtasks stay apart.
  assert.equal([...(await store.getPlan('r1', 'worker-plan'))!.subtasks], [['s1', { status: 'completed' }]])
  assert.equal([...(await store.getPlan('r1', 'main-plan'))!.subtasks], [['s1', { status: 'pending' }]])
  await store.close()
})

test('deleteRun leaves no plan or checkpoint records behind', async () => {
  const dir = tempDir()
  const store = openLmdbStore(dir)
  await store.createRun(run('r1'))
  await threeSteps(store, 'r1')
  // The subtask is queued before its header: both land, and the delete finds the subtasks through the header.
  await Promise.all([store.putSubtask('r1', 'p', 's1', { status: 'pending' }), store.putPlanHeader('r1', 'p', { goal: 'g' })])
  assert.equal((await store.getPlan('r1', 'p'))?.header, { goal: 'g' })
  await store.deleteRun('r1')
  await store.close()
  for (const name of ['checkpoints', 'plans', 'runs'] as const) {
    const raw = _openRawDb(dir, name)
    // everything but lmdb's shared-structures entry and the plan counter (key 0)
    const left = raw.keys(1, ['\u{10ffff}']).filter((k) => typeof k !== 'number')
    await raw.close()
    assert.equal(left, [], `${name} still holds ${JSON.stringify(left)}`)
  }
})

test('records committed before a SIGKILL survive it, and the log stays readable', async () => {
  const dir = tempDir()
  const child = spawn(process.execPath, ['--import', 'tsx', new URL('./crash-writer.ts', import.meta.url).pathname, dir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let last = 0
  await new Promise<void>((resolve, reject) => {
    let buffered = ''
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString()
      const lines = buffered.split('\n')
      buffered = lines.pop()!
      if (lines.length) last = Number(lines.at(-1))
      if (last >= 60 && !child.killed) child.kill('SIGKILL')
    })
    // A child that stalls must not hang the suite: it is killed after 60 s and the assertion below fails.
    const guard = setTimeout(() => child.kill('SIGKILL'), 60_000)
    child.once('exit', () => {
      clearTimeout(guard)
      resolve()
    })
    child.once('error', reject)
  })
  assert.ok(last >= 60, `child reported ${last} steps before dying`)
  const store = openLmdbStore(dir)
  const loaded = await store.loadLatest('crash')
  assert.ok(loaded !== undefined && loaded.step >= last, `reported step ${last} committed, loaded ${loaded?.step}`)
  assert.is(loaded!.state.n, loaded!.step)
  await store.close()
})

test('CHECKPOINT_CORRUPT names the run and record when a record holds garbage bytes', async () => {
  const dir = tempDir()
  const store = openLmdbStore(dir)
  await threeSteps(store, 'r1')
  await store.close()
  const raw = _openRawDb(dir, 'checkpoints')
  const keys = raw.keys(['r1', 0], ['r1', Infinity])
  await raw.put(keys[2]!, Buffer.from('garbage, not msgpack'))
  await raw.close()

  const again = openLmdbStore(dir)
  const e = await caught(() => again.loadLatest('r1'))
  assert.is(e.code, 'CHECKPOINT_CORRUPT')
  assert.match(e.message, 'run r1')
  assert.match(e.message, 'record 2')
  // The damaged run does not stop the store from working for others.
  await threeSteps(again, 'r2')
  assert.equal((await again.loadLatest('r2'))?.state.n, 3)
  await again.close()
})

test('CHECKPOINT_CORRUPT for a truncated record', async () => {
  const dir = tempDir()
  const store = openLmdbStore(dir)
  await threeSteps(store, 'r1')
  await store.close()
  const raw = _openRawDb(dir, 'checkpoints')
  const last = raw.keys(['r1', 0], ['r1', Infinity]).at(-1)!
  const bytes = raw.get(last)!
  await raw.put(last, bytes.subarray(0, bytes.length - 3))
  await raw.close()

  const again = openLmdbStore(dir)
  const e = await caught(() => again.loadLatest('r1'))
  assert.is(e.code, 'CHECKPOINT_CORRUPT')
  assert.match(e.message, 'record 3 of run r1')
  await again.close()
})

test('STORE_NOT_WRITABLE names the path and the fix when the data dir sits under a file', async () => {
  const file = join(tempDir(), 'plain-file')
  writeFileSync(file, 'x')
  const e = await caught(() => openLmdbStore(join(file, 'data')))
  assert.is(e.code, 'STORE_NOT_WRITABLE')
  assert.match(e.message, join(file, 'data'))
  assert.match(e.hint ?? '', '--data-dir')
  assert.match(e.hint ?? '', 'TEA_DATA_DIR')
})

test('STORE_NOT_WRITABLE when the data dir is itself a file', async () => {
  const file = join(tempDir(), 'not-a-dir')
  writeFileSync(file, 'x')
  assert.is((await caught(() => openLmdbStore(file))).code, 'STORE_NOT_WRITABLE')
})

// A read-only data dir: a read-only tmpfs as root (root ignores directory permissions), a 0555 folder otherwise.
const asRoot = process.getuid?.() === 0
skipIf(
  test,
  asRoot && !canMount() && 'cannot mount a read-only tmpfs here',
  'STORE_NOT_WRITABLE for a read-only data dir, a coded error, never a stack',
  async () => {
    const dir = newTempDir('tea-ro-')
    if (asRoot) execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,ro', 'tmpfs', dir])
    else chmodSync(dir, 0o555)
    try {
      const e = await caught(() => openLmdbStore(join(dir, 'data')))
      assert.is(e.code, 'STORE_NOT_WRITABLE')
      assert.match(e.message, dir)
      assert.match(e.hint ?? '', '--data-dir')
    } finally {
      if (asRoot) execFileSync('umount', [dir])
      else chmodSync(dir, 0o755)
      rmSync(dir, { recursive: true, force: true })
    }
  },
)

function canMount(): boolean {
  const dir = newTempDir('tea-ro-probe-')
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { stdio: 'ignore' })
    execFileSync('umount', [dir], { stdio: 'ignore' })
    return true
  } catch {
    return false
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

test('STORE_ERROR, not a crash, when tea.lmdb is not an LMDB file', async () => {
  const dir = tempDir()
  writeFileSync(join(dir, 'tea.lmdb'), Buffer.alloc(64 * 1024, 7))
  const e = await caught(() => openLmdbStore(dir))
  assert.is(e.code, 'STORE_ERROR')
  assert.match(e.message, join(dir, 'tea.lmdb'))
})

test('retention deletes the records older than the oldest kept snapshot', async () => {
  const dir = tempDir()
  const store = openLmdbStore(dir, { keepSnapshots: 2 })
  for (let s = 0; s < 5; s++) {
    await store.snapshot('r1', { step: s * 4, node: 'a', state: { s }, cursor: { next: 'a' } })
    for (let i = 1; i <= 3; i++) await store.appendStep('r1', { step: s * 4 + i, node: 'a', update: { i }, cursor: { next: 'a' } })
  }
  await store.close()
  const raw = _openRawDb(dir, 'checkpoints')
  // 20 records written; the newest 2 snapshots and their 3 updates each remain, as seqs 12..19.
  assert.equal(
    raw.keys(['r1', 0], ['r1', Infinity]),
    [12, 13, 14, 15, 16, 17, 18, 19].map((n) => ['r1', n]),
  )
  await raw.close()
})

test('a 1-key update costs at most 300 bytes (key + value as stored)', async () => {
  const dir = tempDir()
  const store = openLmdbStore(dir)
  const runId = '01jd3k5m7qabcdefgh'
  await store.snapshot(runId, { step: 0, node: null, state: { text: 'x'.repeat(1000) }, cursor: { next: 'summarise' } })
  const before = await store.checkpointBytes(runId)
  await store.appendStep(runId, { step: 1, node: 'summarise', update: { summary: 'A short summary line.' }, cursor: { next: 'publish' } })
  const bytes = (await store.checkpointBytes(runId)) - before
  assert.ok(bytes > 0 && bytes <= 300, `1-key update took ${bytes} B`)
  await store.close()
})

test.run()
