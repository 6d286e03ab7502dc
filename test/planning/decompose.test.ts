import { test } from 'uvu'
import * as assert from 'uvu/assert'
import * as v from 'valibot'
import { errorMessage, isTeaError } from '../../src/core/errors.ts'
import { createLlmClient } from '../../src/llm/client.ts'
import { decompose, decomposeParams } from '../../src/planning/decompose.ts'
import { readPlan } from '../../src/planning/plan.ts'
import { startFakeModelServer } from '../support/fake-model-server.ts'
import { planningContext, reply, scriptedLlm } from './helpers.ts'
import { teaRejection } from '../support/expect.ts'

const params = (p: Record<string, unknown>) => v.parse(decomposeParams, p)

test('001.3R-UNIT-012 flat strategy produces the listed subtasks with their dependencies, in order', async () => {
  const llm = scriptedLlm([
    reply([
      { id: '1', description: 'Toast bread', dependencies: [] },
      { id: '2', description: 'Make coffee', dependencies: ['1'] },
      { id: '3', description: 'Fry eggs', dependencies: [] },
    ]),
  ])
  const ctx = planningContext(llm, { settings: { llm: { model: 'ollama:qwen' } } })
  const out = await decompose(params({ goal: 'Prepare breakfast' }), ctx)
  const plan = out.plan as {
    id: string
    goal: string
    strategy: string
    model: string
    subtasks: Array<{ id: string; status: string; dependencies: string[] }>
  }
  assert.equal(
    plan.subtasks.map((s) => [s.id, s.dependencies, s.status]),
    [
      ['1', [], 'pending'],
      ['2', ['1'], 'pending'],
      ['3', [], 'pending'],
    ],
  )
  assert.is(plan.goal, 'Prepare breakfast')
  assert.is(plan.strategy, 'flat')
  assert.is(plan.model, 'ollama:qwen')
  assert.match(plan.id, /^plan_[0-9a-f]{8}$/)
  assert.is(out.subtask_count, 3)
  const req = llm.requests[0]!
  assert.is(req.model, 'ollama:qwen')
  assert.equal(req.messages.at(-1), { role: 'user', content: 'Goal: Prepare breakfast' })
  // the reply's JSON Schema goes as structured output
  const format = req.format as { properties: { subtasks: { items: { required: string[] } } } }
  assert.equal(format.properties.subtasks.items.required, ['id', 'description', 'dependencies'])
  ctx.cleanup()
})

test('001.3R-UNIT-014 iterative strategy asks for the next steps with what is planned, until the model says complete', async () => {
  const llm = scriptedLlm([
    reply([{ id: '1', description: 'Survey site', dependencies: [] }], { planning_complete: false }),
    reply(
      [
        { id: '1', description: 'Draw plans', dependencies: ['1'] },
        { id: '3', description: 'Get permit', dependencies: [] },
      ],
      { planning_complete: false },
    ),
    reply([{ id: '4', description: 'Build', dependencies: ['2', '3'] }], { planning_complete: true }),
    reply([{ id: '9', description: 'never asked', dependencies: [] }]),
  ])
  const ctx = planningContext(llm)
  const out = await decompose(params({ goal: 'Build a shed', strategy: 'iterative' }), ctx)
  const plan = out.plan as { strategy: string; subtasks: Array<{ id: string; description: string; dependencies: string[] }> }
  assert.is(llm.requests.length, 3)
  assert.equal(
    plan.subtasks.map((s) => [s.id, s.description, s.dependencies]),
    [
      ['1', 'Survey site', []],
      ['2', 'Draw plans', ['1']],
      ['3', 'Get permit', []],
      ['4', 'Build', ['2', '3']],
    ],
  )
  assert.match(llm.requests[1]!.messages.at(-1)!.content, 'Planned so far:\n- 1: Survey site')
  assert.match(llm.requests[2]!.messages.at(-1)!.content, '- 3: Get permit')
  assert.is(plan.strategy, 'iterative')
  ctx.cleanup()
})

test('iterative planning stops at max_subtasks even if the model never says complete', async () => {
  const step = (i: number) =>
    reply([
      { id: `s${i}`, description: `step ${i}`, dependencies: [] },
      { id: `t${i}`, description: `more ${i}`, dependencies: [] },
    ])
  const llm = scriptedLlm([step(1), step(2), step(3), step(4)])
  const ctx = planningContext(llm)
  const out = await decompose(params({ goal: 'g', strategy: 'iterative', max_subtasks: 5 }), ctx)
  assert.is(out.subtask_count, 5)
  assert.is(llm.requests.length, 3)
  ctx.cleanup()
})

test('hierarchical decomposition flattens nested phases with path ids and sends a depth-bounded schema', async () => {
  const nested = {
    subtasks: [
      { id: 'a', description: 'Phase A', subtasks: [{ id: 'a1', description: 'x', subtasks: [{ description: 'too deep' }] }] },
      { id: 'b', description: 'Phase B', dependencies: ['a'] },
    ],
  }
  const llm = scriptedLlm([JSON.stringify(nested)])
  const ctx = planningContext(llm)
  const out = await decompose(params({ goal: 'g', strategy: 'hierarchical', max_depth: 2 }), ctx)
  const plan = out.plan as { subtasks: Array<{ id: string; dependencies: string[]; description: string }> }
  assert.equal(
    plan.subtasks.map((s) => [s.id, s.dependencies]),
    [
      ['1.1', []],
      ['2', ['1.1']],
    ],
  )
  assert.match(plan.subtasks[0]!.description, '- too deep')
  assert.match(JSON.stringify(llm.requests[0]!.format), '"subtasks"')
  assert.match(llm.requests[0]!.messages[0]!.content, 'at most 2 levels deep')
  ctx.cleanup()
})

test('001.3R-UNIT-017 a reply with cyclic dependencies is rejected after parsing, naming the cycle', async () => {
  const llm = scriptedLlm([
    reply([
      { id: 'A', description: 'a', dependencies: ['B'] },
      { id: 'B', description: 'b', dependencies: ['A'] },
    ]),
  ])
  const ctx = planningContext(llm)
  const e = await teaRejection(decompose(params({ goal: 'g' }), ctx))
  assert.ok(isTeaError(e, 'PLAN_CYCLE'))
  assert.match(errorMessage(e), 'A → B → A')
  // the engine places it at "node 'X' (plan.decompose)"; the action must not say it a second time
  assert.not.match(errorMessage(e), 'test-node')
  ctx.cleanup()
})

test('a prompt_template replaces the user message and sees goal and max_subtasks; planner.model wins', async () => {
  const llm = scriptedLlm([reply([{ id: '1', description: 'a', dependencies: [] }])])
  const ctx = planningContext(llm, { settings: { llm: { model: 'ollama:default' } } })
  await decompose(
    params({
      goal: 'Fix the pump',
      max_subtasks: 4,
      planner: { model: 'ollama:big', prompt_template: 'Plan {{ goal }} in {{ max_subtasks }} steps' },
    }),
    ctx,
  )
  assert.equal(llm.requests[0]!.messages.at(-1), { role: 'user', content: 'Plan Fix the pump in 4 steps' })
  assert.is(llm.requests[0]!.model, 'ollama:big')
  ctx.cleanup()
})

test('001.3R-UNIT-016 a broken reply from decompose is PLAN_PARSE_ERROR carrying the reply', async () => {
  const ctx = planningContext(scriptedLlm(['{ broken json']))
  const e = await teaRejection(decompose(params({ goal: 'Test goal' }), ctx))
  assert.ok(isTeaError(e, 'PLAN_PARSE_ERROR'))
  assert.match(e.message, '{ broken json')
  ctx.cleanup()
})

// --- through the real clients against the fake model server ---

const twoSteps = {
  subtasks: [
    { id: '1', description: 'Boil water', dependencies: [] },
    { id: '2', description: 'Brew tea', dependencies: ['1'] },
  ],
}

test('001.3R-INT-001 decompose calls the model through the Ollama client with the plan schema as format', async () => {
  const server = await startFakeModelServer()
  try {
    server.script({ content: twoSteps })
    const llm = createLlmClient({ env: { OLLAMA_HOST: server.url } })
    const ctx = planningContext(llm, { settings: { llm: { model: 'ollama:qwen2.5:1.5b' } } })
    const out = await decompose(params({ goal: 'Make tea' }), ctx)
    assert.is(out.subtask_count, 2)
    assert.is((out.plan as { model: string }).model, 'ollama:qwen2.5:1.5b')
    const [req] = server.chatRequests()
    assert.is(req!.path, '/api/chat')
    assert.is(req!.body.model, 'qwen2.5:1.5b')
    assert.equal(req!.body.format.required, ['subtasks'])
    ctx.cleanup()
  } finally {
    await server.close()
  }
})

test('001.3R-INT-002 decompose calls the model through the OpenAI-compatible client', async () => {
  const server = await startFakeModelServer()
  try {
    server.script({ content: twoSteps })
    const llm = createLlmClient({ env: { OPENAI_BASE_URL: server.url } })
    const ctx = planningContext(llm, { settings: { llm: { model: 'openai:local-model' } } })
    const out = await decompose(params({ goal: 'Make tea' }), ctx)
    assert.is(out.subtask_count, 2)
    const [req] = server.chatRequests()
    assert.is(req!.path, '/v1/chat/completions')
    assert.is(req!.body.model, 'local-model')
    assert.ok(req!.body.response_format, 'structured output requested')
    ctx.cleanup()
  } finally {
    await server.close()
  }
})

test('001.3R-INT-003 a model that does not answer in time is LLM_TIMEOUT, not a hang', async () => {
  const server = await startFakeModelServer()
  try {
    server.script({ content: twoSteps, delayMs: 3000 })
    const llm = createLlmClient({ env: { OLLAMA_HOST: server.url } })
    const ctx = planningContext(llm, { settings: { llm: { model: 'ollama:slow', timeout: 0.2, max_retries: 0 } } })
    const e = await teaRejection(decompose(params({ goal: 'Make tea' }), ctx))
    assert.ok(isTeaError(e, 'LLM_TIMEOUT'), `got ${e.code}: ${e.message}`)
    ctx.cleanup()
  } finally {
    await server.close()
  }
})

test('001.3R-INT-004 a transient model error (503, then reset) is retried and the plan still arrives', async () => {
  const server = await startFakeModelServer()
  try {
    server.script({ status: 503, body: 'busy' }, { reset: true }, { content: twoSteps })
    const llm = createLlmClient({ env: { OLLAMA_HOST: server.url }, backoffBaseMs: 1 })
    const ctx = planningContext(llm, { settings: { llm: { model: 'ollama:flaky', max_retries: 2 } } })
    const out = await decompose(params({ goal: 'Make tea' }), ctx)
    assert.is(out.subtask_count, 2)
    assert.is(server.chatRequests().length, 3)
    ctx.cleanup()
  } finally {
    await server.close()
  }
})

test('10-11 planner.model is rendered like any parameter (planner: stays raw only for its prompt_template)', async () => {
  const llm = scriptedLlm([reply([{ id: 'A', description: 'a', dependencies: [] }])])
  const ctx = planningContext(llm, { state: { m: 'ollama:small' } })
  await decompose(params({ goal: 'g', planner: { model: '{{ state.m }}' } }), ctx)
  assert.is(llm.requests[0]!.model, 'ollama:small')
  ctx.cleanup()
})

test("10-11 plan.execute given plan.decompose's whole result says where the plan is", async () => {
  const llm = scriptedLlm([reply([{ id: 'A', description: 'a', dependencies: [] }])])
  const ctx = planningContext(llm)
  const whole = await decompose(params({ goal: 'g' }), ctx)
  const e = await teaRejection(() => readPlan(whole))
  assert.is(e.code, 'PLAN_INVALID')
  assert.match(e.message, "plan.decompose's whole result")
  assert.match(e.hint ?? '', '{{ state.plan.plan }}')
  assert.is(readPlan(whole.plan).goal, 'g')
  ctx.cleanup()
})

test.run()
