import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { isTeaError } from '../../../src/core/errors.ts'
import { builtinActions } from '../../../src/actions/builtins.ts'
import { validateParams } from '../../../src/actions/registry.ts'
import { llmTools } from '../../../src/actions/llm/tools.ts'
import type { Action } from '../../../src/actions/types.ts'
import { createLlmClient } from '../../../src/llm/client.ts'
import type { State } from '../../../src/core/util.ts'
import { startFakeModelServer, type FakeModelServer } from '../../support/fake-model-server.ts'
import { testContext, type TestContext } from '../context.ts'
import { rejection } from '../../support/expect.ts'

const t = suite<{ server: FakeModelServer; ctx: TestContext; invoked: string[] }>('llm.tools')

t.before.each(async (c) => {
  c.server = await startFakeModelServer()
  c.invoked = []
  const actions = new Map<string, Action>(builtinActions().map((a) => [a.name, a]))
  // The registry's own actions, run as ctx.invoke runs them: parameters validated first.
  const ctx: TestContext = testContext({
    node: 'ask',
    llm: createLlmClient({ env: { OLLAMA_HOST: c.server.url }, backoffBaseMs: 1 }),
    settings: { llm: { model: 'ollama:tiny' } },
    listActions: () => [...actions.values()],
    invoke: async (name: string, params: unknown): Promise<State> => {
      c.invoked.push(name)
      const action = actions.get(name)
      if (!action) throw new Error(`no ${name}`)
      return (await action.run(validateParams(action, params), ctx)) as State
    },
  })
  c.ctx = ctx
})
t.after.each(async (c) => {
  c.ctx.cleanup()
  await c.server.close()
})

const run = (params: unknown, ctx: TestContext) => llmTools.run(validateParams(llmTools, params), ctx) as Promise<Record<string, unknown>>

const TOOLS = [
  {
    name: 'parse_json',
    description: 'Parse JSON text',
    parameters: { text: { type: 'string', description: 'The text', required: true }, strict: 'boolean' },
    action: 'json.parse',
  },
  { name: 'unmapped', description: 'A tool without an action' },
]

t(
  "a tool call runs its action on the model's arguments and the result goes back until the model answers",
  async ({ server, ctx, invoked }) => {
    server.script(
      {
        content: '',
        toolCalls: [
          { name: 'parse_json', arguments: { text: '{"pump": 3}' } },
          { name: 'unmapped', arguments: { x: 1 } },
        ],
      },
      { content: 'Pump 3.' },
    )
    const r = await run({ prompt: 'Which pump?', system: 'Use tools.', tools: TOOLS }, ctx)
    assert.equal(r, {
      content: 'Pump 3.',
      tool_calls: [
        { id: 'call_1_1', name: 'parse_json', arguments: { text: '{"pump": 3}' } },
        { id: 'call_1_2', name: 'unmapped', arguments: { x: 1 } },
      ],
      tool_results: [
        { tool_call_id: 'call_1_1', name: 'parse_json', result: '{"data":{"pump":3}}' },
        {
          tool_call_id: 'call_1_2',
          name: 'unmapped',
          result: '{"note":"Tool \'unmapped\' called but no action mapped","arguments":{"x":1}}',
        },
      ],
      rounds: 1,
    })
    assert.equal(invoked, ['tools.list', 'json.parse'])
    const [first, second] = server.chatRequests().map((q) => q.body)
    // The tools go out in the servers' function shape, TEA's parameters turned into a JSON Schema.
    assert.equal((first!.tools as unknown[])[0], {
      type: 'function',
      function: {
        name: 'parse_json',
        description: 'Parse JSON text',
        parameters: {
          type: 'object',
          properties: { text: { type: 'string', description: 'The text' }, strict: { type: 'boolean' } },
          required: ['text'],
        },
      },
    })
    const messages = second!.messages as Array<{ role: string; content: string }>
    assert.equal(messages.slice(0, 2), [
      { role: 'system', content: 'Use tools.' },
      { role: 'user', content: 'Which pump?' },
    ])
    assert.is(messages[2]!.role, 'assistant')
    assert.equal(messages[3], { role: 'user', content: 'Result of tool parse_json (call call_1_1): {"data":{"pump":3}}' })
    assert.match(messages[4]!.content, /^Result of tool unmapped \(call call_1_2\): \{"note"/)
  },
)

t("a failing action is an error result the model reads; max_tool_rounds ends the loop with TEA's warning", async ({ server, ctx }) => {
  server.script({ content: '', toolCalls: [{ name: 'parse_json', arguments: { text: 'no json here' } }], repeat: true })
  const r = await run({ prompt: 'go', tools: TOOLS, max_tool_rounds: 2 }, ctx)
  assert.is(r.content, '')
  assert.is(r.rounds, 2)
  assert.is(r.warning, 'Max tool rounds (2) reached')
  const results = r.tool_results as Array<{ result: string }>
  assert.is(results.length, 2)
  assert.match(JSON.parse(results[0]!.result).error, 'json.parse: expected JSON in the text')
  assert.is(server.chatRequests().length, 2)
})

t('tool_choice none offers no tools; a named tool is the only one offered', async ({ server, ctx }) => {
  server.script({ content: 'plain' }, { content: 'chosen' })
  assert.is((await run({ prompt: 'a', tools: TOOLS, tool_choice: 'none' }, ctx)).content, 'plain')
  assert.is((await run({ prompt: 'b', tools: TOOLS, tool_choice: 'unmapped' }, ctx)).content, 'chosen')
  const [none, named] = server.chatRequests().map((q) => q.body)
  assert.is(none!.tools, undefined)
  assert.equal(
    (named!.tools as Array<{ function: { name: string } }>).map((x) => x.function.name),
    ['unmapped'],
  )
})

t('a tool naming an action the build lacks, or code when inline code is off, fails before the model is asked', async ({ server, ctx }) => {
  const unknown = await rejection(run({ prompt: 'a', tools: [{ name: 'x', action: 'nope.never' }] }, ctx))
  assert.ok(isTeaError(unknown, 'INVALID_PARAMS'))
  assert.match(unknown.message, "tool 'x' names action 'nope.never'")
  const fake: Action = { ...llmTools, name: 'fake.code', runsCode: true }
  const locked = testContext({
    ...ctx,
    settings: { ...ctx.settings, allow_inline_code: false },
    listActions: () => [fake],
    invoke: async () => ({}),
  })
  const e = await rejection(run({ prompt: 'a', tools: [{ name: 'code', action: 'fake.code' }] }, locked))
  assert.ok(isTeaError(e, 'INLINE_CODE_FORBIDDEN'))
  assert.is(server.chatRequests().length, 0)
})

t('tool definitions are checked when parameters are: bad names and duplicates are refused', () => {
  assert.throws(
    () => validateParams(llmTools, { prompt: 'a', tools: [{ name: 'has space' }] }),
    (e: unknown) => isTeaError(e, 'INVALID_PARAMS'),
  )
  assert.throws(
    () => validateParams(llmTools, { prompt: 'a', tools: [{ name: 'a' }, { type: 'function', function: { name: 'a' } }] }),
    (e: unknown) => isTeaError(e, 'INVALID_PARAMS'),
  )
})

t('a reply calling more than 32 tools is refused before any of them runs', async ({ server, ctx, invoked }) => {
  const many = Array.from({ length: 33 }, () => ({ name: 'parse_json', arguments: { text: '1' } }))
  server.script({ content: '', toolCalls: many })
  const e = await rejection(run({ prompt: 'go', tools: TOOLS }, ctx))
  assert.ok(isTeaError(e, 'LLM_BAD_RESPONSE'))
  assert.match(e.message, 'the model called 33 tools in one reply; at most 32 are run')
  assert.equal(invoked, ['tools.list'])
})

t.run()
