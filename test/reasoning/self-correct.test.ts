/**
 * reason.self_correct (../shared/specs/reasoning-test-design.md AC3) through the engine and the real client
 * against the fake model server.
 */

import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { readCritique } from '../../src/reasoning/self-correct.ts'
import { benchSuite, oneNodeAgent } from './harness.ts'

const t = benchSuite('reason.self_correct')

const agent = (withBlock: string) =>
  oneNodeAgent({ agent: 'writer', node: 'write', uses: 'reason.self_correct', model: 'ollama:llama3.2', output: 'code_result' }, withBlock)

const draft = (output: string) => ({ content: { output } })
const review = (issue: string, score = 0.5) => ({ content: { issues: [issue], suggestions: [`fix: ${issue}`], score } })
type Result = {
  output: string
  improvement_history: Array<Record<string, any>>
  rounds_completed: number
  generator_model: string
  critic_model?: string
}

t('001.4R-UNIT-031 / 001.4R-INT-007 one round with one model: generate, critique, improve', async ({ b }) => {
  b.server.script(draft('v1'), review('too short'), draft('v2'))
  const r = await b.go(agent('task: Write a haiku\nimprovement_rounds: 1'))
  assert.is(r.status, 'completed')
  const s = r.state.code_result as Result
  assert.is(s.output, 'v2')
  assert.is(s.rounds_completed, 1)
  assert.equal(s.improvement_history, [
    { round: 1, output: 'v1', critique: { issues: ['too short'], suggestions: ['fix: too short'], score: 0.5 }, improved_output: 'v2' },
  ])
  assert.equal(
    b.server.chatRequests().map((q) => q.body.model),
    ['llama3.2', 'llama3.2', 'llama3.2'],
  )
  // The improver sees the task, its previous output and the critique.
  const improve = b.server.chatRequests()[2]!.body.messages[1].content as string
  for (const piece of ['Task: Write a haiku', 'v1', 'too short']) assert.ok(improve.includes(piece), piece)
})

t('001.4R-INT-008 generator and critic models are called for their own phases', async ({ b }) => {
  b.server.script(draft('v1'), review('bug'), draft('v2'))
  const r = await b.go(agent('task: t\nimprovement_rounds: 1\ngenerator_model: "ollama:codellama"\ncritic_model: "ollama:llama3.2"'))
  assert.equal(
    b.server.chatRequests().map((q) => q.body.model),
    ['codellama', 'llama3.2', 'codellama'],
  )
  const s = r.state.code_result as Result
  assert.is(s.generator_model, 'ollama:codellama')
  assert.is(s.critic_model, 'ollama:llama3.2')
})

t('001.4R-UNIT-014 / 001.4R-INT-009 three rounds: three entries in the history, each improving on the last', async ({ b }) => {
  b.server.script(draft('v1'), review('a'), draft('v2'), review('b'), draft('v3'), review('c'), draft('v4'))
  const r = await b.go(agent('task: t\nimprovement_rounds: 3'))
  const s = r.state.code_result as Result
  assert.is(s.improvement_history.length, 3)
  assert.equal(
    s.improvement_history.map((h) => [h.round, h.output, h.improved_output]),
    [
      [1, 'v1', 'v2'],
      [2, 'v2', 'v3'],
      [3, 'v3', 'v4'],
    ],
  )
  assert.is(s.output, 'v4')
  assert.is(b.server.chatRequests().length, 7)
})

t('001.4R-E2E-002 a code task over 2 rounds returns the improved code and the critique history', async ({ b }) => {
  const v1 = 'fn reverse(s: &str) -> String { s.to_string() }'
  const v2 = 'fn reverse(s: &str) -> String { s.chars().rev().collect() }'
  const v3 = 'pub fn reverse(s: &str) -> String { s.chars().rev().collect() }'
  b.server.script(draft(v1), review('does not reverse', 0.1), draft(v2), review('not public', 0.8), draft(v3))
  const r = await b.go(
    agent(
      'task: "{{ state.coding_task }}"\nimprovement_rounds: 2\ncritic_prompt: "Check {{ task }} for correctness; the code is: {{ output }}"',
    ),
    { input: { coding_task: 'Write Rust function to reverse string' } },
  )
  const s = r.state.code_result as Result
  assert.is(s.output, v3)
  assert.equal(
    s.improvement_history.map((h) => h.critique.issues[0]),
    ['does not reverse', 'not public'],
  )
  // critic_prompt is rendered with the output under review.
  const critic = b.server.chatRequests()[3]!.body.messages[0].content as string
  assert.ok(critic.includes(`Check Write Rust function to reverse string for correctness; the code is: ${v2}`), critic)
})

t('improvement_rounds 0 only generates; prose replies are kept as text', async ({ b }) => {
  b.server.script({ content: 'Here is my poem: roses.' })
  const r = await b.go(agent('task: t\nimprovement_rounds: 0'))
  const s = r.state.code_result as Result
  assert.is(s.output, 'Here is my poem: roses.')
  assert.equal(s.improvement_history, [])
})

test('a critic that writes prose gives one issue holding its text', () => {
  assert.equal(readCritique('It lacks error handling.'), {
    issues: ['It lacks error handling.'],
    suggestions: [],
    text: 'It lacks error handling.',
  })
  assert.equal(readCritique('```json\n{"issues": "one", "improvement_score": 0.3}\n```'), { issues: ['one'], suggestions: [], score: 0.3 })
})

t.run()
test.run()
