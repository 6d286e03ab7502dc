/**
 * The engine's checkpointer on its own: which record it writes (a node's update or a full snapshot), and that a
 * node counts (its `done` callback: the engine's `node_end`) only once its record has committed, in step order.
 * The store is the memory store with commits held back until the test releases them.
 */

import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { Checkpointer } from '../../src/engine/checkpointer.ts'
import { createMemoryStore } from '../../src/store/memory-store.ts'
import type { Store } from '../../src/store/types.ts'

/**
 * Records reach the memory store as they are written (so its byte counts move as a real store's do), but each
 * write's promise settles only when the test commits or fails it.
 */
function heldStore() {
  const inner = createMemoryStore()
  const writes: Array<{ kind: 'step' | 'snapshot'; step: number; commit: () => void; fail: (e: Error) => void }> = []
  const held = (kind: 'step' | 'snapshot', step: number, write: Promise<void>) =>
    new Promise<void>((resolve, reject) => {
      writes.push({ kind, step, commit: () => void write.then(resolve, reject), fail: reject })
    })
  const store: Store = {
    ...inner,
    appendStep: (runId, entry) => held('step', entry.step, inner.appendStep(runId, entry)),
    snapshot: (runId, entry, keep) => held('snapshot', entry.step, inner.snapshot(runId, entry, keep)),
  }
  const commitAll = () => {
    for (const w of writes.splice(0)) w.commit()
  }
  return { store, inner, writes, commitAll }
}

const tick = () => new Promise((r) => setImmediate(r))
const cursor = { next: 'n' }

test('a node counts only once its record has committed, and nodes count in step order', async () => {
  const { store, writes } = heldStore()
  const cp = new Checkpointer(store, 'r', 3)
  const counted: number[] = []
  for (const step of [1, 2, 3]) await cp.step(step, `n${step}`, { [`k${step}`]: step }, {}, cursor, () => counted.push(step))
  const steps = writes.map((w) => w.step)
  assert.equal(steps, [1, 2, 3], 'all three records are written without waiting for a commit')
  writes[2]!.commit()
  writes[1]!.commit()
  await tick()
  assert.equal(counted, [], 'steps 2 and 3 committed, but step 1 has not')
  writes[0]!.commit()
  await cp.drain()
  assert.equal(counted, [1, 2, 3])
})

test('the first record is a snapshot, later ones updates, and a snapshot again once the updates outweigh it', async () => {
  const { store, inner, writes, commitAll } = heldStore()
  const cp = new Checkpointer(store, 'r', 3)
  const state: Record<string, unknown> = { small: 1 }
  for (let step = 1; step <= 6; step++) {
    const update = { [`big${step}`]: 'x'.repeat(40) }
    Object.assign(state, update)
    await cp.step(step, 'n', update, { ...state }, cursor, () => {})
  }
  const kinds = writes.map((w) => w.kind)
  commitAll()
  await cp.drain()
  assert.is(kinds[0], 'snapshot')
  assert.is(kinds[1], 'step', 'a node update after the first snapshot')
  assert.ok(kinds.slice(2).includes('snapshot'), `a later snapshot once updates outweigh the first (${kinds.join(', ')})`)
  const loaded = await inner.loadLatest('r')
  assert.equal(loaded?.state, state)
  assert.is(loaded?.step, 6)
})

test('settle: a slow node waits for its own record to commit before step returns', async () => {
  const { store, writes } = heldStore()
  const cp = new Checkpointer(store, 'r', 3)
  const counted: number[] = []
  let returned = false
  const p = cp.step(1, 'slow', { a: 1 }, { a: 1 }, cursor, () => counted.push(1), true).then(() => (returned = true))
  await tick()
  assert.is(returned, false)
  writes[0]!.commit()
  await p
  assert.equal(counted, [1], 'the callback ran before step returned')
})

test('a failed write is thrown by the next step and by drain; its node and later ones never count', async () => {
  const { store, writes } = heldStore()
  const cp = new Checkpointer(store, 'r', 3)
  const counted: number[] = []
  await cp.step(1, 'a', { a: 1 }, {}, cursor, () => counted.push(1))
  await cp.step(2, 'b', { b: 1 }, {}, cursor, () => counted.push(2))
  writes[0]!.commit()
  writes[1]!.fail(new Error('no space left'))
  await tick()
  let thrown = ''
  await cp.step(3, 'c', { c: 1 }, {}, cursor, () => counted.push(3)).catch((e: Error) => (thrown = e.message))
  assert.is(thrown, 'no space left')
  assert.is(writes.length, 2, 'nothing is written after the failure')
  const drained = await cp.drain().then(
    () => 'resolved',
    (e: Error) => e.message,
  )
  assert.is(drained, 'no space left')
  assert.equal(counted, [1])
})

test('backpressure: with 512 records uncommitted, the next step waits until the oldest has committed', async () => {
  const { store, writes } = heldStore()
  const cp = new Checkpointer(store, 'r', 3)
  for (let step = 1; step < 512; step++) await cp.step(step, 'n', { i: step }, {}, cursor, () => {})
  let returned = false
  const p = cp.step(512, 'n', { i: 512 }, {}, cursor, () => {}).then(() => (returned = true))
  await tick()
  assert.is(returned, false, 'the 512th record waits for the disk')
  writes[1]!.commit()
  await tick()
  assert.is(returned, false, 'a later record committing does not make room: the oldest still counts first')
  writes[0]!.commit()
  await p
  assert.is(returned, true)
  for (const w of writes.slice(2)) w.commit()
  await cp.drain()
})

test('snapshot waits for itself and every earlier record', async () => {
  const { store, writes } = heldStore()
  const cp = new Checkpointer(store, 'r', 3)
  const counted: number[] = []
  await cp.step(1, 'a', { a: 1 }, { a: 1 }, cursor, () => counted.push(1))
  let returned = false
  const p = cp.snapshot(1, 'a', { a: 1 }, { next: '__end__' }).then(() => (returned = true))
  writes[1]!.commit()
  await tick()
  assert.is(returned, false, 'the step before it has not committed')
  writes[0]!.commit()
  await p
  assert.equal(counted, [1])
})

test.run()
