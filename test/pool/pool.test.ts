import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { errorMessage, isTeaError } from '../../src/core/errors.ts'
import { isControlSignal } from '../../src/core/signals.ts'
import { createPool } from '../../src/pool/pool.ts'
import type { Pool } from '../../src/pool/pool.ts'
import type { CodeTask } from '../../src/code/task.ts'
import { useProbeWorker } from '../support/probe-pool.ts'

useProbeWorker() // probe tasks: test/support/probe-worker.ts

let pool: Pool
test.before(() => {
  pool = createPool({ maxThreads: 2 })
})
test.after(async () => {
  await pool.close()
})

const code = (body: string, args: CodeTask['args'], trackState = false): CodeTask => ({
  kind: 'code',
  selfTimed: true,
  code: body,
  args,
  trackState,
})

test('the pool starts no thread until the first task', async () => {
  const lazy = createPool({ maxThreads: 2 })
  assert.is(lazy.started, false)
  await lazy.close()
  assert.is(lazy.started, false)
})

test('runs a run: body in a worker with named arguments, await allowed', async () => {
  const r = await pool.run(
    code('await null; return { sum: state.a + subtask.n, deps: Object.keys(dependency_results) }', {
      state: { a: 1 },
      subtask: { n: 2 },
      dependency_results: { x: 1 },
    }),
  )
  assert.equal(r.value, { sum: 3, deps: ['x'] })
})

test('each task gets its own deep copy of the state: mutations stay in the worker and are reported as updates', async () => {
  const state = { counter: 1, nested: { list: [1] }, untouched: { a: 1 } }
  const body = 'state.counter++; state.nested.list.push(2); void state.untouched.a; delete state.gone; return state.counter'
  const [b, c] = await Promise.all([
    pool.run(code(body, { state: { ...state, gone: 1 } }, true)),
    pool.run(code(body, { state: { ...state, gone: 1 } }, true)),
  ])
  assert.is(b!.value, 2)
  assert.is(c!.value, 2)
  assert.equal(state, { counter: 1, nested: { list: [1] }, untouched: { a: 1 } })
  assert.equal(b!.stateUpdate, { counter: 2, nested: { list: [1, 2] } })
  assert.equal(b!.removed, ['gone'])
})

test('an error thrown by run: code comes back as CODE_ERROR placed where it ran', async () => {
  try {
    await pool.run({ ...code('throw new RangeError("bad input")', {}), where: { node: 'n', subtask: '3' } })
    assert.unreachable()
  } catch (e) {
    assert.ok(isTeaError(e, 'CODE_ERROR'))
    assert.equal(e.where, { node: 'n', subtask: '3' })
    assert.is(e.message, 'run: code threw: RangeError: bad input')
    assert.is(errorMessage(e), "node 'n', subtask 3: run: code threw: RangeError: bad input")
  }
})

test('code that does not compile is CODE_ERROR too', async () => {
  try {
    await pool.run(code('return {', {}))
    assert.unreachable()
  } catch (e) {
    assert.ok(isTeaError(e, 'CODE_ERROR'))
    assert.match((e as Error).message, /^run: code has a syntax error at line \d+: /)
  }
})

test('a timed-out busy loop is terminated and the pool keeps working', async () => {
  try {
    await pool.run(code('for (;;) {}', {}), { timeoutMs: 200 })
    assert.unreachable()
  } catch (e) {
    assert.ok(isTeaError(e, 'POOL_ERROR'))
    assert.equal((e as { details: unknown }).details, { reason: 'timeout', timeoutMs: 200 })
  }
  const after = await Promise.all([1, 2, 3].map((n) => pool.run(code('return state * 10', { state: n }))))
  assert.equal(
    after.map((r) => r.value),
    [10, 20, 30],
  )
})

test('results come back in the order the tasks were given, whatever finishes first', async () => {
  const delays = [60, 5, 30, 0]
  const results = await Promise.all(delays.map((ms, i) => pool.run({ kind: 'probe', probe: 'sleep', ms, value: i })))
  assert.equal(
    results.map((r) => r.value),
    [0, 1, 2, 3],
  )
})

test('the caller aborting a running task is a cancel signal, not a failure', async () => {
  const ac = new AbortController()
  const running = pool.run({ kind: 'probe', probe: 'spin' }, { signal: ac.signal })
  setTimeout(() => ac.abort(), 50)
  try {
    await running
    assert.unreachable()
  } catch (e) {
    assert.ok(isControlSignal(e, 'cancel'))
  }
  assert.is((await pool.run({ kind: 'probe', probe: 'echo', value: 'ok' })).value, 'ok')
})

test('closing the pool ends its threads; using it afterwards is POOL_ERROR', async () => {
  const p = createPool({ maxThreads: 1 })
  assert.is((await p.run({ kind: 'probe', probe: 'echo', value: 5 })).value, 5)
  assert.is(p.started, true)
  await p.close()
  try {
    await p.run({ kind: 'probe', probe: 'echo', value: 5 })
    assert.unreachable()
  } catch (e) {
    assert.ok(isTeaError(e, 'POOL_ERROR'))
  }
})

test.run()
