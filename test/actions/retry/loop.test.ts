/**
 * retry.loop (../shared/specs/retry-loop-test-design.md): every scenario through the real loader and engine, with
 * validators registered as actions and correction nodes as JavaScript run: nodes. The validate.extraction cases
 * (AC 17, T21.2, AC 23) belong to validate.extraction and are not here.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import * as v from 'valibot'
import { jsonSchemaOf } from '../../../src/actions/json-schema.ts'
import { defineAction } from '../../../src/actions/types.ts'
import { createMemoryStore } from '../../../src/store/memory-store.ts'
import { rejection } from '../../support/expect.ts'
import { buildRegistry } from '../../../src/features.ts'
import { load, nodesRun, run, testActions } from '../../engine/harness.ts'

const seen: Array<Record<string, unknown>> = []
const validators = [
  defineAction({
    name: 'check.fails',
    description: 'always invalid',
    params: v.record(v.string(), v.unknown()),
    run: () => ({ valid: false, errors: [{ type: 'schema', message: 'Missing required field: name' }] }),
  }),
  defineAction({
    name: 'check.passes',
    description: 'always valid',
    params: v.record(v.string(), v.unknown()),
    run: () => ({ valid: true, errors: [] }),
  }),
  defineAction({
    name: 'check.entities',
    description: 'valid when every entity has a name; records what it was given',
    params: v.object({ entities: v.array(v.record(v.string(), v.unknown())) }),
    run: ({ entities }) => {
      seen.push({ entities })
      const missing = entities.map((e, i) => (typeof e.name === 'string' ? undefined : i)).filter((i) => i !== undefined)
      return {
        valid: missing.length === 0,
        errors: missing.map((i) => ({ type: 'missing_required_field', message: `entity ${i} has no name`, path: `entities[${i}].name` })),
      }
    },
  }),
  defineAction({
    name: 'check.throws',
    description: 'throws',
    params: v.record(v.string(), v.unknown()),
    run: () => {
      throw new Error('validator broke')
    },
  }),
  defineAction({
    name: 'check.no_valid',
    description: 'no valid key',
    params: v.record(v.string(), v.unknown()),
    run: () => ({ errors: 'not a list' }),
  }),
]
const registry = () => buildRegistry([...testActions(), ...validators])
const go = (yaml: string, options: Parameters<typeof run>[1] = {}) => run(load(yaml, registry()), { ...options, registry: registry() })

const agent = (
  withBlock: string,
  fix = "return { entities: state.entities.map((e) => ({ name: 'Unknown', ...e })), fixes: (state.fixes || 0) + 1 }",
) => `name: retry
nodes:
  - name: check
    uses: retry.loop
    with:
${withBlock}
    goto:
      - if: "state._retry_result.valid"
        to: success
      - if: "state._retry_exhausted"
        to: failure
      - to: broken
  - name: fix
    run: "${fix}"
  - name: success
    run: "return { status: 'success' }"
    goto: __end__
  - name: failure
    run: "return { status: 'failed', seen_errors: state._retry_errors.length }"
    goto: __end__
  - name: broken
    run: "return { status: 'correction failed' }"
`
const entities = (max?: number) => `      validate: check.entities
      validate_args: { entities: "{{ state.entities }}" }
      correct: fix${max === undefined ? '' : `\n      max_retries: ${max}`}`

test('T1.1 T1.3 retry.loop is registered and an agent using it loads', () => {
  assert.ok(registry().get('retry.loop'))
  assert.ok(load(agent(entities()), registry()))
})

test('T1.2 retry.loop takes validate, validate_args, correct, max_retries and retry_delay (the state comes with the node)', () => {
  const schema = jsonSchemaOf(registry().get('retry.loop')!.params) as { properties: Record<string, unknown>; required?: string[] }
  assert.equal(Object.keys(schema.properties).sort(), ['correct', 'max_retries', 'retry_delay', 'validate', 'validate_args'])
  assert.equal([...(schema.required ?? [])].sort(), ['correct', 'validate'])
})

test('T2.1 T2.3 T3.1 T3.2 T13.2 the validator is called with validate_args rendered over the state the correction left (not once)', async () => {
  seen.length = 0
  const ran = await go(agent(entities()), { input: { entities: [{ name: 'a' }, { type: 'x' }] } })
  assert.is(ran.status, 'completed', JSON.stringify(ran.error))
  assert.is(ran.state.status, 'success')
  assert.equal(seen, [{ entities: [{ name: 'a' }, { type: 'x' }] }, { entities: [{ name: 'a' }, { name: 'Unknown', type: 'x' }] }])
})

test('T2.2 T18.1 T18.3 T10.1 T9.1 T6.1 any action returning {valid, errors} works; passing first time runs no correction', async () => {
  const ran = await go(agent('      validate: check.passes\n      correct: fix'))
  assert.equal([ran.state.status, ran.state._retry_count, ran.state._retry_exhausted, ran.state.fixes], ['success', 0, false, undefined])
  assert.equal(ran.state._retry_errors, [])
  assert.not.ok(nodesRun(ran.events).includes('fix'))
})

test('T3.3 empty validate_args are fine', async () => {
  const ran = await go(agent('      validate: check.passes\n      validate_args: {}\n      correct: fix'))
  assert.is(ran.state.status, 'success')
})

test('T4.1 T4.2 T4.3 T12.1 T12.2 T12.3 T7.4 the correction node runs with _retry_errors in its state, and its output is merged', async () => {
  const fix =
    "const seen = state._retry_errors.map((e) => e.type + ':' + e.message + ':' + e.path); return { entities: state.entities.map((e) => ({ name: 'Unknown', ...e })), fix_saw: seen }"
  const ran = await go(agent(entities(), fix), { input: { entities: [{ type: 'x' }] } })
  // run: code's values come from its own realm: compared as JSON.
  assert.equal(JSON.parse(JSON.stringify([ran.state.fix_saw, ran.state.entities])), [
    ['missing_required_field:entity 0 has no name:entities[0].name'],
    [{ name: 'Unknown', type: 'x' }],
  ])
})

test('T19.1 T19.2 T19.3 a correction node can render _retry_errors in a template and iterate it', async () => {
  const yaml = agent(entities()).replace(
    `  - name: fix\n    run: "return { entities: state.entities.map((e) => ({ name: 'Unknown', ...e })), fixes: (state.fixes || 0) + 1 }"`,
    `  - name: fix\n    uses: test.echo\n    with: { listed: "{% for e in state._retry_errors %}{{ e.type }}={{ e.message }};{% endfor %}", all: "{{ state._retry_errors }}" }\n    output: { listed: "{{ result.listed }}" }`,
  )
  const ran = await go(yaml, { input: { entities: [{ type: 'x' }] } })
  assert.is(ran.state.listed, 'missing_required_field=entity 0 has no name;')
})

test('T5.1 T11.1 T11.2 T11.3 T9.3 T8.2 T8.3 T6.3 the default is one retry; an always-failing validator ends exhausted', async () => {
  const ran = await go(agent('      validate: check.fails\n      correct: fix'), { input: { entities: [] } })
  assert.equal([ran.state.status, ran.state._retry_count, ran.state._retry_exhausted, ran.state.fixes], ['failed', 1, true, 1])
  assert.equal((ran.state._retry_result as { valid: boolean }).valid, false)
  assert.equal((ran.state._retry_result as { errors: unknown[] }).errors.length, 1)
})

test('T5.2 T5.3 max_retries is honoured, and 0 means no correction at all', async () => {
  const three = await go(agent('      validate: check.fails\n      correct: fix\n      max_retries: 3'), { input: { entities: [] } })
  assert.equal([three.state._retry_count, three.state.fixes], [3, 3])
  const none = await go(agent('      validate: check.fails\n      correct: fix\n      max_retries: 0'), { input: { entities: [] } })
  assert.equal([none.state._retry_count, none.state.fixes, none.state._retry_exhausted], [0, undefined, true])
})

test('T6.2 T7.1 T7.2 T7.3 T8.1 T9.2 T10.2 T10.3 T13.1 T13.3 fixed on the first retry: one correction, counters and errors as they should be', async () => {
  seen.length = 0
  const ran = await go(agent(entities(3)), { input: { entities: [{ type: 'x' }, { type: 'y' }] } })
  assert.equal([ran.state.status, ran.state._retry_count, ran.state._retry_exhausted, ran.state.fixes], ['success', 1, false, 1])
  assert.equal(ran.state._retry_errors, [])
  assert.equal((ran.state._retry_result as { valid: boolean }).valid, true)
  assert.is(seen.length, 2, 'validated twice: before and after the one correction')
})

test('T14.1 T14.2 T14.3 a failing correction ends the loop with the node and the reason, not an exception', async () => {
  const ran = await go(agent('      validate: check.fails\n      correct: fix\n      max_retries: 3', "throw new Error('the fixer broke')"))
  assert.is(ran.status, 'completed')
  assert.is(ran.state.status, 'correction failed')
  const errors = ran.state._retry_errors as Array<{ type: string; message: string }>
  assert.is(errors.at(-1)?.type, 'correction_error')
  assert.match(errors.at(-1)!.message, "correction node 'fix' failed")
  assert.match(errors.at(-1)!.message, 'the fixer broke')
  assert.equal((ran.state._retry_result as { correction_error: { node: string } }).correction_error.node, 'fix')
  assert.is(ran.state._retry_count, 0, 'no further retries')
})

test('T15.1 T15.2 T15.3 an unknown validator or correction node is a load error naming it', async () => {
  const unknown = await rejection(() => load(agent('      validate: nonexistent.check\n      correct: fix'), registry()))
  assert.match(String(unknown), "UNKNOWN_ACTION node 'check', with.validate: unknown action 'nonexistent.check'")
  const noNode = await rejection(() => load(agent('      validate: check.passes\n      correct: nowhere'), registry()))
  assert.match(String(noNode), "retry.loop correct node 'nowhere' is not a node of this agent")
})

test('T16.1 T16.2 T16.3 a negative, non-integer or text max_retries is a load error', async () => {
  for (const bad of ['-1', 'two', '1.5']) {
    const e = await rejection(() => load(agent(`      validate: check.passes\n      correct: fix\n      max_retries: ${bad}`), registry()))
    assert.match(String(e), 'INVALID_PARAMS', bad)
    assert.match(String(e), 'max_retries', bad)
  }
})

test('T18.2 a validator that throws, or returns no valid key, counts as invalid with an error saying so', async () => {
  const threw = await go(agent('      validate: check.throws\n      correct: fix\n      max_retries: 0'))
  assert.match((threw.state._retry_errors as Array<{ message: string }>)[0]!.message, 'check.throws failed: validator broke')
  const noValid = await go(agent('      validate: check.no_valid\n      correct: fix\n      max_retries: 0'))
  const errors = noValid.state._retry_errors as Array<{ message: string }>
  assert.match(errors[0]!.message, "returned no boolean 'valid' key")
  assert.is(errors[1]!.message, 'not a list', 'errors that are not a list are wrapped, not dropped')
})

test('T20.1 T20.2 T20.3 routing on _retry_result.valid and _retry_exhausted, also through TEA conditional edges', async () => {
  const yaml = `name: edges
nodes:
  - name: check
    uses: retry.loop
    with: { validate: check.fails, correct: fix, max_retries: 1 }
  - name: fix
    run: "return {}"
  - name: ok
    run: "return { route: 'ok' }"
  - name: exhausted
    run: "return { route: 'exhausted' }"
edges:
  - from: check
    to: ok
    condition: "{{ state._retry_result.valid }}"
  - from: check
    to: exhausted
    condition: "{{ state._retry_exhausted }}"
  - from: ok
    to: __end__
  - from: exhausted
    to: __end__
`
  assert.is((await go(yaml)).state.route, 'exhausted')
  assert.is((await go(yaml.replace('validate: check.fails', 'validate: check.passes'))).state.route, 'ok')
})

test('T21.1 T22.1 T22.2 agents without retry.loop and hand-made retry loops with goto still work beside it', async () => {
  const manual = `name: manual
nodes:
  - name: attempt
    run: "return { tries: (state.tries || 0) + 1 }"
    goto:
      - if: "state.tries < 3"
        to: attempt
      - to: check
  - name: check
    uses: retry.loop
    with: { validate: check.passes, correct: attempt }
`
  const ran = await go(manual)
  assert.equal([ran.state.tries, ran.state._retry_exhausted], [3, false])
})

test('checkpointed per attempt: a run stopped after a correction resumes there, counters intact, nothing redone', async () => {
  const store = createMemoryStore()
  const fix =
    "if (!state.entities.length) throw new Error('never'); return { entities: state.entities.map((e) => ({ name: 'Unknown', ...e })), fixes: (state.fixes || 0) + 1 }"
  // The validator fails until the entities are fixed; the first run is cut off by making the success node fail.
  const yaml = agent(entities(2), fix).replace(
    'run: "return { status: \'success\' }"',
    "run: \"if (!state.allow) throw new Error('stop here'); return { status: 'success' }\"",
  )
  seen.length = 0
  const first = await go(yaml, { store, runId: 'r', input: { entities: [{ type: 'x' }] } })
  assert.is(first.status, 'failed')
  assert.equal([first.state._retry_count, first.state.fixes], [1, 1])
  const resumed = await run(load(yaml, registry()), { store, runId: 'r', resume: true, registry: registry() })
  assert.is(resumed.status, 'failed', 'the success node still fails: only it runs again')
  assert.is(seen.length, 2, 'the loop (validate, fix, validate) ran once in all')
  assert.equal(await store.memoryList('retry.loop:r:check'), [], 'the loop clears its progress once it ends')
})

test.run()
