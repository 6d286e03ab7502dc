/**
 * `run:` code in a pool worker gets the environment of a `run:` node (src/code/compile.ts): a vm context, guarded
 * loops that stop at the time limit without costing the worker, `console` as `log` events through the task's host
 * port, and `ctx`.
 */

import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { errorMessage, isTeaError } from '../../src/core/errors.ts'
import type { LlmRequest } from '../../src/llm/types.ts'
import { createPool } from '../../src/pool/pool.ts'
import type { Pool } from '../../src/pool/pool.ts'
import type { CodeTask } from '../../src/code/task.ts'
import { useProbeWorker } from '../support/probe-pool.ts'

useProbeWorker() // probe tasks: test/support/probe-worker.ts

let pool: Pool
test.before(() => {
  // One thread, so "the same worker" is observable as the same thread id.
  pool = createPool({ maxThreads: 1 })
})
test.after(async () => {
  await pool.close()
})

const context = { runId: 'r1', node: 'work', state: {}, variables: { unit: 'g' }, settings: { llm: { model: 'ollama:tiny' } } }
const task = (code: string, extra: Partial<CodeTask> = {}): CodeTask => ({
  kind: 'code',
  selfTimed: true,
  code,
  args: { state: { a: 1 } },
  where: { subtask: 's1' },
  ...extra,
})
const thread = async () => (await pool.run({ kind: 'probe', probe: 'thread' })).value

test('a busy loop is stopped by its timeout inside the worker, which stays in service', async () => {
  const before = await thread()
  for (const body of ['for (;;) {}', 'while (true) { state.a++ }', 'let i = 0; do { i++ } while (i > 0)']) {
    try {
      await pool.run(task(body), { timeoutMs: 150 })
      assert.unreachable(body)
    } catch (e) {
      assert.ok(isTeaError(e, 'POOL_ERROR'), String(e))
      assert.equal((e as { details: unknown }).details, { reason: 'timeout', timeoutMs: 150 })
      assert.is(errorMessage(e), 'subtask s1: timed out after 150 ms; stopped inside its worker')
    }
  }
  assert.is(await thread(), before, 'the worker was not terminated')
  assert.is((await pool.run(task('return state.a + 1'))).value, 2)
})

test('an awaited promise that never settles is stopped at the limit too', async () => {
  const before = await thread()
  try {
    await pool.run(task('await new Promise(() => {}); return 1'), { timeoutMs: 100 })
    assert.unreachable()
  } catch (e) {
    assert.ok(isTeaError(e, 'POOL_ERROR'), String(e))
  }
  assert.is(await thread(), before)
})

test('console.* in the code becomes log events on the host port, never output of the worker', async () => {
  const events: unknown[] = []
  const writes: string[] = []
  const write = process.stdout.write
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => (
    writes.push(String(chunk)), (write as Function).call(process.stdout, chunk, ...rest)
  )) as typeof write
  try {
    const r = await pool.run(task('console.log("hello", state.a); console.error("oops"); return "done"', { context }), {
      host: { emit: (e: unknown) => void events.push(e) },
    })
    assert.is(r.value, 'done')
  } finally {
    process.stdout.write = write
  }
  assert.equal(events, [
    { type: 'log', node: 'work', message: 'subtask s1: hello 1' },
    { type: 'log', node: 'work', message: 'subtask s1: oops' },
  ])
  assert.equal(
    writes.filter((w) => w.includes('hello')),
    [],
  )
})

test('the runtime is out of reach: no process, require or fetch', async () => {
  const r = await pool.run(task('return [typeof process, typeof require, typeof fetch, typeof setTimeout]'))
  assert.equal(r.value, ['undefined', 'undefined', 'undefined', 'function'])
})

test('ctx is the worker action context: run facts, variables, and the model through the host', async () => {
  const requests: LlmRequest[] = []
  const host = {
    'llm.call': async (req: LlmRequest) => {
      requests.push(req)
      return {
        content: `echo ${req.messages.at(-1)!.content}`,
        model: req.model,
        usage: { prompt_tokens: 1, completion_tokens: 1 },
        attempts: 1,
      }
    },
  }
  const code =
    'const r = await ctx.invoke("llm.call", { prompt: "hi " + subtask.id }); return [ctx.runId, ctx.node, ctx.variables.unit, variables.unit, ctx.state === state, r.content]'
  const r = await pool.run(task(code, { context, args: { state: { a: 1 }, variables: context.variables, subtask: { id: 's1' } } }), {
    host,
  })
  assert.equal(r.value, ['r1', 'work', 'g', 'g', true, 'echo hi s1'])
  assert.is(requests[0]!.model, 'ollama:tiny')
})

test('a value of any kind is the result, and state changes are still reported', async () => {
  const r = await pool.run(task('state.b = 2; delete state.a; return 7', { trackState: true }))
  assert.equal([r.value, r.stateUpdate, r.removed], [7, { b: 2 }, ['a']])
  const p = await pool.run(task('return Promise.resolve([1, 2])'))
  assert.equal(p.value, [1, 2])
  const n = await pool.run(task('state.a = 3'))
  assert.is(n.value, undefined)
})

test.run()
