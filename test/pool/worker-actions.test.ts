import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { errorMessage, isTeaError } from '../../src/core/errors.ts'
import { createPool } from '../../src/pool/pool.ts'
import type { Pool } from '../../src/pool/pool.ts'
import type { LlmRequest } from '../../src/llm/types.ts'

let pool: Pool
test.before(() => {
  pool = createPool({ maxThreads: 1 })
})
test.after(async () => {
  await pool.close()
})

const context = { runId: 'r1', node: 'n1', state: {}, variables: {}, settings: { llm: { model: 'ollama:tiny' } } }

test('a registered action runs in a worker; its model call is answered by the main thread', async () => {
  const requests: LlmRequest[] = []
  const events: unknown[] = []
  const host = {
    'llm.call': async (req: LlmRequest) => {
      requests.push(req)
      return {
        content: `echo: ${req.messages.at(-1)!.content}`,
        model: req.model,
        usage: { prompt_tokens: 1, completion_tokens: 2 },
        attempts: 1,
      }
    },
    emit: (e: unknown) => void events.push(e),
  }
  const r = await pool.run(
    { kind: 'action', action: 'llm.call', params: { prompt: 'hello', system: 'be brief' }, context, where: { node: 'n1', subtask: '1' } },
    { host },
  )
  assert.equal(r.value, { content: 'echo: hello', model: 'ollama:tiny', usage: { prompt_tokens: 1, completion_tokens: 2 }, attempts: 1 })
  assert.is(requests.length, 1)
  assert.equal(requests[0]!.messages, [
    { role: 'system', content: 'be brief' },
    { role: 'user', content: 'hello' },
  ])
  assert.is(requests[0]!.model, 'ollama:tiny')
})

test('a failure in the main-thread host call reaches the action as the original coded error', async () => {
  const host = {
    'llm.call': async () => {
      const { TeaError } = await import('../../src/core/errors.ts')
      throw new TeaError('LLM_TIMEOUT', 'model did not answer in 1 s')
    },
  }
  try {
    await pool.run({ kind: 'action', action: 'llm.call', params: { prompt: 'x' }, context }, { host })
    assert.unreachable()
  } catch (e) {
    assert.ok(isTeaError(e, 'LLM_TIMEOUT'))
    assert.match((e as Error).message, 'did not answer')
  }
})

test('invalid parameters are INVALID_PARAMS from the worker, listing the problem', async () => {
  try {
    await pool.run({ kind: 'action', action: 'llm.call', params: { prompt: 3 }, context, where: { node: 'n1', subtask: '2' } })
    assert.unreachable()
  } catch (e) {
    assert.ok(isTeaError(e, 'INVALID_PARAMS'))
    assert.equal(e.where, { node: 'n1', subtask: '2' })
    assert.equal(
      e.issues?.map((i) => i.path),
      [['prompt']],
    )
    assert.match(errorMessage(e), /^node 'n1', subtask 2: invalid parameters for llm\.call:\n {2}prompt: /)
  }
})

test('an unknown action is UNKNOWN_ACTION', async () => {
  try {
    await pool.run({ kind: 'action', action: 'llm.cal', params: {}, context })
    assert.unreachable()
  } catch (e) {
    assert.ok(isTeaError(e, 'UNKNOWN_ACTION'))
  }
})

test.run()
