import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { isTeaError } from '../../src/core/errors.ts'
import { createMemoryStore } from '../../src/store/memory-store.ts'
import { pruneRuns } from '../../src/store/prune-runs.ts'
import type { RunStatus, Store } from '../../src/store/types.ts'
import { run } from './contract.ts'

const DAY = 86_400_000

/** Runs r1…r6, oldest first, updated `i` days ago counting down from 6. */
async function fixture(statuses: RunStatus[]): Promise<Store> {
  const store = createMemoryStore()
  for (const [i, status] of statuses.entries()) {
    const id = `r${i + 1}`
    await store.createRun(run(id, { status, updatedAt: 10 * DAY - (statuses.length - i) * DAY }))
    await store.snapshot(id, { step: 0, node: null, state: { id }, cursor: { next: 'a' } })
  }
  return store
}

const ids = async (store: Store): Promise<string[]> => (await store.listRuns()).map((r) => r.id)

test('with no options every run that is not running is deleted, with its checkpoints', async () => {
  const store = await fixture(['completed', 'running', 'failed', 'interrupted', 'cancelled'])
  assert.equal(await pruneRuns(store), ['r1', 'r3', 'r4', 'r5'])
  assert.equal(await ids(store), ['r2'])
  assert.is(await store.loadLatest('r1'), undefined)
  assert.equal((await store.loadLatest('r2'))?.state, { id: 'r2' })
})

test('keep N protects the N newest runs, running ones included in the count', async () => {
  const store = await fixture(['completed', 'completed', 'completed', 'running', 'completed'])
  assert.equal(await pruneRuns(store, { keep: 2 }), ['r1', 'r2', 'r3'])
  assert.equal(await ids(store), ['r4', 'r5'])
})

test('olderThanMs deletes only runs last updated before the cut-off', async () => {
  const store = await fixture(['completed', 'failed', 'completed', 'completed'])
  // updated 4, 3, 2 and 1 days before 10 days
  assert.equal(await pruneRuns(store, { olderThanMs: 2.5 * DAY, now: 10 * DAY }), ['r1', 'r2'])
  assert.equal(await ids(store), ['r3', 'r4'])
})

test('keep and olderThanMs together: a run must be outside the newest N and old enough', async () => {
  const store = await fixture(['completed', 'completed', 'completed', 'completed'])
  assert.equal(await pruneRuns(store, { keep: 3, olderThanMs: 0, now: 10 * DAY }), ['r1'])
  assert.equal(await pruneRuns(store, { keep: 1, olderThanMs: 1.5 * DAY, now: 10 * DAY }), ['r2', 'r3'])
  assert.equal(await ids(store), ['r4'])
})

test('an old running run is never pruned', async () => {
  const store = await fixture(['running', 'completed'])
  assert.equal(await pruneRuns(store, { olderThanMs: 0, now: 100 * DAY }), ['r2'])
  assert.equal(await ids(store), ['r1'])
})

test('a negative or fractional keep is a USAGE error', async () => {
  const store = await fixture(['completed'])
  for (const keep of [-1, 1.5]) {
    try {
      await pruneRuns(store, { keep })
      assert.unreachable('expected USAGE')
    } catch (e) {
      assert.ok(isTeaError(e, 'USAGE'), String(e))
    }
  }
  assert.equal(await ids(store), ['r1'])
})

test.run()
