/**
 * TEA's actions a board provides, through `tea run` as a user runs a TEA file: schema.merge over files beside the
 * agent, trace.start/log/end into the trace file of settings.auto_trace, ratelimit.wrap around a model call under
 * settings.rate_limiters, llm.tools running a tea action for the model (the fake model server behind tea's real
 * client), and a TEA action no TEA runtime has (`return`), named at load and at the node.
 */

import { readFileSync, mkdirSync, writeFileSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startFakeModelServer } from '../support/fake-model-server.ts'
import { scratch, tea } from './cli.ts'

test('a TEA file merging schemas, tracing spans and calling a model with tools and a rate limit runs as TEA runs it', async () => {
  const model = await startFakeModelServer()
  const s = scratch({
    'agent.yaml': `name: invoice-tools
settings:
  llm: { model: "ollama:tiny" }
  auto_trace: true
  trace_exporter: file
  trace_file: run.trace.jsonl
  rate_limiters:
    models: { rps: 50 }
nodes:
  - name: begin
    uses: trace.start
    with: { name: invoice, metadata: { source: e2e } }
    output: span
  - name: merge_schemas
    uses: schema.merge
    with:
      schemas:
        - path: schemas/base.yaml
        - inline: { properties: { notes: { type: string } } }
      validate: true
      output_key: extraction_schema
    output: schema_result
  - name: ask
    uses: llm.tools
    with:
      prompt: "Total of {{ state.invoice }}?"
      tools:
        - name: parse
          description: Parse JSON
          parameters: { text: { type: string, required: true } }
          action: json.parse
    output: tools_result
  - name: limited
    uses: ratelimit.wrap
    with:
      action: llm.call
      limiter: models
      args: { prompt: "Say ok" }
    output: limited
  - name: note
    uses: trace.log
    with: { message: "asked", metrics: { rounds: "{{ state.tools_result.rounds }}" } }
  - name: finish
    uses: trace.end
edges:
  - { from: __start__, to: begin }
  - { from: begin, to: merge_schemas }
  - { from: merge_schemas, to: ask }
  - { from: ask, to: limited }
  - { from: limited, to: note }
  - { from: note, to: finish }
  - { from: finish, to: __end__ }
`,
  })
  mkdirSync(s.path('schemas'))
  writeFileSync(s.path('schemas/base.yaml'), 'type: object\nproperties:\n  total: { type: number }\nrequired: [total]\n')
  try {
    model.script(
      { content: '', toolCalls: [{ name: 'parse', arguments: { text: '{"total": 42}' } }] },
      { match: 'Result of tool parse', content: 'The total is 42.' },
      { content: 'ok' },
    )
    const r = await tea(['run', s.path('agent.yaml'), '--data-dir', s.path('data'), '-q', '--set', 'invoice={"total": 42}'], {
      env: { OLLAMA_HOST: model.url },
    })
    assert.is(r.code, 0, r.stderr)
    const out = JSON.parse(r.stdout)
    assert.equal(out.schema_result, {
      success: true,
      extraction_schema: {
        type: 'object',
        properties: { total: { type: 'number' }, notes: { type: 'string' } },
        required: ['total'],
      },
      validation: {
        valid: true,
        errors: [],
        schema: { type: 'object', properties: { total: { type: 'number' }, notes: { type: 'string' } }, required: ['total'] },
      },
    })
    assert.is(out.tools_result.content, 'The total is 42.')
    assert.equal(out.tools_result.tool_results, [{ tool_call_id: 'call_1_1', name: 'parse', result: '{"data":{"total":42}}' }])
    assert.is(out.limited.success, true)
    assert.is(out.limited.result.content, 'ok')
    assert.is(out.limited._ratelimit_limiter, 'models')
    // The spans are in the trace file of settings.auto_trace, beside the run's other events.
    const events = readFileSync(s.path('run.trace.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    const spans = events.filter((e) => e.type === 'span')
    assert.equal(
      spans.map((e) => [e.node, e.phase]),
      [
        ['begin', 'start'],
        ['note', 'log'],
        ['finish', 'end'],
      ],
    )
    assert.is(spans[0].span.span_id, out.span.span_id)
    assert.equal(spans[0].span.metadata, { source: 'e2e' })
    assert.equal(spans[2].span.metrics, { rounds: 1 })
    assert.is(spans[2].span.event_count, 1)
    assert.is(spans[2].span.status, 'ok')
  } finally {
    s.cleanup()
    await model.close()
  }
})

test('a TEA action no TEA runtime has (return) is named at validate, and the run fails at its node saying so', async () => {
  const s = scratch({
    'agent.yaml': `name: returns
nodes:
  - name: start
    run: "return { a: 1 }"
  - name: format_answer
    action: return
    with: { value: { answer: "{{ state.a }}" } }
edges:
  - { from: __start__, to: start }
  - { from: start, to: format_answer }
  - { from: format_answer, to: __end__ }
`,
  })
  try {
    const v = await tea(['validate', s.path('agent.yaml')])
    assert.match(v.stdout + v.stderr, "action 'return' is a TEA feature that tea does not provide: neither TEA runtime has this action")
    const r = await tea(['run', s.path('agent.yaml'), '--data-dir', s.path('data'), '-q'])
    assert.is(r.code, 1)
    assert.match(r.stderr, 'TEA_UNSUPPORTED')
    assert.match(r.stderr, 'format_answer')
  } finally {
    s.cleanup()
  }
})

test.run()
