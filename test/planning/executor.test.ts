import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { errorMessage, isTeaError } from '../../src/core/errors.ts'
import { plan, reply, scriptedLlm } from './helpers.ts'
import { runExecute, statuses } from './execute-helpers.ts'
import { runDecompose } from './decompose-helpers.ts'

test('001.3R-INT-009 subtask_executor runs a registered action with its with: block templated per subtask', async () => {
  const llm = scriptedLlm(['result one', 'result two'])
  const p = plan([
    ['1', []],
    ['2', ['1']],
  ])
  const { out } = await runExecute(
    {
      plan: p,
      subtask_executor: {
        action: 'llm.call',
        with: {
          model: 'ollama:worker',
          prompt:
            '{{ subtask.id }}: {{ subtask.description }} (after {{ subtask.dependencies | join(",") }}) given {{ dependency_results | tojson }} for {{ state.user }}',
        },
      },
    },
    { llm, state: { user: 'ann' } },
  )
  assert.equal(
    llm.requests.map((r) => r.messages.at(-1)!.content),
    ['1: do 1 (after ) given {} for ann', '2: do 2 (after 1) given {"1":"result one"} for ann'],
  )
  assert.is(llm.requests[0]!.model, 'ollama:worker')
  assert.equal(out.subtask_results, { 1: 'result one', 2: 'result two' })
})

test('without a with: block the default executor asks llm.call with the goal, the subtask and its inputs', async () => {
  const llm = scriptedLlm(['toast done', 'coffee done'])
  const p = plan(
    [
      ['toast', []],
      ['coffee', ['toast']],
    ],
    { goal: 'Prepare breakfast' },
  )
  const { out } = await runExecute({ plan: p, parallel: false }, { llm })
  const second = llm.requests[1]!.messages
  assert.match(second[0]!.content, 'one subtask of a larger plan')
  assert.match(second.at(-1)!.content, 'Goal of the plan: Prepare breakfast')
  assert.match(second.at(-1)!.content, 'Your subtask (coffee): do coffee')
  assert.match(second.at(-1)!.content, '- toast: toast done')
  assert.equal(out.subtask_results, { toast: 'toast done', coffee: 'coffee done' })
})

test('001.3R-E2E-001 (in process) breakfast: toast before coffee, eggs alongside, all results, 3/3 completed', async () => {
  const decomposeReply = reply([
    { id: 'toast', description: 'Toast two slices of bread', dependencies: [] },
    { id: 'eggs', description: 'Scramble two eggs', dependencies: [] },
    { id: 'coffee', description: 'Brew coffee', dependencies: ['toast'] },
  ])
  const { plan: made } = await runDecompose({ goal: 'Prepare breakfast' }, [decomposeReply])
  const llm = scriptedLlm(['toast ready', 'eggs ready', 'coffee ready'])
  // One worker keeps the model's answers in request order; the waves still show what may run together.
  const { out, events } = await runExecute({ plan: made, max_concurrent: 1 }, { llm })
  const started = events.filter((e) => e.status === 'in_progress').map((e) => e.id)
  const completed = events.filter((e) => e.status === 'completed').map((e) => e.id)
  assert.equal(started, ['toast', 'eggs', 'coffee'])
  assert.ok(completed.indexOf('toast') < started.indexOf('coffee'))
  assert.equal(statuses(out.plan), { toast: 'completed', eggs: 'completed', coffee: 'completed' })
  assert.equal(out.subtask_results, { toast: 'toast ready', eggs: 'eggs ready', coffee: 'coffee ready' })
  assert.equal([out.plan_progress.completed, out.plan_progress.total], [3, 3])
})

test('with two workers toast and eggs are in flight together before coffee starts', async () => {
  const made = plan([
    ['toast', []],
    ['eggs', []],
    ['coffee', ['toast']],
  ])
  const { events } = await runExecute({ plan: made, max_concurrent: 2, subtask_executor: { run: 'return subtask.id' } })
  const firstTwo = events.slice(0, 2).map((e) => [e.id, e.status])
  assert.equal(firstTwo, [
    ['toast', 'in_progress'],
    ['eggs', 'in_progress'],
  ])
})

test('a misspelt executor action or run: code that does not compile fails before any subtask runs', async () => {
  for (const [executor, code, text] of [
    [{ action: 'llm.cal' }, 'UNKNOWN_ACTION', "did you mean 'llm.call'"],
    [{ run: 'return {' }, 'CODE_ERROR', 'subtask_executor.run: run: code has a syntax error at line'],
  ] as const) {
    const llm = scriptedLlm([])
    try {
      await runExecute({ plan: plan([['1', []]]), subtask_executor: executor }, { llm })
      assert.unreachable('should have thrown')
    } catch (e) {
      assert.ok(isTeaError(e, code), String(e))
      assert.match(errorMessage(e), text)
    }
    assert.is(llm.requests.length, 0)
  }
})

test.run()
