/**
 * reflection.loop (TEA's action, docs/shared/yaml-reference/actions/reflection.md in TEA's repository): the three
 * evaluator kinds, the corrector's two meanings, the failure strategies, and the keys TEA's agents read.
 */

import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { errorMessage } from '../../src/core/errors.ts'
import { rejection } from '../support/expect.ts'
import { coerce, schemaVerdict } from '../../src/reasoning/schema-evaluator.ts'
import { benchSuite, oneNodeAgent } from './harness.ts'

const t = benchSuite('reflection.loop')

const agent = (withBlock: string) => oneNodeAgent({ agent: 'reflect', node: 'generate', uses: 'reflection.loop' }, withBlock)

/** Values made by run: code live in the code's own realm; compare them as JSON. */
const plain = (v: unknown) => JSON.parse(JSON.stringify(v))

const PROFILE_SCHEMA = `evaluator:
  type: schema
  schema:
    type: object
    required: [name, email, age]
    properties:
      name: { type: string, minLength: 1 }
      email: { type: string, pattern: "^[^@]+@[^@]+$" }
      age: { type: integer, minimum: 0 }`

t("TEA's example: a code generator fixed by a code corrector passes on the second attempt", async ({ b }) => {
  const r = await b.go(
    agent(`generator:
  run: |
    const topic = state.topic
    if (state.reflection_iteration === 1) return { title: 'About ' + topic, body: 'x' }
    return { title: 'About ' + topic, summary: state.correction_feedback, body: 'x' }
evaluator:
  type: schema
  schema: { type: object, required: [title, summary, body], properties: { summary: { type: string, minLength: 10 } } }
corrector:
  run: |
    return { correction_feedback: 'Fix: ' + state.reflection_errors.map((e) => e.message).join('; ') }
max_iterations: 3`),
    { input: { topic: 'tides' } },
  )
  assert.is(r.status, 'completed', JSON.stringify(r.error))
  const s = r.state
  assert.is(s.valid, true)
  assert.is(s.success, true)
  assert.is(s.reflection_iteration, 2)
  assert.is(s.title, 'About tides')
  assert.match(String(s.summary), /^Fix: .*summary/)
  const history = s.reflection_history as Array<Record<string, any>>
  assert.equal(
    history.map((h) => [h.iteration, h.valid, h.score]),
    [
      [1, false, 0],
      [2, true, 1],
    ],
  )
  assert.equal(history[0]!.errors[0].keyword, 'required')
})

t('an llm.call generator with a schema evaluator: the JSON in the reply is the output; coercion accepts "42"', async ({ b }) => {
  b.server.script({ content: 'Here you go:\n```json\n{"name": "Ada", "email": "ada@example.org", "age": "36"}\n```' })
  const r = await b.go(agent(`generator:\n  action: llm.call\n  prompt: "Make a profile for {{ state.request }}"\n${PROFILE_SCHEMA}`), {
    input: { request: 'Ada' },
  })
  assert.is(r.state.valid, true, JSON.stringify(r.state.reflection_history))
  assert.equal(r.state.reflection_output, { name: 'Ada', email: 'ada@example.org', age: '36' })
  assert.equal(b.server.chatRequests()[0]!.body.messages, [{ role: 'user', content: 'Make a profile for Ada' }])
})

t('an llm.call corrector returns the corrected output, which is evaluated next (the generator does not run again)', async ({ b }) => {
  b.server.script(
    { match: 'Make a profile', content: '{"name": "Ada"}' },
    { match: 'Fix this', content: '{"name": "Ada", "email": "ada@example.org", "age": 36}' },
  )
  const r = await b.go(
    agent(`generator:\n  action: llm.call\n  prompt: Make a profile\n${PROFILE_SCHEMA}
corrector:
  action: llm.call
  prompt: "Fix this: {{ state.reflection_output | tojson }} errors: {{ state.reflection_errors | tojson }}"`),
  )
  assert.is(r.state.valid, true)
  assert.is(r.state.reflection_iteration, 2)
  assert.is(b.server.chatRequests().length, 2)
  const fix = b.server.chatRequests()[1]!.body.messages[0].content as string
  assert.match(fix, 'Fix this: {"name":"Ada"} errors: [')
  assert.match(fix, 'email')
})

t('an llm evaluator judges with its examples and the output; its feedback becomes the error', async ({ b }) => {
  b.server.script(
    { match: 'judge', content: { valid: false, score: 0.3, feedback: 'too vague', suggestions: ['be concrete'] } },
    { match: 'judge', content: { valid: true, score: 0.9, feedback: 'good' } },
  )
  const r = await b.go(
    agent(`generator:
  run: "return { text: 'draft ' + state.reflection_iteration }"
evaluator:
  type: llm
  model: "ollama:judge"
  prompt: "Is this concrete? {{ state.reflection_output | tojson }}"
  examples:
    - { input: "vague text", output: '{"valid": false, "score": 0.1}' }
max_iterations: 3`),
  )
  assert.is(r.state.valid, true)
  assert.is(r.state.reflection_iteration, 2)
  assert.is(r.state.reflection_best_score, 0.9)
  const first = b.server.chatRequests()[0]!.body
  assert.is(first.model, 'judge')
  assert.equal(
    first.messages.slice(1).map((m: { role: string }) => m.role),
    ['user', 'assistant', 'user'],
  )
  assert.is(first.messages[3].content, 'Is this concrete? {"text":"draft 1"}')
  const history = r.state.reflection_history as Array<Record<string, any>>
  assert.equal(history[0]!.errors, [{ message: 'too vague', type: 'llm_judgement' }])
})

t('a custom evaluator returns {valid, score, errors}; on exhaustion return_best gives the best attempt', async ({ b }) => {
  const r = await b.go(
    agent(`generator:
  run: "return { n: [3, 9, 5][state.reflection_iteration - 1] }"
evaluator:
  type: custom
  run: "return { valid: output.n > 10, score: output.n / 10, errors: ['too small: ' + output.n] }"
max_iterations: 3
on_failure: return_best`),
  )
  assert.is(r.status, 'completed')
  assert.is(r.state.valid, false)
  assert.is(r.state.exhausted, true)
  assert.equal(plain(r.state.reflection_output), { n: 9 })
  assert.is(r.state.reflection_best_score, 0.9)
  assert.is(r.state.n, 9)
  assert.equal(plain(r.state.reflection_errors), [{ message: 'too small: 5' }])
})

t('return_last gives the last attempt; raise fails the node with REFLECTION_FAILED and the history', async ({ b }) => {
  const base = `generator:
  run: "return { n: [3, 9, 5][state.reflection_iteration - 1] }"
evaluator:
  type: custom
  run: "return output.n > 10"
max_iterations: 3`
  const last = await b.go(agent(`${base}\non_failure: return_last`))
  assert.equal(plain(last.state.reflection_output), { n: 5 })
  const raised = await b.go(agent(`${base}\non_failure: raise`), { runId: 'run-2' })
  assert.is(raised.status, 'failed')
  assert.is(raised.error?.code, 'REFLECTION_FAILED')
  assert.is((raised.error?.details?.history as unknown[]).length, 3)
})

t('a generator that throws is a failed attempt with its error, and the loop goes on', async ({ b }) => {
  const r = await b.go(
    agent(`generator:
  run: |
    if (state.reflection_iteration === 1) throw new Error('flaky generator')
    return { ok: true }
evaluator:
  type: custom
  run: "return { valid: output.ok === true }"`),
  )
  assert.is(r.state.valid, true)
  const history = r.state.reflection_history as Array<Record<string, any>>
  assert.match(history[0]!.errors[0].message, 'generator failed: ')
  assert.match(history[0]!.errors[0].message, 'flaky generator')
})

t(
  "TEA's Prolog evaluator, and Lua anywhere but the evaluator, fail at once naming the TEA feature (Python: test/python/tea-contract.test.ts)",
  async ({ b }) => {
    const r = await b.go(agent(`generator:\n  run: "return {}"\nevaluator:\n  type: custom\n  language: prolog\n  run: "true."`))
    assert.is(r.status, 'failed')
    assert.is(r.error?.code, 'TEA_UNSUPPORTED')
    assert.match(
      errorMessage(r.error),
      "node 'generate' (reflection.loop), with.evaluator.run: reflection.loop evaluator code in prolog is a TEA feature",
    )
    const g = await b.go(agent(`generator:\n  language: lua\n  run: "return {}"\nevaluator:\n  type: custom\n  run: "return true"`), {
      runId: 'run-2',
    })
    assert.is(g.error?.code, 'TEA_UNSUPPORTED')
    assert.match(errorMessage(g.error), 'reflection.loop generator code in lua is a TEA feature')
  },
)

t(
  "TEA's Lua evaluator is the body of function(state, output): a table or a boolean is the verdict, an error a failed evaluation",
  async ({ b }) => {
    const r = await b.go(
      agent(`generator:
  run: "return { n: [3, 12][state.reflection_iteration - 1] }"
evaluator:
  type: custom
  language: lua
  run: |
    if output.n == 3 then error("three is not allowed") end
    return { valid = output.n > 10, score = output.n / 20 }
max_iterations: 2`),
    )
    assert.is(r.status, 'completed', errorMessage(r.error))
    assert.equal([r.state.valid, r.state.reflection_iteration, r.state.reflection_best_score], [true, 2, 0.6])
    const history = plain(r.state.reflection_history) as Array<{ errors: Array<{ message: string; type: string }> }>
    assert.is(history[0]!.errors[0]!.type, 'evaluator_error')
    assert.match(history[0]!.errors[0]!.message, 'run: Lua, line 1: ')
    assert.match(history[0]!.errors[0]!.message, 'three is not allowed')
    const bool = await b.go(
      agent(`generator:\n  run: "return { n: 1 }"\nevaluator:\n  type: custom\n  language: lua\n  run: "return output.n == 1"`),
      { runId: 'run-3' },
    )
    assert.equal([bool.state.valid, bool.state.reflection_best_score], [true, 1])
  },
)

t('max_iterations 0 and an unknown on_failure are errors when the agent loads', async ({ b }) => {
  assert.match(
    String(await rejection(() => b.go(agent(`generator: { run: "return {}" }\n${PROFILE_SCHEMA}\nmax_iterations: 0`)))),
    /max_iterations/,
  )
  assert.match(
    String(await rejection(() => b.go(agent(`generator: { run: "return {}" }\n${PROFILE_SCHEMA}\non_failure: retry`)))),
    /on_failure/,
  )
})

test('schema errors name the path and keyword, without the container noise', () => {
  const v = schemaVerdict(
    { type: 'object', required: ['a'], properties: { b: { type: 'object', properties: { c: { type: 'integer' } } } } },
    { b: { c: 'x' } },
  )
  assert.is(v.valid, false)
  assert.equal(
    v.errors.map((e) => [e.path, e.keyword]),
    [
      ['', 'required'],
      ['b.c', 'type'],
    ],
  )
  // A schema that is not one is an invalid verdict, never a throw.
  assert.is(schemaVerdict({ type: 'nonsense-type' }, 1).valid, false)
})

test("TEA's coercion: strings become the numbers and booleans the schema wants, nothing else changes", () => {
  const schema = {
    type: 'object',
    properties: {
      n: { type: 'integer' },
      f: { type: 'number' },
      ok: { type: 'boolean' },
      s: { type: 'string' },
      xs: { type: 'array', items: { type: 'number' } },
    },
  }
  assert.equal(coerce({ n: '42', f: '2.5', ok: 'TRUE', s: '7', xs: ['1', 'x'], other: '3' }, schema), {
    n: 42,
    f: 2.5,
    ok: true,
    s: '7',
    xs: [1, 'x'],
    other: '3',
  })
  assert.is(coerce('4.5', { type: 'integer' }), '4.5')
})

t.run()
test.run()
