/**
 * Issue 29 item 3 (keys): every key TEA's YAML reference documents is known to tea — built, or named in
 * teaKeys() with its status — so `tea validate` never calls one an unknown key. The list was taken from the YAML
 * examples of TEA's reference (docs/shared/YAML_REFERENCE.md and yaml-reference/{nodes,navigation,templates,
 * streams,advanced-runtimes}.md at the corpus commit); each key is placed in a small agent as the reference
 * places it and loaded by tea's loader.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { stringify } from 'yaml'
import { loadAgentText } from '../../src/agent/load.ts'
import { buildRegistry } from '../../src/features.ts'

/** Key path (`*` a list item) → where TEA's reference documents it. */
const REFERENCE_KEYS: Record<string, string> = {
  name: 'YAML_REFERENCE.md',
  description: 'YAML_REFERENCE.md',
  variables: 'YAML_REFERENCE.md',
  imports: 'YAML_REFERENCE.md',
  state_schema: 'YAML_REFERENCE.md',
  input_schema: 'YAML_REFERENCE.md',
  endpoint: 'YAML_REFERENCE.md',
  extraction_schema: 'YAML_REFERENCE.md',
  validation_constraints: 'YAML_REFERENCE.md',
  semantic_probes: 'YAML_REFERENCE.md',
  nodes: 'nodes.md',
  edges: 'navigation.md',
  config: 'YAML_REFERENCE.md',
  'config.checkpoint': 'YAML_REFERENCE.md',
  'config.checkpoint_dir': 'YAML_REFERENCE.md',
  'config.interrupt_after': 'YAML_REFERENCE.md',
  'config.interrupt_before': 'YAML_REFERENCE.md',
  'config.raise_exceptions': 'YAML_REFERENCE.md',
  settings: 'YAML_REFERENCE.md',
  'settings.auth': 'YAML_REFERENCE.md',
  'settings.auth.api_key': 'YAML_REFERENCE.md',
  'settings.auth.claims_mapping': 'YAML_REFERENCE.md',
  'settings.auth.firebase': 'YAML_REFERENCE.md',
  'settings.auth.inject_user': 'YAML_REFERENCE.md',
  'settings.auth.jwt': 'YAML_REFERENCE.md',
  'settings.auth.provider': 'YAML_REFERENCE.md',
  'settings.auth.required': 'YAML_REFERENCE.md',
  'settings.auth.token_header': 'YAML_REFERENCE.md',
  'settings.auth.user_state_key': 'YAML_REFERENCE.md',
  'settings.auto_trace': 'YAML_REFERENCE.md',
  'settings.trace_exporter': 'YAML_REFERENCE.md',
  'settings.trace_file': 'YAML_REFERENCE.md',
  'settings.llm': 'YAML_REFERENCE.md',
  'settings.llm.api_base': 'YAML_REFERENCE.md',
  'settings.llm.api_key': 'YAML_REFERENCE.md',
  'settings.llm.backend': 'YAML_REFERENCE.md',
  'settings.llm.model_path': 'YAML_REFERENCE.md',
  'settings.llm.n_ctx': 'YAML_REFERENCE.md',
  'settings.llm.n_gpu_layers': 'YAML_REFERENCE.md',
  'settings.llm.shell_providers': 'YAML_REFERENCE.md',
  'settings.ltm': 'YAML_REFERENCE.md',
  'settings.ltm.backend': 'YAML_REFERENCE.md',
  'settings.ltm.catalog': 'YAML_REFERENCE.md',
  'settings.ltm.path': 'YAML_REFERENCE.md',
  'settings.ltm.storage': 'YAML_REFERENCE.md',
  'settings.model': 'YAML_REFERENCE.md',
  'settings.temperature': 'YAML_REFERENCE.md',
  'settings.parallel': 'streams.md',
  'settings.parallel.max_workers': 'YAML_REFERENCE.md',
  'settings.parallel.remote': 'YAML_REFERENCE.md',
  'settings.parallel.strategy': 'streams.md',
  'settings.parallel.streams': 'streams.md',
  'settings.parallel.streams.enabled': 'streams.md',
  'settings.parallel.streams.buffer_size': 'streams.md',
  'settings.parallel.streams.timeout': 'streams.md',
  'nodes.*.name': 'nodes.md',
  'nodes.*.uses': 'nodes.md',
  'nodes.*.action': 'nodes.md',
  'nodes.*.with': 'nodes.md',
  'nodes.*.params': 'YAML_REFERENCE.md',
  'nodes.*.output': 'nodes.md',
  'nodes.*.run': 'nodes.md',
  'nodes.*.run.type': 'advanced-runtimes.md',
  'nodes.*.run.code': 'advanced-runtimes.md',
  'nodes.*.run.value': 'nodes.md',
  'nodes.*.run.output_key': 'nodes.md',
  'nodes.*.script': 'nodes.md',
  'nodes.*.language': 'advanced-runtimes.md',
  'nodes.*.goto': 'navigation.md',
  'nodes.*.goto.*.if': 'navigation.md',
  'nodes.*.goto.*.to': 'navigation.md',
  'nodes.*.steps': 'nodes.md',
  'nodes.*.steps.*.name': 'nodes.md',
  'nodes.*.steps.*.run': 'nodes.md',
  'nodes.*.steps.*.uses': 'nodes.md',
  'nodes.*.steps.*.with': 'nodes.md',
  'nodes.*.steps.*.output': 'nodes.md',
  'nodes.*.type': 'nodes.md',
  'nodes.*.condition': 'nodes.md',
  'nodes.*.max_iterations': 'nodes.md',
  'nodes.*.body': 'nodes.md',
  'nodes.*.body.*.name': 'nodes.md',
  'nodes.*.body.*.run': 'nodes.md',
  'nodes.*.body.*.uses': 'nodes.md',
  'nodes.*.body.*.with': 'nodes.md',
  'nodes.*.body.*.output': 'nodes.md',
  'nodes.*.items': 'nodes.md',
  'nodes.*.item_var': 'nodes.md',
  'nodes.*.index_var': 'nodes.md',
  'nodes.*.max_concurrency': 'nodes.md',
  'nodes.*.fail_fast': 'nodes.md',
  'nodes.*.fan_in': 'nodes.md',
  'nodes.*.action.uses': 'nodes.md',
  'nodes.*.action.with': 'nodes.md',
  'nodes.*.action.output': 'nodes.md',
  'nodes.*.subgraph': 'nodes.md',
  'nodes.*.input': 'nodes.md',
  'nodes.*.streams': 'streams.md',
  'nodes.*.streams.stdin': 'streams.md',
  'nodes.*.streams.stdout': 'streams.md',
  'nodes.*.streams.stderr': 'streams.md',
  'nodes.*.interrupt_before': 'streams.md',
  'nodes.*.__delete__': 'YAML_REFERENCE.md',
  'edges.*.from': 'navigation.md',
  'edges.*.to': 'navigation.md',
  'edges.*.when': 'navigation.md',
  'edges.*.condition': 'navigation.md',
  'edges.*.type': 'navigation.md',
  'edges.*.fan_in': 'navigation.md',
  'edges.*.parallel': 'navigation.md',
  'edges.*.parallel_strategy': 'YAML_REFERENCE.md',
  'edges.*.stream_mode': 'streams.md',
  'edges.*.__delete__': 'YAML_REFERENCE.md',
}

/** The node a `nodes.*.…` key sits on in TEA's reference: its kind decides which keys go with it. */
function nodeFor(key: string): Record<string, unknown> {
  const plain = { name: 'a', uses: 'json.parse', with: { text: '{}' } }
  const [head] = key.split('.')
  if (['items', 'item_var', 'index_var', 'max_concurrency', 'fail_fast', 'action', 'fan_in'].includes(head!))
    return {
      name: 'a',
      type: 'dynamic_parallel',
      items: '{{ [1, 2] }}',
      action: { uses: 'json.parse', with: { text: '{}' }, output: 'r' },
      fan_in: 'b',
    }
  if (['subgraph', 'input'].includes(head!))
    return { name: 'a', type: 'dynamic_parallel', items: '{{ [1] }}', subgraph: './other.yaml', input: { x: '{{ item }}' } }
  if (['condition', 'max_iterations', 'body'].includes(head!))
    return { name: 'a', type: 'while_loop', condition: 'state.n < 2', max_iterations: 3, body: [{ name: 's', run: 'return {}' }] }
  if (head === 'steps') return { name: 'a', steps: [{ name: 's', run: 'return {}' }] }
  if (key === 'run.value' || key === 'run.output_key') return { name: 'a', run: { type: 'expression', value: '1 + 1', output_key: 'x' } }
  if (head === 'run') return { name: 'a', run: { type: 'lua', code: 'return {}' } }
  if (head === 'script' || head === 'language') return { name: 'a', language: 'lua', script: 'return {}' }
  if (head === 'goto') return { ...plain, goto: [{ if: 'state.x', to: 'b' }, { to: '__end__' }] }
  return plain
}

/** A value for `key` as the reference writes one; a mapping where the reference nests keys under it. */
function valueFor(path: string[]): unknown {
  const last = path.at(-1)!
  const values: Record<string, unknown> = {
    streams: { stdout: 'pipe' },
    interrupt_before: true,
    __delete__: true,
    parallel: true,
    type: 'parallel',
    fan_in: 'b',
    parallel_strategy: 'thread',
    stream_mode: 'broadcast',
    when: 'state.x',
    condition: 'state.x',
  }
  return values[last] ?? 'x'
}

/** A small agent holding `key` where TEA's reference puts it. */
function agentWith(key: string): Record<string, unknown> {
  const agent: Record<string, unknown> = {
    name: 'keys',
    nodes: [
      { name: 'a', run: 'return {}' },
      { name: 'b', run: 'return {}' },
    ],
  }
  const path = key.split('.')
  if (path[0] === 'nodes' && path.length > 2) {
    const rest = path.slice(2).join('.')
    const node = nodeFor(rest)
    if (path.length === 3 && !(path[2]! in node)) node[path[2]!] = valueFor(path)
    if (path.length === 4 && path[2] === 'streams') node.streams = { [path[3]!]: 'pipe' }
    ;(agent.nodes as unknown[])[0] = node
  } else if (path[0] === 'edges' && path.length > 2) {
    const edge: Record<string, unknown> = { from: 'a', to: 'b' }
    if (!(path[2]! in edge)) edge[path[2]!] = valueFor(path)
    if (path[2] === 'type' || path[2] === 'parallel') edge.fan_in = 'b'
    agent.edges = [edge]
  } else if (path.length === 1) {
    if (!(key in agent))
      agent[key] = key === 'edges' ? [{ from: 'a', to: 'b' }] : key === 'settings' || key === 'config' ? {} : { x: 'str' }
  } else {
    // settings.x, settings.x.y, config.x: nested mappings.
    let at = agent
    for (const p of path.slice(0, -1)) at = (at[p] ??= {}) as Record<string, unknown>
    at[path.at(-1)!] = path[0] === 'config' && path[1]?.startsWith('interrupt') ? ['a'] : 'x'
  }
  return agent
}

test('every key of TEA yaml reference (YAML_REFERENCE.md, nodes.md, navigation.md, streams.md, advanced-runtimes.md) is known: no UNKNOWN_KEY', () => {
  const registry = buildRegistry()
  const unknown: string[] = []
  for (const [key, doc] of Object.entries(REFERENCE_KEYS)) {
    const { problems, warnings } = loadAgentText(stringify(agentWith(key)), '/tmp/keys.yaml', registry)
    for (const p of [...problems, ...warnings]) if (p.code === 'UNKNOWN_KEY') unknown.push(`${key} (${doc}): ${p.message}`)
  }
  assert.equal(unknown, [])
})

test('the check can fail: a key TEA does not document is reported unknown', () => {
  const { problems } = loadAgentText(stringify({ ...agentWith('name'), navigation: 'x' }), '/tmp/keys.yaml', buildRegistry())
  assert.ok(
    problems.some((p) => p.code === 'UNKNOWN_KEY' && p.message.includes("'navigation'")),
    JSON.stringify(problems),
  )
})

test.run()
