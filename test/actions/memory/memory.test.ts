import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { toJsonSchema } from '@valibot/to-json-schema'
import { isTeaError } from '../../../src/core/errors.ts'
import { validateParams } from '../../../src/actions/registry.ts'
import type { Action } from '../../../src/actions/types.ts'
import { memoryActions } from '../../../src/actions/memory/index.ts'
import { createMemoryStore } from '../../../src/store/memory-store.ts'
import type { Store } from '../../../src/store/types.ts'
import { testContext, type TestContext } from '../context.ts'

const byName = (name: string): Action => memoryActions.find((a) => a.name === name)!

/** Runs an action as the engine would: parameters validated (defaults applied) first. */
async function run(ctx: TestContext, name: string, params: unknown): Promise<Record<string, unknown>> {
  const action = byName(name)
  return (await action.run(validateParams(action, params, { node: ctx.node }), ctx)) as Record<string, unknown>
}

function setup(now?: () => number): { ctx: TestContext; store: Store } {
  const store = createMemoryStore(now ? { now } : {})
  return { ctx: testContext({ store }), store }
}

test('memoryActions holds memory.store, memory.get, memory.retrieve, memory.delete, memory.list and memory.grep with JSON Schemas', () => {
  assert.equal(
    memoryActions.map((a) => a.name),
    ['memory.store', 'memory.get', 'memory.retrieve', 'memory.delete', 'memory.list', 'memory.grep'],
  )
  for (const a of memoryActions) {
    assert.ok(a.description.length > 10)
    assert.is((toJsonSchema(a.params, { errorMode: 'ignore' }) as { type?: string }).type, 'object')
  }
})

test('memory.store then memory.get returns the value, found', async () => {
  const { ctx, store } = setup()
  assert.equal(await run(ctx, 'memory.store', { key: 'city', value: { name: 'Oslo', pop: 700000 } }), { stored: true, key: 'city' })
  assert.equal(await run(ctx, 'memory.get', { key: 'city' }), { value: { name: 'Oslo', pop: 700000 }, found: true })
  // namespace defaults to 'default'
  assert.equal(await store.memoryGet('default', 'city'), { found: true, value: { name: 'Oslo', pop: 700000 } })
  ctx.cleanup()
})

test("memory.retrieve is TEA's memory.get: {value, found, key}", async () => {
  const { ctx } = setup()
  await run(ctx, 'memory.store', { key: 'k', value: 3 })
  assert.equal(await run(ctx, 'memory.retrieve', { key: 'k' }), { value: 3, found: true, key: 'k' })
  assert.equal(await run(ctx, 'memory.retrieve', { key: 'no', default: 0 }), { value: 0, found: false, key: 'no' })
  ctx.cleanup()
})

test('memory.get of a missing key returns found false and the default, or null', async () => {
  const { ctx } = setup()
  assert.equal(await run(ctx, 'memory.get', { key: 'nope' }), { value: null, found: false })
  assert.equal(await run(ctx, 'memory.get', { key: 'nope', default: [1] }), { value: [1], found: false })
  ctx.cleanup()
})

test('namespaces keep equal keys apart', async () => {
  const { ctx } = setup()
  await run(ctx, 'memory.store', { key: 'k', value: 'a', namespace: 'agent-a' })
  await run(ctx, 'memory.store', { key: 'k', value: 'b', namespace: 'agent-b' })
  assert.equal(await run(ctx, 'memory.get', { key: 'k', namespace: 'agent-a' }), { value: 'a', found: true })
  assert.equal(await run(ctx, 'memory.get', { key: 'k' }), { value: null, found: false })
  ctx.cleanup()
})

test('memory.store with ttl (seconds) expires the entry', async () => {
  let clock = 0
  const { ctx } = setup(() => clock)
  await run(ctx, 'memory.store', { key: 'otp', value: 1234, ttl: 30 })
  clock = 29_999
  assert.equal(await run(ctx, 'memory.get', { key: 'otp' }), { value: 1234, found: true })
  clock = 30_000
  assert.equal(await run(ctx, 'memory.get', { key: 'otp' }), { value: null, found: false })
  ctx.cleanup()
})

test('memory.delete reports whether something was deleted', async () => {
  const { ctx } = setup()
  await run(ctx, 'memory.store', { key: 'k', value: false })
  assert.equal(await run(ctx, 'memory.delete', { key: 'k' }), { deleted: true })
  assert.equal(await run(ctx, 'memory.delete', { key: 'k' }), { deleted: false })
  ctx.cleanup()
})

test('memory.list returns sorted keys, filtered by prefix', async () => {
  const { ctx } = setup()
  for (const key of ['note:b', 'note:a', 'todo:1']) await run(ctx, 'memory.store', { key, value: key })
  assert.equal(await run(ctx, 'memory.list', {}), { keys: ['note:a', 'note:b', 'todo:1'] })
  assert.equal(await run(ctx, 'memory.list', { prefix: 'note:' }), { keys: ['note:a', 'note:b'] })
  assert.equal(await run(ctx, 'memory.list', { namespace: 'empty' }), { keys: [] })
  ctx.cleanup()
})

test('bad parameters are INVALID_PARAMS naming each problem: empty key, missing value, ttl ≤ 0', async () => {
  const { ctx } = setup()
  for (const [params, mention] of [
    [{ key: '', value: 1 }, 'key'],
    [{ key: 'k' }, 'value'],
    [{ key: 'k', value: 1, ttl: 0 }, 'ttl'],
  ] as const) {
    try {
      await run(ctx, 'memory.store', params)
      assert.unreachable('expected INVALID_PARAMS')
    } catch (e) {
      assert.ok(isTeaError(e, 'INVALID_PARAMS'), String(e))
      assert.equal(
        e.issues?.map((i) => i.path?.[0]),
        [mention],
      )
    }
  }
  ctx.cleanup()
})

test.run()
