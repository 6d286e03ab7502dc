import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { loadAgentText } from '../../src/agent/load.ts'
import { formatProblem, invalidAgent } from '../../src/agent/problems.ts'
import { errorMessage } from '../../src/core/errors.ts'
import { createRegistry } from '../../src/actions/registry.ts'
import { testRegistry } from '../engine/harness.ts'

const load = (yaml: string) => loadAgentText(yaml, '/tmp/a.yaml', testRegistry())
const codes = (yaml: string) => load(yaml).problems.map((p) => `${p.where.line}:${p.where.col} ${p.code}`)

test('a valid agent loads with defaults resolved', () => {
  const { spec, problems } = load(`
name: ok
nodes:
  - name: a
    run: "return { a: 1 }"
  - name: b
    uses: llm.call
    with: { model: "ollama:x", prompt: "hi {{ state.a }}" }
`)
  assert.equal(problems, [])
  assert.is(spec?.name, 'ok')
  assert.is(spec?.entry, 'a')
  assert.is(spec?.settings.max_steps, 1000)
  assert.is(spec?.settings.workspace, '/tmp')
  assert.is(spec?.nodes[1]?.uses, 'llm.call')
})

test('reports a YAML syntax error with its line and column', () => {
  const problems = load('name: x\nnodes:\n  - name: a\n    run: [unclosed\n').problems
  assert.is(problems[0]?.code, 'YAML_SYNTAX')
  assert.ok(problems[0]!.where.line >= 4)
})

test('reports every problem at once, each at its own line and column', () => {
  const got = codes(`nodes:
  - name: a
    uses: llm.cal
    with: { prompt: "{{ state.x " }
    goto: nowhere
  - name: a
    run: "return {}"
    colour: red
  - name: c
    uses: json.parse
    with: { text: 42 }
`)
  // No MISSING_KEY for the absent name: it is optional, as in TEA (the file name stands in).
  assert.equal(got, [
    '3:11 UNKNOWN_ACTION',
    '4:21 TEMPLATE_SYNTAX',
    '5:11 UNKNOWN_NODE',
    '6:11 DUPLICATE_NODE',
    '8:5 UNKNOWN_KEY',
    '11:19 INVALID_PARAMS',
  ])
})

test('unknown action names the closest known actions', () => {
  const p = load('name: x\nnodes:\n  - name: a\n    uses: llm.cal\n').problems[0]
  assert.is(p?.code, 'UNKNOWN_ACTION')
  assert.match(p!.message, /'llm\.call'/)
})

test('unknown key suggests the key that was meant', () => {
  const p = load('name: x\nnodes:\n  - name: a\n    run: return 1\n    got: b\n').problems[0]
  assert.is(p?.code, 'UNKNOWN_KEY')
  assert.match(p!.message, /did you mean 'goto'/)
})

test('an agent using plan.* in a build without planning says which feature is missing', () => {
  const lacking = (name: string) => (name.startsWith('plan.') ? { feature: 'planning', builds: ['linux-arm64', 'linux-x64'] } : undefined)
  const e = createRegistry([], { lacking, languages: [] }).unknown('plan.decompose')
  assert.is(e.code, 'UNKNOWN_ACTION')
  assert.match(e.message, /lacks the 'planning' feature/)
  assert.is(e.hint, 'use a tea build with the planning feature: linux-arm64 or linux-x64')
})

test('34-2 language: and settings.run_language take javascript or a language of the feature list, and name them otherwise', () => {
  const wrong = load('name: x\nsettings: { run_language: cobol }\nnodes:\n  - name: a\n    language: ruby\n    run: return 1\n').problems
  assert.equal(
    wrong.map((p) => [p.code, p.where.line, p.message]),
    [
      ['AGENT_INVALID', 2, 'must be javascript, prolog, lua or python'],
      ['AGENT_INVALID', 5, 'must be javascript, prolog, lua or python'],
    ],
  )
  assert.equal(load('name: x\nnodes:\n  - name: a\n    language: lua\n    run: return 1\n').problems, [])
})

test('a node needs exactly one of uses: and run:', () => {
  assert.equal(codes('name: x\nnodes:\n  - name: a\n    goto: __end__\n'), ['3:5 AGENT_INVALID'])
  assert.equal(codes('name: x\nnodes:\n  - name: a\n    run: return 1\n    uses: json.parse\n'), ['3:5 AGENT_INVALID'])
})

test('run: code with a syntax error is reported at load', () => {
  assert.equal(codes('name: x\nnodes:\n  - name: a\n    run: "return {"\n'), ['4:10 CODE_ERROR'])
})

test('settings.allow_inline_code: false forbids run: nodes', () => {
  assert.equal(codes('name: x\nsettings: { allow_inline_code: false }\nnodes:\n  - name: a\n    run: return 1\n'), [
    '5:10 INLINE_CODE_FORBIDDEN',
  ])
})

test('edges, fan_in, fallback and interrupt lists must name nodes', () => {
  const got = codes(`name: x
config: { interrupt_before: [ghost] }
nodes:
  - name: a
    run: "return {}"
    on_error: { fallback: nope }
  - name: b
    run: "return {}"
edges:
  - { from: a, to: [b, zz], fan_in: b }
  - { from: b, to: [a] }
`)
  assert.equal(got, ['2:30 UNKNOWN_NODE', '6:27 UNKNOWN_NODE', '10:24 UNKNOWN_NODE', '11:5 AGENT_INVALID'])
})

test('templated parameters are not type-checked before rendering, static ones are', () => {
  assert.equal(codes('name: x\nnodes:\n  - name: a\n    uses: json.parse\n    with: { text: "{{ state.t }}" }\n'), [])
  assert.equal(codes('name: x\nnodes:\n  - name: a\n    uses: json.parse\n    with: {}\n'), ['5:11 INVALID_PARAMS'])
})

test('a goto condition with bad syntax is reported', () => {
  assert.equal(
    codes('name: x\nnodes:\n  - name: a\n    run: return {}\n    goto:\n      - if: "state.x =="\n        to: a\n      - to: __end__\n'),
    ['6:13 TEMPLATE_SYNTAX'],
  )
})

test('a top level that is not a mapping is one clear problem', () => {
  assert.equal(codes('- just\n- a list\n'), ['1:1 AGENT_INVALID'])
})

test('a node with both goto and a parallel edge is refused: the fan-out would never run', () => {
  const got = codes(
    'name: x\nnodes:\n  - name: a\n    run: return 1\n    goto: b\n  - name: b\n    run: return 1\n  - name: c\n    run: return 1\nedges:\n  - { from: a, to: [b, c], fan_in: c }\n',
  )
  assert.equal(got, ['11:5 AGENT_INVALID'])
})

test('a problem inside a node is placed at its line, node and field; the text is composed from that once', () => {
  const { problems } = load(
    'name: x\nnodes:\n  - name: a\n    uses: llm.cal\n  - name: b\n    uses: json.parse\n    with: { text: "{{ state.x " }\n',
  )
  assert.equal(
    problems.map((p) => [p.code, p.where]),
    [
      ['UNKNOWN_ACTION', { line: 4, col: 11, node: 'a' }],
      ['TEMPLATE_SYNTAX', { line: 7, col: 19, node: 'b', field: 'with.text', template: '{{ state.x ' }],
    ],
  )
  assert.is(
    problems[0]!.message,
    "unknown action 'llm.cal' (did you mean 'llm.call', 'llm.chat', 'llm.tools'?)",
    'the message does not name the node',
  )
  assert.is(
    formatProblem('a.yaml', problems[0]!),
    "a.yaml:4:11: UNKNOWN_ACTION node 'a': unknown action 'llm.cal' (did you mean 'llm.call', 'llm.chat', 'llm.tools'?)",
  )
  const e = invalidAgent('a.yaml', problems)
  assert.equal(e.where, { file: 'a.yaml' })
  assert.equal(
    e.issues?.map((i) => i.where?.file),
    ['a.yaml', 'a.yaml'],
  )
  assert.match(
    errorMessage(e),
    /^a\.yaml: 2 problems:\n {2}a\.yaml:4:11: UNKNOWN_ACTION node 'a': unknown action 'llm\.cal'.*\n {2}a\.yaml:7:19: TEMPLATE_SYNTAX node 'b', with\.text: /,
  )
})

test('INVALID_PARAMS at load names the parameter as the field of its node', () => {
  const { problems } = load('name: x\nnodes:\n  - name: a\n    uses: json.parse\n    with: { text: 3 }\n')
  assert.equal(
    problems.map((p) => [p.code, p.where.node, p.where.field]),
    [['INVALID_PARAMS', 'a', 'with.text']],
  )
  assert.match(formatProblem('a.yaml', problems[0]!), /^a\.yaml:5:\d+: INVALID_PARAMS node 'a', with\.text: Invalid type/)
})

test.run()
