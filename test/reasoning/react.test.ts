/**
 * reason.react (../shared/specs/reasoning-test-design.md AC2, AC7, security): agents through the real loader and
 * engine, the real model client against the scripted fake model server, tools from the real registry.
 */

import { existsSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import * as assert from 'uvu/assert'
import { loadAgentText } from '../../src/agent/load.ts'
import { buildRegistry } from '../../src/features.ts'
import { createMemoryStore } from '../../src/store/memory-store.ts'
import { benchSuite, oneNodeAgent, toolCalls } from './harness.ts'

const t = benchSuite('reason.react')

const agent = (withBlock: string) =>
  oneNodeAgent({ agent: 'researcher', node: 'research', uses: 'reason.react', workspace: true, output: 'result' }, withBlock)

const step = (thought: string, action: string, action_input: unknown = {}) => ({ content: { thought, action, action_input } })
const finish = (answer: unknown) => step('I know the answer.', 'finish', { answer })

type Result = {
  final_answer: unknown
  steps: Array<Record<string, unknown>>
  total_steps: number
  stop_reason: string
  reasoning_trace: { action_type: string; entries: Array<Record<string, unknown>> }
}
const resultOf = (state: Record<string, unknown>) => state.result as Result

t('001.4R-INT-003 / 001.4R-INT-014 a tool the model asks for runs through the registry with the arguments it gave', async ({ b }) => {
  b.server.script(step('Add them.', 'calc.add', { a: 2, b: 40 }), finish(42))
  const r = await b.go(agent('goal: What is 2 + 40?\ntools: [calc.add]'))
  assert.is(r.status, 'completed')
  assert.equal(toolCalls, [{ tool: 'calc.add', params: { a: 2, b: 40 } }])
  const result = resultOf(r.state)
  assert.is(result.final_answer, 42)
  assert.equal(result.steps[0], {
    step: 1,
    thought: 'Add them.',
    action: 'calc.add',
    action_input: { a: 2, b: 40 },
    observation: '{"sum":42}',
  })
  // The observation went back to the model on the next turn.
  const second = b.server.chatRequests()[1]!.body.messages as Array<{ role: string; content: string }>
  assert.equal(second.at(-1), { role: 'user', content: 'Observation: {"sum":42}' })
  // The text protocol offers the tools in the prompt, not in the API's tools field; the action's own parameters
  // (goal, tools, max_steps) are not model settings.
  const body = b.server.chatRequests()[0]!.body
  assert.is(body.tools, undefined)
  assert.equal(Object.keys(body.options ?? {}), [])
  assert.match(body.messages[0].content, '- calc.add: Adds two numbers')
})

t('001.4R-UNIT-010 / 001.4R-INT-004 max_steps 3 and a model that never finishes: exactly 3 steps, then a graceful stop', async ({ b }) => {
  b.server.script({ ...step('Keep adding.', 'calc.add', { a: 1, b: 1 }), repeat: true })
  const r = await b.go(agent('goal: never done\ntools: [calc.add]\nmax_steps: 3'))
  assert.is(r.status, 'completed')
  const result = resultOf(r.state)
  assert.is(result.total_steps, 3)
  assert.is(result.steps.length, 3)
  assert.is(result.stop_reason, 'max_steps')
  assert.is(result.final_answer, null)
  assert.is(b.server.chatRequests().length, 3)
  assert.is(toolCalls.length, 3)
})

t('001.4R-UNIT-029 max_steps 1 runs exactly one step whatever the model says', async ({ b }) => {
  b.server.script({ ...step('Add.', 'calc.add', { a: 1, b: 2 }), repeat: true })
  const r = await b.go(agent('goal: g\ntools: [calc.add]\nmax_steps: 1'))
  assert.is(resultOf(r.state).total_steps, 1)
  assert.is(b.server.chatRequests().length, 1)
})

t('001.4R-UNIT-030 max_steps 0 returns an empty trace without calling the model', async ({ b }) => {
  const r = await b.go(agent('goal: g\ntools: [calc.add]\nmax_steps: 0'))
  const result = resultOf(r.state)
  assert.is(result.total_steps, 0)
  assert.equal(result.steps, [])
  assert.equal(result.reasoning_trace.entries, [])
  assert.is(b.server.chatRequests().length, 0)
})

t('001.4R-INT-005 finish on step 2 of max 5 ends the loop there and returns the answer', async ({ b }) => {
  b.server.script(step('Add.', 'calc.add', { a: 1, b: 2 }), finish('three'))
  const r = await b.go(agent('goal: g\ntools: [calc.add]\nmax_steps: 5'))
  const result = resultOf(r.state)
  assert.is(result.total_steps, 2)
  assert.is(result.stop_reason, 'finish')
  assert.is(result.final_answer, 'three')
  assert.is(b.server.chatRequests().length, 2)
})

t("001.4R-UNIT-009 TEA's final_answer action ends the loop like finish", async ({ b }) => {
  b.server.script(step('Done.', 'final_answer', { answer: 'Paris' }))
  const r = await b.go(agent('goal: capital of France\nmax_steps: 4'))
  assert.is(resultOf(r.state).final_answer, 'Paris')
})

t('001.4R-UNIT-011 / 001.4R-INT-006 / 001.4R-E2E-005 several tools in sequence: each runs, every step is kept whole', async ({ b }) => {
  b.server.script(
    step('Remember the city.', 'memory.store', { key: 'city', value: 'Lyon' }),
    step('Reshape the record.', 'json.transform', { data: { city: 'Lyon', pop: 522000 }, pick: ['city'] }),
    step('Add.', 'calc.add', { a: 1, b: 1 }),
    finish('Lyon'),
  )
  const store = createMemoryStore()
  const r = await b.go(agent('goal: g\ntools: [memory.store, json.transform, calc.add]'), { store })
  const result = resultOf(r.state)
  assert.is(result.total_steps, 4)
  assert.equal(
    result.steps.map((s) => s.action),
    ['memory.store', 'json.transform', 'calc.add', 'finish'],
  )
  assert.is(result.steps[1]!.observation, '{"result":{"city":"Lyon"}}')
  assert.equal(await store.memoryGet('default', 'city'), { found: true, value: 'Lyon' })
  for (const s of result.steps.slice(0, 3))
    for (const k of ['step', 'thought', 'action', 'action_input', 'observation']) assert.ok(k in s, k)
  assert.is(result.reasoning_trace.entries.length, 4)
})

t('001.4R-INT-015 an unknown tool is an error observation, not a crash', async ({ b }) => {
  b.server.script(step('Use foo.', 'foo.bar', { x: 1 }), finish('gave up'))
  const r = await b.go(agent('goal: g\ntools: [calc.add]'))
  const result = resultOf(r.state)
  assert.match(String(result.steps[0]!.observation), /^Error: there is no tool 'foo\.bar'; nothing was run\. The tools are: calc\.add/)
  assert.is(result.final_answer, 'gave up')
})

t('001.4R-SEC-001 a tool name with path traversal is refused and nothing is touched', async ({ b }) => {
  b.server.script(step('Read it.', '../../../etc/passwd', { path: 'x' }), finish('no'))
  const r = await b.go(agent('goal: g\ntools: [file.read]'))
  assert.match(
    String(resultOf(r.state).steps[0]!.observation),
    /^Error: "\.\.\/\.\.\/\.\.\/etc\/passwd" is not a tool name; nothing was run/,
  )
  assert.is(toolCalls.length, 0)
})

t('001.4R-SEC-003 a registered action that is not on the tools list is refused and never runs', async ({ b }) => {
  b.server.script(step('Write a file.', 'file.write', { path: 'pwned.txt', content: 'x' }), finish('no'))
  const r = await b.go(agent('goal: g\ntools: [calc.add]'))
  assert.match(String(resultOf(r.state).steps[0]!.observation), /there is no tool 'file\.write'/)
  assert.not.ok(existsSync(path.join(b.workspace, 'pwned.txt')), 'file.write ran')
})

t('a tool that throws is an observation naming the failure; the loop goes on', async ({ b }) => {
  b.server.script(step('Try it.', 'tool.fails', {}), finish('fallback'))
  const r = await b.go(agent('goal: g\ntools: [tool.fails]'))
  const result = resultOf(r.state)
  assert.match(String(result.steps[0]!.observation), /^Error: tool\.fails failed: the upstream service is down/)
  assert.is(result.final_answer, 'fallback')
})

t('a tool that runs over tool_timeout is stopped and becomes an observation', async ({ b }) => {
  b.server.script(step('Wait.', 'tool.hangs', {}), finish('late'))
  const started = Date.now()
  const r = await b.go(agent('goal: g\ntools: [tool.hangs]\ntool_timeout: 0.2'))
  assert.ok(Date.now() - started < 5000)
  assert.match(String(resultOf(r.state).steps[0]!.observation), /tool\.hangs failed: .*0\.2 s/)
  assert.is(resultOf(r.state).final_answer, 'late')
})

t('001.4R-UNIT-012 a malformed step gets a corrective turn, and it counts as a step', async ({ b }) => {
  b.server.script({ content: 'I think I should add things.' }, finish(7))
  const r = await b.go(agent('goal: g\ntools: [calc.add]\nmax_steps: 2'))
  const result = resultOf(r.state)
  assert.is(result.total_steps, 2)
  assert.match(String(result.steps[0]!.observation), /^Error: your reply is not a step/)
  const second = b.server.chatRequests()[1]!.body.messages as Array<{ role: string; content: string }>
  assert.equal(second.at(-2), { role: 'assistant', content: 'I think I should add things.' })
  assert.match(second.at(-1)!.content, /Reply with one JSON object/)
  assert.is(result.final_answer, 7)
})

t('bad replies: empty, truncated, JSON of the wrong shape: corrective turns, never a crash', async ({ b }) => {
  b.server.script({ content: '' }, { content: '{"thought": "cut off", "act' }, { content: '[1, 2, 3]' }, { content: '"just a string"' })
  const r = await b.go(agent('goal: g\ntools: [calc.add]\nmax_steps: 4'))
  const result = resultOf(r.state)
  assert.is(result.total_steps, 4)
  for (const s of result.steps) assert.match(String(s.observation), /^Error: your reply is not a step/)
  assert.is(result.stop_reason, 'max_steps')
})

t('a 10 MB reply is refused by the model client (max_reply_bytes) with a clear error', async ({ b }) => {
  b.server.script({ content: 'x'.repeat(10 * 1024 * 1024) })
  const r = await b.go(agent('goal: g\ntools: [calc.add]'))
  assert.is(r.status, 'failed')
  assert.is(r.error?.code, 'LLM_REPLY_TOO_LARGE')
})

t('a bare value as action_input goes to a tool with one required parameter', async ({ b }) => {
  writeFileSync(path.join(b.workspace, 'hello.txt'), 'hello from the workspace')
  b.server.script(step('Read it.', 'file.read', 'hello.txt'), finish('ok'))
  const r = await b.go(agent('goal: g\ntools: [file.read]'))
  assert.match(String(resultOf(r.state).steps[0]!.observation), /hello from the workspace/)
})

t('earlier thoughts, actions and observations go back to the model every turn', async ({ b }) => {
  b.server.script(step('First.', 'calc.add', { a: 1, b: 1 }), step('Second.', 'calc.add', { a: 2, b: 2 }), finish(4))
  await b.go(agent('goal: count\ntools: [calc.add]'))
  const third = b.server.chatRequests()[2]!.body.messages as Array<{ role: string; content: string }>
  const text = third.map((m) => m.content).join('\n')
  for (const piece of ['Goal: count', 'First.', 'Observation: {"sum":2}', 'Second.', 'Observation: {"sum":4}'])
    assert.ok(text.includes(piece), piece)
})

t('max_steps -1, "three", and an unknown tool name are errors when the agent loads', async () => {
  const registry = buildRegistry()
  const problems = (withBlock: string) =>
    loadAgentText(
      `name: a\nnodes:\n  - name: r\n    uses: reason.react\n    with:\n      goal: g\n${withBlock}\n`,
      '/tmp/a.yaml',
      registry,
    ).problems.map((p) => `${p.code} ${p.message}`)
  assert.match(problems('      max_steps: -1').join('\n'), /INVALID_PARAMS.*whole number/)
  assert.match(problems('      max_steps: three').join('\n'), /INVALID_PARAMS/)
  assert.match(problems('      tools: [calc.nope]').join('\n'), /UNKNOWN_ACTION.*calc\.nope/)
  assert.equal(problems('      tools: [json.parse]\n      max_steps: 2'), [])
})

t("native_tools: the tools go out in the chat API's tools field and the tool call is run", async ({ b }) => {
  b.server.script(
    { content: '', toolCalls: [{ name: 'calc__add', arguments: { a: 5, b: 6 } }] },
    {
      content: '',
      toolCalls: [{ name: 'finish', arguments: { answer: 11 } }],
    },
  )
  const r = await b.go(agent('goal: g\ntools: [calc.add]\nnative_tools: true'))
  const result = resultOf(r.state)
  assert.is(result.final_answer, 11)
  assert.equal(toolCalls, [{ tool: 'calc.add', params: { a: 5, b: 6 } }])
  const tools = b.server.chatRequests()[0]!.body.tools as Array<{ function: { name: string } }>
  assert.equal(
    tools.map((x) => x.function.name),
    ['calc__add', 'finish'],
  )
})

t('native_tools: a reply without a tool call falls back to the text protocol, then to being the answer', async ({ b }) => {
  b.server.script(step('Add.', 'calc.add', { a: 1, b: 2 }), { content: 'The answer is 3.' })
  const r = await b.go(agent('goal: g\ntools: [calc.add]\nnative_tools: true'))
  const result = resultOf(r.state)
  assert.is(toolCalls.length, 1)
  assert.is(result.final_answer, 'The answer is 3.')
})

t('a run whose model server is gone fails with the model error, not a parse error', async ({ b }) => {
  await b.server.close()
  const r = await b.go(agent('goal: g\ntools: [calc.add]'))
  assert.is(r.status, 'failed')
  assert.is(r.error?.code, 'LLM_UNREACHABLE')
})

t.run()
