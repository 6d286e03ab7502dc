/**
 * validate.extraction (TEA-YAML-004 as retry.loop's AC 17 needs it): the structural layer, the semantic probes
 * through settings.llm with the yes/no read by first word, and retry.loop correcting what it finds (T17.x, T21.2,
 * T23.x). The Prolog layer is tested with the Prolog feature (test/prolog/run.test.ts).
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { answersYes, generatePrompt, validateExtraction } from '../../../src/actions/validate/extraction.ts'
import { scriptedLlm } from '../../planning/helpers.ts'
import { testContext } from '../context.ts'
import { load, nodesRun, run } from '../../engine/harness.ts'

const SCHEMA = {
  entities: { required_fields: ['name', 'type'] },
  relationships: {
    types: ['mother', 'father', 'affair'],
    required_fields: ['type', 'subject', 'object'],
    type_requirements: { affair: ['start_date', 'end_date'] },
  },
}
const exec = (params: Record<string, unknown>, ctx = testContext()) =>
  validateExtraction.run(params as never, ctx) as Promise<Record<string, unknown>>

test('T23.1 T23.2 the structural layer: missing fields, an invalid relationship type, type-specific fields, each with its path', async () => {
  const r = await exec({
    schema: SCHEMA,
    entities: [{ name: 'Ann', type: 'person' }, { name: 'Bo' }],
    relationships: [
      { type: 'cousin', subject: 'Ann', object: 'Bo' },
      { type: 'affair', subject: 'Ann', object: 'Bo' },
    ],
  })
  assert.is(r.valid, false)
  assert.equal(
    (r.errors as Array<{ type: string; path: string }>).map((e) => `${e.type} ${e.path}`),
    [
      'missing_required_field entities[1].type',
      'invalid_relationship_type relationships[0].type',
      'missing_type_specific_field relationships[1].start_date',
      'missing_type_specific_field relationships[1].end_date',
    ],
  )
  assert.match(String(r.validated_at), /^\d{4}-\d\d-\d\dT/)
  const ok = await exec({ schema: SCHEMA, entities: [{ name: 'Ann', type: 'person' }], relationships: [] })
  assert.equal([ok.valid, ok.errors], [true, []])
})

test("the defaults come from state and the agent file's top-level sections", async () => {
  const ctx = testContext({ state: { entities: [{ name: 'x' }] }, settings: { sections: { extraction_schema: SCHEMA } } })
  const r = await exec({}, ctx)
  assert.equal(
    (r.errors as Array<{ path: string }>).map((e) => e.path),
    ['entities[0].type'],
  )
})

test('T17.4 semantic probes ask the model of settings.llm; the answer is read by its first word; reject stops, warn goes on', async () => {
  const llm = scriptedLlm(['Yes.', 'Yes, I know.', 'No, not stated', 'Perhaps'])
  const ctx = testContext({ llm, state: { text: 'Ann is the mother of Bo.' }, settings: { llm: { model: 'ollama:small' } } })
  const probes = [
    {
      for_each: 'relationship',
      where: "type == 'mother'",
      probe: 'Is {{ subject }} the mother of {{ object }} in: {{ text }}?',
      on_fail: 'warn',
    },
    { for_each: 'relationship', where: "type == 'father'", probe: 'Is {{ subject }} the father of {{ object }}?', on_fail: 'reject' },
  ]
  const relationships = [
    { type: 'mother', subject: 'Ann', object: 'Bo' },
    { type: 'mother', subject: 'Cy', object: 'Bo' },
    { type: 'father', subject: 'Dan', object: 'Bo' },
    { type: 'father', subject: 'Eve', object: 'Bo' },
  ]
  const r = await exec({ probes, relationships, entities: [] }, ctx)
  assert.is(llm.requests.length, 3, 'the reject probe that failed stopped the validation')
  assert.match(llm.requests[0]!.messages[1]!.content, 'Is Ann the mother of Bo in: Ann is the mother of Bo.?')
  assert.is(llm.requests[0]!.max_tokens, 10)
  assert.equal(r.warnings, [])
  assert.is(r.valid, false)
  const errors = r.errors as Array<{ type: string; path: string; response: string }>
  assert.equal(
    errors.map((e) => [e.type, e.path, e.response]),
    [['semantic_probe_failed', 'relationships[2]', 'No, not stated']],
  )
})

test("'Yes, I know' is yes (TEA read it as no); empty, prose and no are no", () => {
  for (const yes of ['Yes', 'yes.', '  YES, I know', 'True', 'Correct, it is', 'indeed']) assert.ok(answersYes(yes), yes)
  for (const no of ['', 'No', 'no, I know', 'I think so', 'Not true', '...']) assert.not.ok(answersYes(no), no)
})

const EXTRACT = `name: extract
extraction_schema:
  entities: { required_fields: [name, type] }
nodes:
  - name: check
    uses: retry.loop
    with:
      validate: validate.extraction
      validate_args: { entities: "{{ state.entities }}", relationships: [] }
      correct: fix
      max_retries: 2
  - name: fix
    run: "return { entities: state.entities.map((e) => ({ type: 'person', ...e })) }"
  - name: done
    run: "return { status: state._retry_result.valid ? 'valid' : 'invalid' }"
edges:
  - from: check
    to: done
  - from: done
    to: __end__
`

test('T17.1 T17.2 retry.loop around validate.extraction: a schema error triggers the correction, which fixes it', async () => {
  const ran = await run(EXTRACT, { input: { entities: [{ name: 'Ann' }] } })
  assert.is(ran.status, 'completed', JSON.stringify(ran.error))
  assert.equal([ran.state.status, ran.state._retry_count, ran.state.valid], ['valid', 1, true])
  assert.ok(nodesRun(ran.events).includes('done'))
})

test('T21.2 validate.extraction alone in a node gives {valid, errors}', async () => {
  const ran = await run(`name: alone
extraction_schema:
  entities: { required_fields: [name] }
nodes:
  - name: v
    uses: validate.extraction
    with: { entities: [{ type: x }], relationships: [] }
`)
  assert.equal([ran.state.valid, (ran.state.errors as Array<{ type: string }>)[0]!.type], [false, 'missing_required_field'])
})

test('validate.generate_prompt builds the ontology prompt; guide_extraction: true puts it in variables.extraction_prompt', async () => {
  const r = (await generatePrompt.run(
    {
      schema: SCHEMA,
      constraints: '% A person cannot be their own mother.\nvalidation_error(self, X) :- x.',
      confidence_tracking: true,
    } as never,
    testContext(),
  )) as { extraction_prompt: string }
  const p = r.extraction_prompt
  for (const part of [
    'ONTOLOGY:',
    '- Entities must have: name (required), type (required)',
    '- Valid relationship types: mother, father, affair',
    '- affair relationships require: start_date, end_date',
    'CONSTRAINTS TO SATISFY:',
    '- A person cannot be their own mother.',
    "a 'confidence' field",
  ]) {
    assert.ok(p.includes(part), part)
  }
  const spec = load(
    'name: g\nextraction_schema:\n  guide_extraction: true\n  entities: { required_fields: [name] }\nnodes:\n  - name: a\n    run: "return {}"\n',
  )
  assert.match(String(spec.variables.extraction_prompt), '- Entities must have: name (required)')
})

test.run()
