/**
 * Issue 29 (TEA's routing, edges, templates and keys) through the bundle, as a user runs TEA's files: `tea run`
 * and `tea validate` on small agents written as TEA's reference and its corpus files write them.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { scratch, tea } from './cli.ts'

const Tea = suite("TEA's routing, templates and keys (end to end)")

Tea(
  "yaml_templates.py DotDict: in a file with TEA's state_schema a missing key reads as none (self-correcting-code-gen.yaml's `parsed.edge_cases | tojson`)",
  async () => {
    const agent = `name: dotdict
state_schema:
  task: str
nodes:
  - name: parse
    run: |
      return { parsed: { content: 'ok' } }
  - name: show
    uses: json.parse
    with:
      text: "{}"
    output:
      line: "cases: {{ state.parsed.edge_cases | tojson }}; [{{ state.task }}]; {{ state.parsed.edge_cases | default('none given') }}"
`
    const s = scratch({ 'a.yaml': agent, 'b.yaml': agent.replace('state_schema:\n  task: str\n', '') })
    const r = await tea(['run', s.path('a.yaml'), '--data-dir', s.path('data'), '-q'])
    assert.is(r.code, 0, r.stderr)
    assert.is(JSON.parse(r.stdout).line, 'cases: null; []; none given')
    // tea's own files keep tea's contract: the same template without state_schema names the missing key.
    const strict = await tea(['run', s.path('b.yaml'), '--data-dir', s.path('data'), '-q'])
    assert.is(strict.code, 1, strict.stderr)
    assert.match(strict.stderr, "TEMPLATE_ERROR] node 'show' (json.parse), output.line: 'state.parsed.edge_cases' is undefined")
    s.cleanup()
  },
)

Tea(
  'yaml_nodes.py: dynamic_parallel items that come out none run no item (dynamic_parallel_action_mode.yaml without state.urls)',
  async () => {
    const s = scratch({
      'a.yaml': `name: fan
state_schema:
  urls: list
nodes:
  - name: fetch_all
    type: dynamic_parallel
    items: "{{ state.urls }}"
    action:
      uses: json.parse
      with:
        text: "{{ item }}"
    fan_in: count
  - name: count
    run: |
      return { n: state.parallel_results.length }
`,
    })
    const r = await tea(['run', s.path('a.yaml'), '--data-dir', s.path('data'), '-q'])
    assert.is(r.code, 0, r.stderr)
    assert.equal(JSON.parse(r.stdout).n, 0)
    s.cleanup()
  },
)

Tea(
  'a template in run: code that does not parse is a warning, and the node fails when it runs, as TEA renders run: code then (bmad-story-v6-develop.yaml)',
  async () => {
    const s = scratch({
      'a.yaml': `name: bad-template
nodes:
  - name: fine
    run: |
      return {"x": state.get("a", 1)}
  - name: banner
    goto: __end__
    run: |
      print(f"""--input '{{"arg": "{state.get('k', 'v')}"}}'""")
      return {}
`,
    })
    const v = await tea(['validate', s.path('a.yaml')])
    assert.is(v.code, 0, v.stderr)
    assert.match(v.stderr, "TEMPLATE_SYNTAX node 'banner'")
    assert.match(v.stderr, 'rendered when the node runs')
    const r = await tea(['run', s.path('a.yaml'), '--data-dir', s.path('data'), '-q'])
    assert.is(r.code, 1, r.stderr)
    assert.match(r.stderr, "[TEMPLATE_SYNTAX] node 'banner'")
    s.cleanup()
  },
)

Tea('navigation.md: output_key is output on an action node; an edge with parallel: true and fan_in fans out', async () => {
  const s = scratch({
    'a.yaml': `name: keys
nodes:
  - name: prepare
    uses: json.parse
    with:
      text: '{"n": 2}'
    output_key: parsed
  - name: left
    run: "return { left: state.parsed.data.n + 1 }"
  - name: right
    run: "return { right: state.parsed.data.n + 2 }"
  - name: combine
    run: "return { sum: state.parallel_results.map((r) => r.left ?? r.right).reduce((a, b) => a + b, 0) }"
edges:
  - from: prepare
    to: left
    parallel: true
    fan_in: combine
  - from: prepare
    to: right
    parallel: true
    fan_in: combine
  - from: left
    to: combine
  - from: right
    to: combine
  - from: combine
    to: __end__
`,
  })
  const r = await tea(['run', s.path('a.yaml'), '--data-dir', s.path('data'), '-q'])
  assert.is(r.code, 0, r.stderr)
  const out = JSON.parse(r.stdout)
  assert.equal(out.parsed, { data: { n: 2 } })
  assert.is(out.sum, 7)
  s.cleanup()
})

Tea('params: is set aside with a warning, as neither TEA runtime reads it (multi-agent/*.yaml, llm/local-*.yaml)', async () => {
  const s = scratch({
    'a.yaml': `name: params
nodes:
  - name: a
    uses: json.parse
    with:
      text: '{"ok": true}'
    params:
      text: '{"ok": false}'
`,
  })
  const r = await tea(['run', s.path('a.yaml'), '--data-dir', s.path('data'), '-q'])
  assert.is(r.code, 0, r.stderr)
  assert.match(r.stderr, "'nodes.0.params' is not read by TEA's runtime either")
  assert.equal(JSON.parse(r.stdout).data, { ok: true })
  s.cleanup()
})

Tea(
  "stategraph.py: when none of a node's conditional edges holds the run fails, as TEA's does (strict_known_bad/dead_state_key.yaml)",
  async () => {
    const s = scratch({
      'a.yaml': `name: dead-state-key
nodes:
  - name: classify
    run: "return { amount: 1 }"
  - name: branch_a
    run: "return {}"
edges:
  - from: classify
    to: branch_a
    when: "state.never_set_anywhere == 'yes'"
  - from: branch_a
    to: __end__
`,
    })
    const r = await tea(['run', s.path('a.yaml'), '--data-dir', s.path('data'), '-q'])
    assert.is(r.code, 1, r.stderr)
    assert.match(r.stderr, "NO_ROUTE] node 'classify': none of its conditional edges")
    s.cleanup()
  },
)

Tea(
  "settings.error_handling is the run-wide on_error, a node's on_error overriding it; graceful is continue (error_handling/settings.py)",
  async () => {
    const s = scratch({
      'a.yaml': `name: eh
settings:
  error_handling:
    mode: graceful
nodes:
  - name: boom
    run: "throw new Error('no')"
  - name: after
    run: "return { reached: true }"
  - name: strict
    on_error:
      mode: raise
    run: "throw new Error('stop')"
`,
    })
    const r = await tea(['run', s.path('a.yaml'), '--data-dir', s.path('data')])
    assert.is(r.code, 1, r.stderr)
    assert.match(r.stderr, '✓ after')
    assert.match(r.stderr, "[CODE_ERROR] node 'strict'")
    s.cleanup()
  },
)

Tea(
  "DotDict in templates an action renders itself (dynamic_parallel's action:, reason.*'s prompts): self-correcting-code-gen.yaml",
  async () => {
    const s = scratch({
      'a.yaml': `name: raw
state_schema:
  cfg: dict
nodes:
  - name: fan
    type: dynamic_parallel
    items: "{{ [1] }}"
    action:
      uses: json.parse
      with:
        text: "{{ state.cfg.missing | tojson }}"
    fan_in: done
  - name: done
    run: "return { got: state.parallel_results[0].state.data }"
`,
    })
    const r = await tea(['run', s.path('a.yaml'), '--data-dir', s.path('data'), '-i', '{"cfg": {}}', '-q'])
    assert.is(r.code, 0, r.stderr)
    assert.is(JSON.parse(r.stdout).got, null)
    s.cleanup()
  },
)

Tea.run()
