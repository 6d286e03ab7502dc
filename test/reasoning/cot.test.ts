/**
 * reason.cot (../shared/specs/reasoning-test-design.md AC1): the prompt's thinking formats and few-shot examples,
 * and the action end to end through the engine and the real client against the fake model server.
 */

import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { rejection } from '../support/expect.ts'
import { cotPrompt, critiqueRequest } from '../../src/reasoning/prompts.ts'
import { benchSuite, oneNodeAgent } from './harness.ts'

test('001.4R-UNIT-004 step_by_step asks the model to think step by step', () => {
  assert.match(cotPrompt('step_by_step'), 'Think step by step')
})

test('001.4R-UNIT-005 pros_cons asks for pros and cons', () => {
  assert.match(cotPrompt('pros_cons'), 'List pros and cons')
})

test('001.4R-UNIT-006 tree asks for branches followed, pruned and combined', () => {
  const p = cotPrompt('tree')
  assert.match(p, 'Reason as a tree')
  assert.match(p, 'branches')
  assert.match(p, 'Prune')
})

test('first_principles asks to reason from basic facts', () => {
  assert.match(cotPrompt('first_principles'), 'Reason from first principles')
})

test('001.4R-UNIT-007 few-shot examples go into the prompt with problem, thinking and answer', () => {
  const p = cotPrompt('step_by_step', [
    { problem: 'What is 15% of 80?', thinking: '0.15 * 80 = 12', answer: '12' },
    { problem: 'Double 21?', thinking: '21 * 2', answer: 42 },
  ])
  for (const piece of [
    'Example 1',
    'Problem: What is 15% of 80?',
    'Thinking: 0.15 * 80 = 12',
    'Answer: 12',
    'Example 2',
    'Problem: Double 21?',
    'Answer: 42',
  ])
    assert.ok(p.includes(piece), piece)
})

test('001.4R-UNIT-013 a generated output is put before the critic with its task', () => {
  assert.is(critiqueRequest('Reverse a string', 'fn rev(s) {}'), 'Task: Reverse a string\n\nResult to review:\nfn rev(s) {}')
  assert.match(critiqueRequest('t', { code: 'x' }), '{"code":"x"}')
})

const t = benchSuite('reason.cot')

const agent = (withBlock: string) =>
  oneNodeAgent({ agent: 'thinker', node: 'solve', uses: 'reason.cot', workspace: true, output: 'solution' }, withBlock)

t('001.4R-INT-001 a JSON reply becomes {thinking, answer} in state, with the trace and TEA aliases', async ({ b }) => {
  b.server.script({ content: { thinking: 'Step 1: 6 * 7 = 42', answer: 42 } })
  const r = await b.go(agent('problem: "{{ state.q }}"'), { input: { q: 'What is 6 times 7?' } })
  assert.is(r.status, 'completed')
  const s = r.state.solution as Record<string, any>
  assert.is(s.thinking, 'Step 1: 6 * 7 = 42')
  assert.is(s.answer, 42)
  assert.is(s.reasoning_answer, 42)
  assert.is(s.reasoning_thinking, 'Step 1: 6 * 7 = 42')
  assert.is(s.thinking_format, 'step_by_step')
  assert.is(s.model, 'ollama:tiny')
  assert.is(s.reasoning_trace.action_type, 'reason.cot')
  const body = b.server.chatRequests()[0]!.body
  assert.equal(body.messages[1], { role: 'user', content: 'What is 6 times 7?' })
  assert.match(body.messages[0].content, 'Think step by step')
  // Structured output: the reply's schema goes out as Ollama's format.
  assert.equal(body.format.required, ['thinking', 'answer'])
})

t('001.4R-INT-002 three few-shot examples all reach the model', async ({ b }) => {
  b.server.script({ content: { thinking: 't', answer: 'a' } })
  const examples = [1, 2, 3].map((i) => `  - { problem: "p${i}", thinking: "t${i}", answer: "a${i}" }`).join('\n')
  await b.go(agent(`problem: q\nthinking_format: pros_cons\nfew_shot_examples:\n${examples}`))
  const system = b.server.chatRequests()[0]!.body.messages[0].content as string
  for (const i of [1, 2, 3]) for (const k of [`Problem: p${i}`, `Thinking: t${i}`, `Answer: a${i}`]) assert.ok(system.includes(k), k)
  assert.match(system, 'List pros and cons')
})

t('001.4R-UNIT-019 a server that ignores the format and answers with delimiters still gives the answer', async ({ b }) => {
  b.server.script({ content: 'Sure!\n<thinking>\n6 times 7\nis 42\n</thinking>\nAnswer: 42' })
  const r = await b.go(agent('problem: q'))
  const s = r.state.solution as Record<string, any>
  assert.is(s.thinking, '6 times 7\nis 42')
  assert.is(s.answer, 42)
})

t('answer_schema goes out inside the reply schema; structured: false sends no format', async ({ b }) => {
  b.server.script({ content: { thinking: 't', answer: { city: 'Lyon' } } }, { content: { thinking: 't', answer: 1 } })
  await b.go(agent('problem: q\nanswer_schema: { type: object, properties: { city: { type: string } } }'))
  assert.equal(b.server.chatRequests()[0]!.body.format.properties.answer, { type: 'object', properties: { city: { type: 'string' } } })
  await b.go(agent('problem: q\nstructured: false'), { runId: 'run-2' })
  assert.is(b.server.chatRequests()[1]!.body.format, undefined)
})

t('001.4R-UNIT-021 a reply with no answer at all fails the node with REASONING_PARSE_ERROR carrying the reply', async ({ b }) => {
  b.server.script({ content: 'random garbage' })
  const r = await b.go(agent('problem: q'))
  assert.is(r.status, 'failed')
  assert.is(r.error?.code, 'REASONING_PARSE_ERROR')
  assert.is(r.error?.details?.raw, 'random garbage')
})

t('an unknown thinking format is an error when the agent loads', async ({ b }) => {
  assert.match(String(await rejection(() => b.go(agent('problem: q\nthinking_format: sideways')))), /thinking_format/)
})

test.run()
t.run()
