import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { CommitQueue } from '../../src/store/commit-queue.ts'
import { createMemoryStore } from '../../src/store/memory-store.ts'

/** Writes that commit only when the test says so; `ids()` lists them in the order the queue issued them. */
function deferredWrites() {
  const issued: Array<{ id: string; commit: () => void; fail: (err: Error) => void }> = []
  const write = (id: string) => () =>
    new Promise<void>((resolve, reject) => {
      issued.push({ id, commit: () => resolve(), fail: reject })
    })
  const find = (id: string) => issued.find((w) => w.id === id)!
  const ids = (): string[] => issued.map((w) => w.id)
  return { ids, write, find }
}

const tick = () => new Promise((r) => setImmediate(r))
const state = (p: Promise<unknown>) => {
  const s = { v: 'pending' as string }
  p.then(
    () => (s.v = 'resolved'),
    (e: Error) => (s.v = `rejected: ${e.message}`),
  )
  return s
}

test('a callback runs only once its write has committed, and callbacks run in hand-over order', async () => {
  const { write, find } = deferredWrites()
  const q = new CommitQueue()
  const counted: string[] = []
  for (const id of ['a', 'b', 'c']) q.add(write(id), () => counted.push(id))
  assert.is(q.pending, 3)
  find('c').commit()
  find('b').commit()
  await tick()
  assert.equal(counted, [], 'b and c committed, but a, before them, has not: nothing counts yet')
  find('a').commit()
  await tick()
  assert.equal(counted, ['a', 'b', 'c'])
  assert.is(q.pending, 0)
})

test('without group mode every write is issued as it is handed over', () => {
  const { ids, write } = deferredWrites()
  const q = new CommitQueue()
  q.add(write('a'))
  q.add(write('b'))
  assert.equal(ids(), ['a', 'b'])
})

test('drain waits for every write and then resolves; an empty queue drains at once', async () => {
  const { write, find } = deferredWrites()
  const q = new CommitQueue()
  const empty = state(q.drain())
  await tick()
  assert.is(empty.v, 'resolved')
  q.add(write('a'))
  q.add(write('b'))
  const drained = state(q.drain())
  find('a').commit()
  await tick()
  assert.is(drained.v, 'pending', 'b has not committed')
  find('b').commit()
  await tick()
  assert.is(drained.v, 'resolved')
})

test('a failed write: the writes before it still count, neither it nor any later one does, drain rejects with it, and nothing more is written', async () => {
  const { ids, write, find } = deferredWrites()
  const q = new CommitQueue()
  const counted: string[] = []
  for (const id of ['a', 'b', 'c']) q.add(write(id), () => counted.push(id))
  find('b').fail(new Error('disk full'))
  find('c').commit()
  await tick()
  assert.equal(counted, [])
  find('a').commit()
  await tick()
  assert.equal(counted, ['a'], 'a, before the failure, still counts once it commits; c, after it, never does')
  assert.is(q.failed, true)
  assert.is((q.failure as Error).message, 'disk full')
  q.add(write('d'), () => counted.push('d'))
  assert.equal(ids(), ['a', 'b', 'c'], 'd is not written after the failure')
  const drained = state(q.drain())
  await tick()
  assert.is(drained.v, 'rejected: disk full')
  assert.equal(counted, ['a'])
})

test('drain after a failure waits for the writes still in flight before it rejects', async () => {
  const { write, find } = deferredWrites()
  const q = new CommitQueue()
  q.add(write('a'))
  q.add(write('b'))
  find('a').fail(new Error('bad'))
  const drained = state(q.drain())
  await tick()
  assert.is(drained.v, 'pending', 'b is still in flight')
  find('b').commit()
  await tick()
  assert.is(drained.v, 'rejected: bad')
})

test('a write that throws at once and a callback that throws fail the queue like a failed commit', async () => {
  const q = new CommitQueue()
  q.add(() => {
    throw new Error('sync failure')
  })
  assert.is(state(q.drain()).v, 'pending')
  await tick()
  assert.is((q.failure as Error).message, 'sync failure')

  const r = new CommitQueue()
  const counted: string[] = []
  r.add(
    async () => {},
    () => {
      throw new Error('callback broke')
    },
  )
  r.add(
    async () => {},
    () => counted.push('second'),
  )
  const drained = state(r.drain())
  await tick()
  assert.is(drained.v, 'rejected: callback broke')
  assert.equal(counted, [])
})

test('backpressure: full at maxPending, and room() resolves only once the oldest write has counted', async () => {
  const { write, find } = deferredWrites()
  const q = new CommitQueue({ maxPending: 2 })
  q.add(write('a'))
  assert.is(q.full, false)
  q.add(write('b'))
  assert.is(q.full, true)
  const room = state(q.room())
  find('b').commit()
  await tick()
  assert.is(room.v, 'pending', 'b committed but does not count before a')
  find('a').commit()
  await tick()
  assert.is(room.v, 'resolved')
  assert.is(q.full, false)
  assert.is(state(q.room()).v, 'pending', 'a fresh promise')
  await tick()
})

test('backpressure: room() resolves on a failure too, so a waiting writer learns of it', async () => {
  const { write, find } = deferredWrites()
  const q = new CommitQueue({ maxPending: 1 })
  q.add(write('a'))
  const room = state(q.room())
  find('a').fail(new Error('gone'))
  await tick()
  assert.is(room.v, 'resolved')
  assert.is(q.failed, true)
})

test('group mode: an idle queue writes at once; writes handed over while a batch commits go out together when it has', async () => {
  const { ids, write, find } = deferredWrites()
  const q = new CommitQueue({ group: true })
  const counted: string[] = []
  q.add(write('a'), () => counted.push('a'))
  assert.equal(ids(), ['a'])
  q.add(write('b'), () => counted.push('b'))
  q.add(write('c'), () => counted.push('c'))
  await tick()
  assert.equal(ids(), ['a'], 'b and c wait for a')
  find('a').commit()
  await tick()
  assert.equal(ids(), ['a', 'b', 'c'], 'b and c are issued in one turn')
  assert.equal(counted, ['a'], 'b and c count only once their own writes commit')
  find('c').commit()
  await tick()
  assert.equal(counted, ['a'])
  find('b').commit()
  await q.drain()
  assert.equal(counted, ['a', 'b', 'c'])
})

test('group mode: a failure drops the writes waiting for the batch', async () => {
  const { ids, write, find } = deferredWrites()
  const q = new CommitQueue({ group: true })
  q.add(write('a'))
  q.add(write('b'))
  find('a').fail(new Error('full'))
  const drained = state(q.drain())
  await tick()
  assert.equal(ids(), ['a'])
  assert.is(drained.v, 'rejected: full')
})

test('group mode batches a busy stream of writes into one store transaction per commit (memory store, counted)', async () => {
  // The memory store commits in a microtask; count how many separate issue turns the queue used.
  const store = createMemoryStore()
  const q = new CommitQueue({ group: true })
  const turns = new Set<number>()
  let turn = 0
  const counted: number[] = []
  for (let i = 0; i < 10; i++) {
    q.add(
      () => {
        turns.add(turn)
        return store.putSubtask('run', 'plan', `t${i}`, { s: 2 })
      },
      () => counted.push(i),
    )
  }
  turn++
  await q.drain()
  assert.equal(counted, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
  assert.is((await store.getPlan('run', 'plan'))?.subtasks.size, 10)
  assert.is(turns.size, 2, 'the first write alone, then the nine that waited for it, together')
})

test.run()
