/**
 * reason.decompose (../shared/specs/reasoning-test-design.md AC4) through the engine and the real client against
 * the fake model server; solvers with code and actions on the real worker pool.
 */

import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { readSubProblems } from '../../src/reasoning/decompose.ts'
import { synthesisPrompt } from '../../src/reasoning/prompts.ts'
import type { ReceivedRequest } from '../support/fake-model-server.ts'
import { benchSuite, oneNodeAgent, type Bench } from './harness.ts'

const t = benchSuite('reason.decompose')

const agent = (withBlock: string) =>
  oneNodeAgent({ agent: 'solver', node: 'solve', uses: 'reason.decompose', output: 'solution' }, withBlock)

const DECOMPOSE = 'You break a hard problem'
const SOLVE = 'Solve this part only'
const SYNTH = 'It was split into parts'
const system = (r: ReceivedRequest) => (r.body.messages as Array<{ content: string }>).map((m) => m.content).join('\n')
const count = (b: Bench, marker: string) => b.server.chatRequests().filter((r) => system(r).includes(marker)).length

const subs = (...xs: Array<string | { description: string; complex: boolean }>) => ({
  match: DECOMPOSE,
  content: { sub_problems: xs.map((x) => (typeof x === 'string' ? { description: x, complex: false } : x)) },
})
const answer = (part: string, value: unknown, delayMs = 0) => ({
  match: `Solve this part only: ${part}`,
  content: { reasoning: 'r', answer: value },
  delayMs,
})

type Result = {
  final_answer: unknown
  sub_problems: unknown[]
  sub_answers: Array<{ problem: string; answer: unknown }>
  depth_used: number
}

t('001.4R-INT-010 / 001.4R-E2E-003 three sub-problems are solved and synthesized into the final answer', async ({ b }) => {
  b.server.script(subs('12 * 3', '45 / 5', '7 - 2'), answer('12 * 3', 36), answer('45 / 5', 9), answer('7 - 2', 5), {
    match: SYNTH,
    content: { reasoning: 'add them', final_answer: 50 },
  })
  const r = await b.go(agent('problem: "{{ state.problem }}"\nmax_depth: 1'), { input: { problem: 'What is 12*3 + 45/5 + (7-2)?' } })
  assert.is(r.status, 'completed')
  const s = r.state.solution as Result
  assert.is(s.final_answer, 50)
  assert.equal(s.sub_answers, [
    { id: 1, problem: '12 * 3', answer: 36 },
    { id: 2, problem: '45 / 5', answer: 9 },
    { id: 3, problem: '7 - 2', answer: 5 },
  ])
  assert.equal(s.sub_problems[0], { id: 1, description: '12 * 3', dependencies: [] })
  assert.is(s.depth_used, 1)
  // 001.4R-UNIT-017: the synthesis sees every sub-solution.
  const synth = b.server.chatRequests().find((q) => system(q).includes(SYNTH))!
  for (const piece of ['12 * 3', 'Answer: 36', '45 / 5', 'Answer: 9', '7 - 2', 'Answer: 5']) assert.ok(system(synth).includes(piece), piece)
})

t(
  '001.4R-INT-011 sub-problems are solved in parallel: on a server with slots to spare, all three are asked before the first is answered',
  async ({ b }) => {
    // Each reply takes 500 ms; when the server makes the first one, it notes how many sub-problems it has been
    // asked: all three side by side, one after another only the first (event order, not a bound on the wall time,
    // which flaked on a busy machine).
    const asked = (): number => b.server.chatRequests().filter((q) => JSON.stringify(q.body).includes('Solve this part only')).length
    const seen: number[] = []
    const noting = (part: string, value: number) => ({
      ...answer(part, value, 500),
      content: () => {
        seen.push(asked())
        return JSON.stringify({ reasoning: 'r', answer: value })
      },
    })
    b.server.script(subs('a', 'b', 'c'), noting('a', 1), noting('b', 2), noting('c', 3), {
      match: SYNTH,
      content: { final_answer: 6 },
    })
    // The call scheduler sends as many calls at once as the server has slots (Ollama's default is one).
    const r = await b.go(
      agent('problem: p\nmax_depth: 1').replace('model: "ollama:tiny" }', 'model: "ollama:tiny", scheduler: { slots: 3 } }'),
    )
    assert.is((r.state.solution as Result).final_answer, 6)
    assert.is(seen[0], 3, `the first answer was made when ${seen[0]} of 3 sub-problems had been asked: they ran one after another`)
  },
)

t('001.4R-UNIT-016 max_depth 2 with a model that always wants to go deeper stops at depth 2', async ({ b }) => {
  b.server.script(
    { ...subs({ description: 'deeper', complex: true }), repeat: true },
    { match: SOLVE, content: { answer: 'leaf' }, repeat: true },
    { match: SYNTH, content: { final_answer: 'partial' }, repeat: true },
  )
  const r = await b.go(agent('problem: p\nmax_depth: 2'))
  const s = r.state.solution as Result
  assert.is(count(b, DECOMPOSE), 2)
  assert.is(count(b, SOLVE), 1)
  assert.is(count(b, SYNTH), 2)
  assert.is(s.depth_used, 2)
  assert.is(s.final_answer, 'partial')
})

t('max_depth 3: a complex sub-problem is decomposed again, a simple one solved directly', async ({ b }) => {
  b.server.script(
    {
      match: `${DECOMPOSE}`,
      content: {
        sub_problems: [
          { description: 'hard part', complex: true },
          { description: 'easy part', complex: false },
        ],
      },
    },
    { match: 'hard part', content: { sub_problems: [{ description: 'hard.1' }, { description: 'hard.2' }] } },
    { match: SOLVE, content: { answer: 'x' }, repeat: true },
    { match: SYNTH, content: { final_answer: 'combined' }, repeat: true },
  )
  const r = await b.go(agent('problem: p\nmax_depth: 3'))
  const s = r.state.solution as Result & { tree: Array<Record<string, any>> }
  assert.is(count(b, DECOMPOSE), 2)
  assert.is(count(b, SOLVE), 3) // hard.1, hard.2, easy part
  assert.is(s.depth_used, 2)
  assert.equal(
    s.tree.map((p) => [p.problem, p.parts?.length ?? 0]),
    [
      ['hard part', 2],
      ['easy part', 0],
    ],
  )
})

t('001.4R-UNIT-032 max_depth 1 decomposes once and never recurses, even for parts marked complex', async ({ b }) => {
  b.server.script(
    subs({ description: 'x', complex: true }, { description: 'y', complex: true }),
    { match: SOLVE, content: { answer: 1 }, repeat: true },
    { match: SYNTH, content: { final_answer: 2 } },
  )
  await b.go(agent('problem: p\nmax_depth: 1'))
  assert.is(count(b, DECOMPOSE), 1)
  assert.is(count(b, SOLVE), 2)
  assert.match(system(b.server.chatRequests()[0]!), 'must be simple enough to solve in one go')
})

t('synthesis_prompt is rendered with the sub-answers', async ({ b }) => {
  b.server.script(subs('a'), answer('a', 'A!'), { match: SYNTH, content: { final_answer: 'done' } })
  await b.go(agent('problem: p\nmax_depth: 1\nsynthesis_prompt: "Join {{ sub_answers | tojson }} briefly."'))
  const synth = b.server.chatRequests().find((q) => system(q).includes(SYNTH))!
  assert.ok(system(synth).includes('Join [{"problem":"a","answer":"A!"}] briefly.'), system(synth))
})

t('a code solver runs each sub-problem on the worker pool', async ({ b }) => {
  b.server.script(subs('alpha', 'beta'), { match: SYNTH, content: { final_answer: 'ALPHA BETA' } })
  const r = await b.go(agent('problem: p\nmax_depth: 1\nsolver:\n  run: "return sub_problem.toUpperCase() + \' of \' + problem"'))
  assert.is(r.status, 'completed', JSON.stringify(r.error))
  const s = r.state.solution as Result
  assert.equal(
    s.sub_answers.map((a) => a.answer),
    ['ALPHA of p', 'BETA of p'],
  )
  assert.is(count(b, SOLVE), 0)
})

t('an action solver runs on the pool with its with: block rendered per sub-problem', async ({ b }) => {
  b.server.script(subs('one', 'two'), { match: SYNTH, content: { final_answer: 'ok' } })
  const r = await b.go(
    agent('problem: p\nmax_depth: 1\nsolver:\n  uses: json.transform\n  with:\n    data: { text: "{{ sub_problem }}" }\n    pick: [text]'),
  )
  assert.is(r.status, 'completed', JSON.stringify(r.error))
  assert.equal(
    (r.state.solution as Result).sub_answers.map((a) => a.answer),
    [{ result: { text: 'one' } }, { result: { text: 'two' } }],
  )
})

t('a solver with both run and uses is an error', async ({ b }) => {
  b.server.script(subs('a'))
  const r = await b.go(agent('problem: p\nsolver: { run: "return 1", uses: json.parse }'))
  assert.is(r.status, 'failed')
  assert.is(r.error?.code, 'INVALID_PARAMS')
})

test('001.4R-UNIT-015 a decomposition reply listing 3 sub-problems gives 3 descriptions', () => {
  assert.equal(readSubProblems('{"sub_problems": [{"description": "a"}, {"description": "b", "complex": true}, {"description": "c"}]}'), [
    { description: 'a', complex: false },
    { description: 'b', complex: true },
    { description: 'c', complex: false },
  ])
  assert.equal(
    readSubProblems('Here are the parts:\n1. Find x\n2. Find y\n3. Add them'),
    ['Find x', 'Find y', 'Add them'].map((description) => ({ description, complex: false })),
  )
})

test('001.4R-UNIT-017 the synthesis prompt carries every solved part', () => {
  const p = synthesisPrompt('whole', [
    { problem: 'p1', answer: 1 },
    { problem: 'p2', answer: { x: 2 } },
    { problem: 'p3', answer: 'three' },
  ])
  for (const piece of ['Problem: whole', '1. p1', 'Answer: 1', '2. p2', 'Answer: {"x":2}', '3. p3', 'Answer: three'])
    assert.ok(p.includes(piece), piece)
})

t.run()
test.run()
