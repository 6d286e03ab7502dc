/**
 * Malformed agent files: mutate valid agents (delete, duplicate, swap and corrupt characters and lines) and check
 * that loading never throws and reports every problem with a code and a position. SPEC §4 "bad input".
 */

import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { loadAgentText } from '../../src/agent/load.ts'
import { testRegistry } from '../engine/harness.ts'
import { rng } from '../support/rng.ts'

const SEEDS = [
  `name: a
settings: { llm: { model: "ollama:x", timeout: 5 }, max_steps: 50 }
initial_state: { n: 0, items: [1, 2] }
nodes:
  - name: first
    uses: llm.call
    with: { prompt: "Hi {{ state.n }} {% if state.items %}{{ state.items | join(', ') }}{% endif %}" }
    output: { reply: "{{ result.content }}" }
    goto:
      - if: "state.n > 2 and result.ok"
        to: second
      - to: __end__
  - name: second
    run: |
      return { n: state.n + 1 }
    on_error: { mode: retry, max_retries: 2, fallback: first }
edges:
  - { from: second, to: [first, second], fan_in: first }
config: { interrupt_before: [second] }
`,
  `name: b
nodes:
  - name: p
    uses: json.parse
    with: { text: "{{ state.raw }}", strict: false }
    interrupt: after
    timeout: 3
`,
]

const JUNK = [
  '{',
  '}',
  '[',
  ']',
  ':',
  '- ',
  '{{',
  '}}',
  '{%',
  '%}',
  '"',
  "'",
  '\n',
  '  ',
  '\t',
  '#',
  '&a',
  '*a',
  '!!binary',
  '|',
  '>',
  '__end__',
  'null',
  '0x',
  '…',
  '\u0000',
]

function mutate(text: string, r: () => number): string {
  let t = text
  const n = 1 + Math.floor(r() * 4)
  for (let i = 0; i < n; i++) {
    const at = Math.floor(r() * t.length)
    const op = Math.floor(r() * 5)
    if (op === 0) t = t.slice(0, at) + t.slice(at + 1 + Math.floor(r() * 8))
    else if (op === 1) t = t.slice(0, at) + JUNK[Math.floor(r() * JUNK.length)] + t.slice(at)
    else if (op === 2) {
      const lines = t.split('\n')
      const a = Math.floor(r() * lines.length)
      lines.splice(a, 0, lines[Math.floor(r() * lines.length)]!)
      t = lines.join('\n')
    } else if (op === 3) {
      const lines = t.split('\n')
      lines.splice(Math.floor(r() * lines.length), 1)
      t = lines.join('\n')
    } else t = t.slice(0, at)
  }
  return t
}

test('5,000 mutated agent files: no crash, every problem coded and placed', () => {
  const registry = testRegistry()
  const r = rng(42)
  let invalid = 0
  for (let i = 0; i < 5000; i++) {
    const text = mutate(SEEDS[i % SEEDS.length]!, r)
    let result
    try {
      result = loadAgentText(text, '/tmp/fuzz.yaml', registry)
    } catch (e) {
      assert.unreachable(`case ${i} threw ${(e as Error).stack}\n--- input ---\n${text}`)
      return
    }
    if (result.problems.length) invalid++
    for (const p of result.problems) {
      assert.ok(/^[A-Z_]+$/.test(p.code), `case ${i}: uncoded problem ${JSON.stringify(p)}`)
      assert.ok(p.where.line >= 1 && p.where.col >= 1, `case ${i}: no position ${JSON.stringify(p)}`)
      assert.ok(p.message.length > 0)
    }
    assert.ok(result.spec !== undefined || result.problems.length > 0, `case ${i}: neither a spec nor a problem`)
  }
  assert.ok(invalid > 2500, `the mutations should break most files (${invalid} of 5000 invalid)`)
})

test.run()
