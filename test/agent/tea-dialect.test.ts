/**
 * Issue 10, "loud where we differ": a TEA feature tea lacks is named as such (TEA_UNSUPPORTED, from the table in
 * src/agent/tea-dialect.ts), every unknown key of a mapping is reported, and suggestions come only from the keys
 * valid at that place.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { loadAgentText } from '../../src/agent/load.ts'
import { errorMessage } from '../../src/core/errors.ts'
import { teaAction, teaActions, teaKey, teaKeys } from '../../src/agent/tea-dialect.ts'
import { buildRegistry } from '../../src/features.ts'
import { startRun } from '../../src/engine/lifecycle.ts'
import { createLlmClient } from '../../src/llm/client.ts'
import { createMemoryStore } from '../../src/store/memory-store.ts'

const problems = (yaml: string) =>
  loadAgentText(yaml, '/tmp/tea.yaml', buildRegistry()).problems.map((p) => `${p.where.line}:${p.where.col} ${p.code} ${p.message}`)
const warnings = (yaml: string) =>
  loadAgentText(yaml, '/tmp/tea.yaml', buildRegistry()).warnings.map((p) => `${p.where.line}:${p.where.col} ${p.code} ${p.message}`)

test('every unknown key of a mapping is reported, each at its place, suggestions only from keys valid there', () => {
  assert.equal(problems('name: x\nsetings: 1\nfoo: 2\nnodes:\n  - name: a\n    run: "return {}"\n    colour: red\n    stpes: 3\n'), [
    "2:1 UNKNOWN_KEY unknown key 'setings' (did you mean 'settings'?)",
    "3:1 UNKNOWN_KEY unknown key 'foo'",
    "7:5 UNKNOWN_KEY unknown key 'nodes.0.colour'",
    "8:5 UNKNOWN_KEY unknown key 'nodes.0.stpes'",
  ])
})

test("a TEA key tea lacks is a warning naming it as TEA's, never suggested as itself; the file loads", () => {
  const yaml = `name: x
settings:
  a2a: { enabled: true }
  opik: {}
nodes:
  - name: a
    run: "return {}"
    params: {}
`
  assert.equal(problems(yaml), [])
  assert.equal(warnings(yaml), [
    "3:3 TEA_UNSUPPORTED 'settings.a2a' is a TEA feature that tea does not provide: TEA's agent-to-agent messaging; tea agents coordinate through AOF/1",
    "4:3 TEA_UNSUPPORTED 'settings.opik' is a TEA feature that tea does not provide: Opik tracing (a cloud service)",
    "8:5 TEA_UNSUPPORTED 'nodes.0.params' is not read by TEA's runtime either; tea sets it aside: neither TEA runtime reads it (yaml_nodes.py gives the action with:, and the Rust runtime's node has with: only), so the action gets no parameters from it; write with:",
  ])
})

test('a TEA node kind is named by its key, not reported as a node without uses:/run:', () => {
  const got = warnings('name: x\nnodes:\n  - name: fan\n    type: dynamic_parallel\n    items: [1]\n    subgraph: ./other.yaml\n')
  assert.ok(
    got.every((p) => p.includes('TEA_UNSUPPORTED')),
    got.join('\n'),
  )
  assert.ok(got.some((p) => p.includes("'nodes.0.type: dynamic_parallel'")))
  assert.not.ok(got.some((p) => p.includes("needs 'uses:'")))
})

test("TEA actions tea lacks are TEA_UNSUPPORTED warnings naming them; state.set is not 'did you mean http.get'", () => {
  const got = warnings(
    'name: x\nnodes:\n  - name: a\n    uses: state.set\n  - name: b\n    uses: reflection.evaluate\n  - name: c\n    uses: rag.llamaindex.query\n',
  )
  assert.equal(got, [
    "4:11 TEA_UNSUPPORTED action 'state.set' is a TEA feature that tea does not provide: neither TEA runtime has this action (TEA fails with Unknown action); set state with output: or a run: node",
    "6:11 TEA_UNSUPPORTED action 'reflection.evaluate' is a TEA feature that tea does not provide yet: reflection.evaluate and reflection.correct outside a loop",
    "8:11 TEA_UNSUPPORTED action 'rag.llamaindex.query' is a TEA feature that tea does not provide: LlamaIndex (a Python library)",
  ])
})

test('a node that needs a TEA feature tea lacks fails when the run reaches it, with TEA_UNSUPPORTED naming it', async () => {
  const { spec, problems, warnings } = loadAgentText(
    'name: x\nnodes:\n  - name: first\n    run: "return { seen: 1 }"\n  - name: ask\n    uses: reason.dspy.cot\n    with: { q: "{{ state.missing }}" }\n  - name: fan\n    type: dynamic_parallel\n    items: [1]\n    subgraph: ./other.yaml\n',
    '/tmp/tea.yaml',
    buildRegistry(),
  )
  assert.equal(problems, [])
  assert.equal(
    warnings.map((w) => w.message),
    [
      "action 'reason.dspy.cot' is a TEA feature that tea does not provide: DSPy (a Python library)",
      "'nodes.2.type: dynamic_parallel' is a TEA feature that tea does not provide yet: dynamic_parallel with a subgraph: tea does not take: a URL, a path out of the agent's folder or a missing file, or a sub-agent that routes (conditions, goto, parallel edges) or has node kinds (with action:, steps: or any other subgraph: it runs as flow.map)",
    ],
  )
  const llm = createLlmClient({ env: {} })
  const r = await startRun(spec!, { store: createMemoryStore(), registry: buildRegistry(), llm }, { runId: 'r1' })
  await llm.close()
  assert.is(r.status, 'failed')
  assert.is(r.error?.code, 'TEA_UNSUPPORTED')
  assert.equal(r.error?.where?.node, 'ask')
  assert.match(r.error!.message, "'reason.dspy.cot' is a TEA feature")
  assert.is(r.state.seen, 1)
})

test('10 settings.llm.backend: local is the GGUF model in the process: without a file named, the call fails saying where to name one (issue 30)', async () => {
  const yaml = (model: string) =>
    `name: hw\nsettings:\n  llm:\n    backend: local\n${model}nodes:\n  - name: greet\n    uses: llm.chat\n    with:\n      messages: [{ role: user, content: hi }]\n`
  const { spec, warnings } = loadAgentText(yaml(''), '/tmp/tea.yaml', buildRegistry())
  assert.equal(warnings, [], 'backend: local is no longer set aside')
  assert.is(spec!.settings.llm.provider, 'local')
  assert.is(spec!.settings.llm.model_dir, '/tmp')
  const llm = createLlmClient({ env: {}, defaults: spec!.settings.llm })
  const r = await startRun(spec!, { store: createMemoryStore(), registry: buildRegistry(), llm }, { runId: 'r1' })
  await llm.close()
  assert.is(r.error?.code, 'GGUF_NOT_FOUND')
  assert.match(errorMessage(r.error), "node 'greet' (llm.chat): provider: local names no GGUF model file")
  assert.match(String(r.error?.hint), 'model_path')
  const pathed = loadAgentText(yaml('    model_path: models/m.gguf\n    n_threads: 2\n'), '/tmp/a/tea.yaml', buildRegistry()).spec!
  const llm2 = createLlmClient({ env: {}, defaults: pathed.settings.llm })
  const r2 = await startRun(pathed, { store: createMemoryStore(), registry: buildRegistry(), llm: llm2 }, { runId: 'r2' })
  assert.is(r2.error?.code, 'GGUF_NOT_FOUND')
  assert.match(r2.error!.message, 'the GGUF model /tmp/a/models/m.gguf does not exist', 'model_path is relative to the agent file')
  assert.is(pathed.settings.llm.threads, 2, "TEA's n_threads is threads")
  const named = loadAgentText(yaml('    model: ollama:qwen2.5:1.5b\n'), '/tmp/tea.yaml', buildRegistry()).spec!
  assert.is(named.settings.llm.provider, undefined, 'a model beside it is used')
})

test("keys TEA's runtime does not read either are warnings and set aside; the nodes run as TEA runs them", async () => {
  const yaml = `name: x
settings:
  memory: { api_key: "\${NOT_SET_ANYWHERE_X}" }
nodes:
  - name: a
    condition: "{{ state.go }}"
    prompt: ignored
    run: "return { a: 1 }"
    output: parsed
  - name: b
    run: "return { b: state.a }"
    config: { model: x }
`
  const { spec, problems, warnings } = loadAgentText(yaml, '/tmp/tea.yaml', buildRegistry(), { env: {} })
  assert.equal(problems, [])
  assert.equal(
    warnings.map((w) => `${w.where.line} ${w.message.split(':')[0]}`),
    [
      "3 'settings.memory' is a TEA feature that tea does not provide",
      "6 'nodes.0.condition' is not read by TEA's runtime either; tea sets it aside",
      "7 'nodes.0.prompt' is not read by TEA's runtime either; tea sets it aside",
      "9 'output",
      "12 'nodes.1.config' is not read by TEA's runtime either; tea sets it aside",
    ],
  )
  const llm = createLlmClient({ env: {} })
  const r = await startRun(spec!, { store: createMemoryStore(), registry: buildRegistry(), llm }, { runId: 'r2' })
  await llm.close()
  assert.is(r.status, 'completed')
  assert.equal([r.state.a, r.state.b, r.state.parsed], [1, 1, undefined])
})

test('unknown with: keys are load errors for every action, templated or not; open-mapping actions take any key', () => {
  const got = problems(
    'name: x\nnodes:\n  - name: a\n    uses: json.parse\n    with: { text: "{}", strictt: true, extra: "{{ state.x }}" }\n',
  )
  assert.equal(got.length, 2, got.join('\n'))
  assert.match(got[0]!, "INVALID_PARAMS unknown parameter 'strictt' for json.parse (did you mean 'strict'?)")
  assert.match(got[1]!, "unknown parameter 'extra' for json.parse")
})

test('a file with two YAML documents gets a message for an agent author', () => {
  const [p] = problems('name: a\nnodes: []\n---\nname: b\n')
  assert.match(p!, 'YAML_SYNTAX the file holds more than one YAML document')
  assert.not.match(p!, 'parseAllDocuments')
})

test('the table answers by path pattern and by action family', () => {
  assert.is(teaKey(['nodes', 3, 'params'])?.feature.status, 'ignored')
  assert.is(teaKey(['nodes', 3, 'language'])?.feature.status, 'supported')
  assert.is(teaKey(['settings', 'llm', 'deployment'])?.feature.status, 'not in tea')
  assert.is(teaKey(['settings', 'llm', 'backend'])?.feature.status, 'mapped')
  assert.is(teaAction('ltm.store')?.key, 'ltm.*')
  assert.is(teaAction('reason.dspy.cot')?.key, 'reason.dspy.*')
  assert.is(teaAction('nothing.like.it'), undefined)
  assert.ok(Object.keys(teaKeys()).length > 100 && Object.keys(teaActions()).length > 30)
})

test.run()
