/**
 * The agent's limits on Lua code, through the pool as an agent meets them (issue 28 items 5 and 6):
 * `settings.run_memory_mb` stops the probe's allocation bomb as NODE_MEMORY_LIMIT (before: 0.55 GB in 5 s, then
 * NODE_TIMEOUT), with the next Lua node running; `settings.allow_inline_code: false` refuses lua.run however it is
 * reached.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { errorMessage, isTeaError } from '../../src/core/errors.ts'
import { luaRun } from '../../src/lua/actions.ts'
import { testContext } from '../actions/context.ts'
import { run } from '../engine/harness.ts'

test('item 6: the allocation bomb ends as NODE_MEMORY_LIMIT naming the node and the limit; the next Lua node runs', async () => {
  const r = await run(`name: bomb
settings: { run_memory_mb: 64 }
nodes:
  - name: grow
    language: lua
    timeout: 60
    run: "local t={} while true do t[#t+1]=string.rep('x', 1e7)..#t end"
    on_error: { mode: continue }
  - name: after
    language: lua
    run: "return { after = 6 * 7 }"
`)
  assert.is(r.status, 'completed', errorMessage(r.error))
  const err = r.state.__error__ as { code: string; message: string; hint?: string; where?: unknown }
  assert.is(err.code, 'NODE_MEMORY_LIMIT', JSON.stringify(err))
  assert.match(err.message, 'the Lua code went over its memory limit of 64 MiB and was stopped')
  assert.equal(err.where, { node: 'grow', action: 'lua.run', field: 'run' })
  assert.match(String(err.hint ?? ''), 'settings.run_memory_mb')
  assert.is(r.state.after, 42)
  const rss = process.memoryUsage().rss / 2 ** 20
  assert.ok(rss < 500, `process RSS ${rss.toFixed(0)} MiB`)
})

test('item 5: allow_inline_code: false refuses lua.run when it runs, whoever invoked it (the loader refuses run: nodes)', async () => {
  const ctx = testContext({ settings: { allow_inline_code: false } })
  try {
    const err = await (luaRun.run as (p: unknown, c: unknown) => Promise<unknown>)({ code: 'return { x = 1 }' }, ctx).then(
      () => undefined,
      (e: unknown) => e,
    )
    assert.ok(isTeaError(err, 'INLINE_CODE_FORBIDDEN'), String(err))
    assert.match((err as Error).message, 'lua.run runs Lua code, which settings.allow_inline_code: false forbids')
  } finally {
    ctx.cleanup()
  }
})

test.run()
