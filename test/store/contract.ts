/**
 * The store contract (STYLE 10): every Store implementation runs these same cases, so the memory store used by
 * tests and library callers behaves as the LMDB store the CLI uses.
 */

import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { isTeaError } from '../../src/core/errors.ts'
import { snapshotDue } from '../../src/store/records.ts'
import type { RunRecord, Store, StoreOptions } from '../../src/store/types.ts'
import { rejects } from '../support/expect.ts'

export interface StoreFactory {
  open(options?: StoreOptions): Store
  /** Removes whatever the stores opened since the last call left behind. */
  cleanup(): Promise<void>
}

export function run(id: string, extra: Partial<RunRecord> = {}): RunRecord {
  return {
    id,
    agent: 'demo',
    agentPath: '/agents/demo.yaml',
    agentHash: 'abc123',
    status: 'running',
    node: null,
    step: 0,
    createdAt: 1000,
    updatedAt: 1000,
    ...extra,
  }
}

export function storeContract(name: string, factory: StoreFactory): void {
  const t = suite<{ store: Store }>(`store contract: ${name}`)
  t.before.each((ctx) => {
    ctx.store = factory.open()
  })
  t.after.each(async (ctx) => {
    await ctx.store.close()
    await factory.cleanup()
  })

  t('createRun then getRun returns the same record; an unknown id is undefined', async ({ store }) => {
    await store.createRun(run('r1', { error: { code: 'X', message: 'm', node: 'n' } }))
    assert.equal(await store.getRun('r1'), run('r1', { error: { code: 'X', message: 'm', node: 'n' } }))
    assert.is(await store.getRun('nope'), undefined)
  })

  t('createRun refuses an existing id with RUN_EXISTS', async ({ store }) => {
    await store.createRun(run('r1'))
    await rejects(store.createRun(run('r1')), 'RUN_EXISTS')
  })

  t('updateRun merges a patch and keeps the id; an unknown run is RUN_NOT_FOUND', async ({ store }) => {
    await store.createRun(run('r1'))
    await store.updateRun('r1', { status: 'completed', node: 'end', step: 7, updatedAt: 2000 })
    assert.equal(await store.getRun('r1'), run('r1', { status: 'completed', node: 'end', step: 7, updatedAt: 2000 }))
    await rejects(store.updateRun('ghost', { step: 1 }), 'RUN_NOT_FOUND')
  })

  t('updateRun right after createRun, without awaiting it, still sees the run', async ({ store }) => {
    const created = store.createRun(run('r1'))
    const updated = store.updateRun('r1', { step: 3 })
    await Promise.all([created, updated])
    assert.is((await store.getRun('r1'))?.step, 3)
  })

  t('listRuns returns every run sorted by id', async ({ store }) => {
    for (const id of ['01c', '01a', '01b']) await store.createRun(run(id))
    assert.equal(
      (await store.listRuns()).map((r) => r.id),
      ['01a', '01b', '01c'],
    )
  })

  t('a record read back is a copy: mutating it changes nothing stored', async ({ store }) => {
    await store.createRun(run('r1'))
    const got = (await store.getRun('r1'))!
    got.step = 99
    assert.is((await store.getRun('r1'))?.step, 0)
    const update = { list: [1] }
    await store.snapshot('r1', { step: 0, node: null, state: { list: [0] }, cursor: { next: 'a' } })
    await store.appendStep('r1', { step: 1, node: 'a', update, cursor: { next: 'b' } })
    update.list.push(2)
    assert.equal((await store.loadLatest('r1'))?.state, { list: [1] })
  })

  t('loadLatest of a run without checkpoints is undefined', async ({ store }) => {
    assert.is(await store.loadLatest('none'), undefined)
  })

  t('loadLatest rebuilds the state from the snapshot plus the updates after it', async ({ store }) => {
    await store.snapshot('r1', { step: 0, node: null, state: { a: 1, b: 'x', nested: { k: [1, 2] } }, cursor: { next: 'n1' } })
    await store.appendStep('r1', { step: 1, node: 'n1', update: { a: 2 }, cursor: { next: 'n2' } })
    await store.appendStep('r1', { step: 2, node: 'n2', update: { c: null, nested: { k: [] } }, cursor: { next: 'n3' } })
    assert.equal(await store.loadLatest('r1'), {
      step: 2,
      node: 'n2',
      state: { a: 2, b: 'x', nested: { k: [] }, c: null },
      cursor: { next: 'n3' },
    })
  })

  t('a newer snapshot replaces the state: keys it lacks do not come back', async ({ store }) => {
    await store.snapshot('r1', { step: 0, node: null, state: { old: true }, cursor: { next: 'a' } })
    await store.appendStep('r1', { step: 1, node: 'a', update: { x: 1 }, cursor: { next: 'b' } })
    await store.snapshot('r1', { step: 1, node: 'a', state: { fresh: 'yes' }, cursor: { next: 'b', skipInterruptBefore: true } })
    assert.equal(await store.loadLatest('r1'), {
      step: 1,
      node: 'a',
      state: { fresh: 'yes' },
      cursor: { next: 'b', skipInterruptBefore: true },
    })
  })

  t('values of every JSON kind and unicode round-trip through a checkpoint', async ({ store }) => {
    const state = { s: 'héllo 🌍', n: -1.5, big: 2 ** 40, t: true, f: false, z: null, arr: [1, 'two', { three: 3 }], o: {} }
    await store.snapshot('r1', { step: 3, node: 'x', state, cursor: { next: '__end__' } })
    assert.equal((await store.loadLatest('r1'))?.state, state)
  })

  t('checkpointStats counts the updates since the newest snapshot and resets at a snapshot', async ({ store }) => {
    await store.snapshot('r1', { step: 0, node: null, state: { text: 'x'.repeat(200) }, cursor: { next: 'a' } })
    let stats = store.checkpointStats('r1')
    assert.is(stats.updates, 0)
    assert.ok(stats.snapshotBytes > 200, `snapshot bytes ${stats.snapshotBytes}`)
    assert.is(snapshotDue(stats), false)
    for (let i = 1; i <= 3; i++) await store.appendStep('r1', { step: i, node: 'a', update: { i }, cursor: { next: 'a' } })
    stats = store.checkpointStats('r1')
    assert.is(stats.updates, 3)
    assert.ok(stats.updateBytes > 0 && stats.updateBytes < stats.snapshotBytes)
    await store.snapshot('r1', { step: 3, node: 'a', state: { text: 'y', i: 3 }, cursor: { next: 'a' } })
    assert.equal(store.checkpointStats('r1').updates, 0)
    assert.is(snapshotDue(undefined), true)
  })

  t('retention keeps the newest `keep` snapshots: bytes stay flat however long the run', async ({ store }) => {
    const cycle = async (s: number): Promise<void> => {
      await store.snapshot('r1', { step: s, node: 'a', state: { s, pad: 'p'.repeat(50) }, cursor: { next: 'a' } }, 2)
      for (let i = 1; i <= 3; i++) {
        await store.appendStep('r1', { step: s + i, node: 'a', update: { s: s + i }, cursor: { next: 'a' } })
      }
    }
    for (let s = 0; s < 4 * 4; s += 4) await cycle(s)
    const early = await store.checkpointBytes('r1')
    for (let s = 16; s < 15 * 4; s += 4) await cycle(s)
    // Without retention the log would hold 15 cycles, nearly 4× the bytes held after 4; numbers growing a digit or
    // a byte account for the slack.
    const late = await store.checkpointBytes('r1')
    assert.ok(late >= early && late <= early * 1.05, `bytes after 4 cycles ${early}, after 15 cycles ${late}`)
    assert.equal((await store.loadLatest('r1'))?.state, { s: 59, pad: 'p'.repeat(50) })
  })

  t('runs whose ids share a prefix (r1, r10) keep separate checkpoints, plans and deletes', async ({ store }) => {
    for (const id of ['r1', 'r10']) {
      await store.createRun(run(id))
      await store.snapshot(id, { step: 0, node: null, state: { id }, cursor: { next: 'a' } })
      await store.appendStep(id, { step: 1, node: 'a', update: { by: id }, cursor: { next: 'b' } })
      await store.putPlanHeader(id, 'p', { id })
      await store.putSubtask(id, 'p', 's', { id })
    }
    assert.equal((await store.loadLatest('r1'))?.state, { id: 'r1', by: 'r1' })
    assert.is(store.checkpointStats('r1').updates, 1)
    await store.deleteRun('r1')
    assert.equal((await store.loadLatest('r10'))?.state, { id: 'r10', by: 'r10' })
    assert.equal((await store.getPlan('r10', 'p'))?.subtasks.get('s'), { id: 'r10' })
    assert.equal(
      (await store.listRuns()).map((r) => r.id),
      ['r10'],
    )
  })

  t('a keep below 1 is refused with STORE_ERROR', async ({ store }) => {
    await rejects(store.snapshot('r1', { step: 0, node: null, state: {}, cursor: { next: 'a' } }, 0), 'STORE_ERROR')
  })

  t('deleteRun removes the run, its checkpoints and its plans, and leaves other runs alone', async ({ store }) => {
    for (const id of ['r1', 'r2']) {
      await store.createRun(run(id))
      await store.snapshot(id, { step: 0, node: null, state: { id }, cursor: { next: 'a' } })
      await store.putPlanHeader(id, 'p', { goal: id })
      await store.putSubtask(id, 'p', 's1', { status: 'done' })
    }
    await store.deleteRun('r1')
    assert.is(await store.getRun('r1'), undefined)
    assert.is(await store.loadLatest('r1'), undefined)
    assert.is(await store.getPlan('r1', 'p'), undefined)
    assert.is(await store.checkpointBytes('r1'), 0)
    assert.equal((await store.loadLatest('r2'))?.state, { id: 'r2' })
    assert.equal((await store.getPlan('r2', 'p'))?.header, { goal: 'r2' })
  })

  t('plans: a header and its subtasks read back; a subtask write replaces only that subtask', async ({ store }) => {
    await store.putPlanHeader('r1', 'p', { id: 'p', runId: 'r1', goal: 'g', version: 1 })
    await store.putSubtask('r1', 'p', 'b', { status: 'pending' })
    await store.putSubtask('r1', 'p', 'a', { status: 'pending' })
    await store.putSubtask('r1', 'p2', 'z', { status: 'other plan' })
    await store.putSubtask('r1', 'p', 'b', { status: 'completed', result: { ok: true } })
    const plan = await store.getPlan('r1', 'p')
    assert.equal(plan?.header, { id: 'p', runId: 'r1', goal: 'g', version: 1 })
    assert.equal(
      [...plan!.subtasks],
      [
        ['a', { status: 'pending' }],
        ['b', { status: 'completed', result: { ok: true } }],
      ],
    )
    assert.is(await store.getPlan('r1', 'missing'), undefined)
    assert.equal([...(await store.getPlan('r1', 'p2'))!.subtasks.keys()], ['z'])
  })

  t('memory: put, get, overwrite, and namespaces are separate', async ({ store }) => {
    await store.memoryPut('default', 'k', { v: [1, 2] })
    await store.memoryPut('other', 'k', 'elsewhere')
    assert.equal(await store.memoryGet('default', 'k'), { found: true, value: { v: [1, 2] } })
    await store.memoryPut('default', 'k', 42)
    assert.equal(await store.memoryGet('default', 'k'), { found: true, value: 42 })
    assert.equal(await store.memoryGet('other', 'k'), { found: true, value: 'elsewhere' })
    assert.equal(await store.memoryGet('default', 'missing'), { found: false })
  })

  t('memory: a stored null is found, unlike a missing key', async ({ store }) => {
    await store.memoryPut('default', 'n', null)
    assert.equal(await store.memoryGet('default', 'n'), { found: true, value: null })
  })

  t('memory: delete reports whether the key existed', async ({ store }) => {
    await store.memoryPut('default', 'k', 1)
    assert.is(await store.memoryDelete('default', 'k'), true)
    assert.is(await store.memoryDelete('default', 'k'), false)
    assert.equal(await store.memoryGet('default', 'k'), { found: false })
  })

  t('memory: list returns the keys of one namespace with a prefix, sorted', async ({ store }) => {
    for (const k of ['user:2', 'user:1', 'task:1', 'user']) await store.memoryPut('ns', k, k)
    await store.memoryPut('ns2', 'user:3', 1)
    assert.equal(await store.memoryList('ns', 'user:'), ['user:1', 'user:2'])
    assert.equal(await store.memoryList('ns'), ['task:1', 'user', 'user:1', 'user:2'])
    assert.equal(await store.memoryList('empty'), [])
  })

  t('memory: an entry past its TTL reads as not found and is not listed', async () => {
    let clock = 10_000
    const store = factory.open({ now: () => clock })
    try {
      await store.memoryPut('default', 'short', 'a', 1000)
      await store.memoryPut('default', 'forever', 'b')
      assert.equal(await store.memoryGet('default', 'short'), { found: true, value: 'a' })
      clock += 1000
      assert.equal(await store.memoryGet('default', 'short'), { found: false })
      assert.equal(await store.memoryList('default'), ['forever'])
      assert.is(await store.memoryDelete('default', 'short'), false)
    } finally {
      await store.close()
    }
  })

  t('a value that cannot be stored (a symbol) is STORE_ERROR and stores nothing', async ({ store }) => {
    await rejects(store.memoryPut('default', 'k', { s: Symbol('x') }), 'STORE_ERROR')
    assert.equal(await store.memoryGet('default', 'k'), { found: false })
    await rejects(store.appendStep('r1', { step: 1, node: 'a', update: { s: Symbol('x') }, cursor: { next: 'b' } }), 'STORE_ERROR')
    assert.is(await store.loadLatest('r1'), undefined)
  })

  t('flush resolves once writes are done; a closed store refuses with STORE_ERROR', async ({ store }) => {
    const writes = [store.memoryPut('default', 'a', 1), store.createRun(run('r9'))]
    await store.flush()
    await Promise.all(writes)
    assert.equal(await store.memoryGet('default', 'a'), { found: true, value: 1 })
    await store.close()
    await rejects(store.getRun('r9'), 'STORE_ERROR')
  })

  t.run()
}
