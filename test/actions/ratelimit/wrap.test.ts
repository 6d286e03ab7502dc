import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { isTeaError, TeaError } from '../../../src/core/errors.ts'
import { rejection } from '../../support/expect.ts'
import { validateParams } from '../../../src/actions/registry.ts'
import { ratelimitWrap } from '../../../src/actions/ratelimit/wrap.ts'
import { intervalMs, limiter, limiterCount, reserve } from '../../../src/actions/ratelimit/limiters.ts'
import type { State } from '../../../src/core/util.ts'
import { testContext, type TestContext } from '../context.ts'

function context(invoke: (name: string, params: unknown) => Promise<State>, sections = {}): TestContext {
  return testContext({ invoke: (name, params) => invoke(name, params), listActions: () => [], settings: { sections } })
}

async function run(ctx: TestContext, params: unknown): Promise<Record<string, unknown>> {
  return (await ratelimitWrap.run(validateParams(ratelimitWrap, params), ctx)) as Record<string, unknown>
}

test("the interval is TEA's: rps wins over rpm, neither is one call a second", () => {
  assert.is(intervalMs(60, undefined), 1000)
  assert.is(intervalMs(120, 4), 250)
  assert.is(intervalMs(undefined, undefined), 1000)
})

test('slots follow one another by the interval; past the timeout none is taken', () => {
  const l = limiter('slots-test', 500, 0)
  assert.equal(reserve(l, 10_000), { waitMs: 0, reserved: true })
  assert.equal(reserve(l, 10_100), { waitMs: 400, reserved: true })
  assert.equal(reserve(l, 10_100, 0.5), { waitMs: 900, reserved: false })
  assert.equal(reserve(l, 10_100), { waitMs: 900, reserved: true })
  // The first configuration wins: naming it again with another interval keeps 500 ms.
  assert.is(limiter('slots-test', 1, 0).intervalMs, 500)
})

test("ratelimit.wrap runs the action with its args and returns TEA's shape; the next call waits its slot", async () => {
  const calls: Array<[string, unknown]> = []
  const ctx = context(async (name, params) => {
    calls.push([name, params])
    return { content: 'ok' }
  })
  try {
    const first = await run(ctx, { action: 'llm.call', args: { prompt: 'hi' }, limiter: 'wrap-test', rps: 20 })
    assert.equal(first, { success: true, result: { content: 'ok' }, _ratelimit_waited_ms: 0, _ratelimit_limiter: 'wrap-test' })
    const second = await run(ctx, { action: 'llm.call', args: { prompt: 'again' }, limiter: 'wrap-test', rps: 20 })
    assert.ok(
      (second._ratelimit_waited_ms as number) > 0 && (second._ratelimit_waited_ms as number) <= 50,
      String(second._ratelimit_waited_ms),
    )
    assert.equal(calls, [
      ['llm.call', { prompt: 'hi' }],
      ['llm.call', { prompt: 'again' }],
    ])
    // A wait longer than timeout: the action is not run.
    const refused = await run(ctx, { action: 'llm.call', args: {}, limiter: 'wrap-test', rps: 20, timeout: 0 })
    assert.is(refused.success, false)
    assert.is(refused.error_type, 'ratelimit_timeout')
    assert.match(String(refused.error), /^Rate limit wait would exceed timeout \(0s\)\. Wait required: 0\.0\d+s$/)
    assert.is(calls.length, 2)
  } finally {
    ctx.cleanup()
  }
})

test("settings.rate_limiters sets the rate of a new limiter over the node's rpm", async () => {
  const ctx = context(async () => ({}), { rate_limiters: { configured: { rps: 1000 } } })
  try {
    await run(ctx, { action: 'json.parse', args: {}, limiter: 'configured', rpm: 1 })
    assert.is(limiter('configured', 0, Date.now()).intervalMs, 1)
  } finally {
    ctx.cleanup()
  }
})

test('a failing or unknown action is success: false with its error_type, as in TEA', async () => {
  const ctx = context(async (name) => {
    if (name === 'nope.x') throw new TeaError('UNKNOWN_ACTION', "unknown action 'nope.x'")
    if (name === 'http.get') throw new TeaError('HTTP_ERROR', 'http.get: 500')
    return { success: false, error: 'inner' }
  })
  try {
    const unknown = await run(ctx, { action: 'nope.x', limiter: 'errors-test', rps: 1000 })
    assert.equal([unknown.success, unknown.error_type, unknown.error], [false, 'action_not_found', "Action 'nope.x' not found in registry"])
    const failed = await run(ctx, { action: 'http.get', limiter: 'errors-test', rps: 1000 })
    assert.equal([failed.success, failed.error_type, failed.error], [false, 'action_error', 'http.get: 500'])
    // The wrapped action's own success: false is the result's success.
    const inner = await run(ctx, { action: 'memory.get', limiter: 'errors-test', rps: 1000 })
    assert.equal([inner.success, inner.result], [false, { success: false, error: 'inner' }])
  } finally {
    ctx.cleanup()
  }
})

test('wrapping an action that runs code is refused when settings.allow_inline_code is false', async () => {
  const ran: string[] = []
  const ctx = testContext({
    invoke: async (name) => (ran.push(name), {}),
    listActions: () => [{ ...ratelimitWrap, name: 'python.run', runsCode: true }],
    settings: { allow_inline_code: false },
  })
  try {
    const e = await rejection(run(ctx, { action: 'python.run', args: { code: 'x = 1' }, limiter: 'code-test', rps: 1000 }))
    assert.ok(isTeaError(e, 'INLINE_CODE_FORBIDDEN'))
    assert.equal(ran, [])
  } finally {
    ctx.cleanup()
  }
})

test('limiter names from templates cannot grow without end: past 1,000, the idle ones are forgotten, a busy one kept', () => {
  const busy = limiter('busy-one', 60_000, 1_000)
  reserve(busy, 1_000)
  for (let i = 0; i < 5_000; i++) reserve(limiter(`name-${i}`, 1, 1_000 + i), 1_000 + i)
  assert.ok(limiterCount() <= 1_001, `${limiterCount()} limiters held`)
  assert.is(limiter('busy-one', 1, 6_000), busy, 'a limiter whose slot is still ahead keeps its state')
})

test.run()
