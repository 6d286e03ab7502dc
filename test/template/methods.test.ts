/**
 * Issue 10 item 10: the safe methods Jinja users write, the filters map and hash, and now() — a fixed list lowered
 * onto filters at parse time, never a call on an arbitrary object.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { compileCondition } from '../../src/template/index.ts'
import { render, throwsCode } from './helpers.ts'
import { run } from '../engine/harness.ts'

const scope = {
  state: { d: { a: 1, b: 2 }, s: '  Hello World  ', csv: 'a,b,,c', people: [{ name: 'Ann' }, { name: 'Bo' }], words: ['x', 'y'] },
}
const r = (src: string): unknown => render(src, scope)

test('10-10 dict methods: items, keys, values, get (with a default)', () => {
  assert.equal(r('{{ state.d.items() }}'), [
    ['a', 1],
    ['b', 2],
  ])
  assert.equal(r('{{ state.d.keys() }}'), ['a', 'b'])
  assert.equal(r('{{ state.d.values() }}'), [1, 2])
  assert.is(r("{{ state.d.get('a') }}"), 1)
  assert.is(r("{{ state.d.get('zzz', 7) }}"), 7)
  assert.is(r("{{ state.d.get('zzz') }}"), null)
  assert.is(r('{% for k, v in state.d.items() %}{{ k }}={{ v }};{% endfor %}'), 'a=1;b=2;')
})

test('10-10 string methods: strip, lower, upper, replace, split, startswith, endswith', () => {
  assert.is(r('{{ state.s.strip() }}'), 'Hello World')
  assert.is(r('{{ state.s.strip().lower() }}'), 'hello world')
  assert.is(r('{{ state.s.upper().strip() }}'), 'HELLO WORLD')
  assert.is(r("{{ state.s.replace('World', 'Pi').strip() }}"), 'Hello Pi')
  assert.equal(r("{{ state.csv.split(',') }}"), ['a', 'b', '', 'c'])
  assert.equal(r('{{ state.s.split() }}'), ['Hello', 'World'])
  assert.equal(r("{{ state.csv.split(',', 1) }}"), ['a', 'b,,c'])
  assert.is(r("{{ state.s.strip().startswith('Hell') }}"), true)
  assert.is(r("{{ state.s.strip().endswith('x') }}"), false)
})

test('10-10 map(attribute=…) and map(filter), hash', () => {
  assert.is(r("{{ state.people | map(attribute='name') | join(', ') }}"), 'Ann, Bo')
  assert.equal(r("{{ state.words | map('upper') }}"), ['X', 'Y'])
  assert.is(r('{{ "abc" | hash }}'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  assert.is((r("{{ state.d | hash('md5') }}") as string).length, 32)
  throwsCode(() => r("{{ 'x' | hash('crc') }}"), 'TEMPLATE_ERROR')
})

test('10-10 now(), .isoformat() and .strftime()', () => {
  const t0 = Date.now()
  const iso = r('{{ now() }}') as string
  assert.ok(Math.abs(Date.parse(iso) - t0) < 5000, iso)
  assert.is(String(r('{{ now().isoformat() }}')).slice(0, 4), iso.slice(0, 4))
  assert.match(r("{{ now().strftime('%Y-%m-%d %H:%M:%S') }}") as string, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/)
})

test('10-10 get() in a condition, as TEA agents write it: a missing key is the default, and false', () => {
  assert.is(compileCondition("state.get('negotiation_complete', False) == True")({ state: {} }), false)
  assert.is(compileCondition("state.get('route_to_turn')")({ state: { route_to_turn: 1 } }), true)
})

test('10-10 anything else is still not callable: other methods, functions, calls on values', () => {
  for (const src of [
    '{{ state.s.format(1) }}',
    '{{ range(3) }}',
    '{{ state.d.__class__() }}',
    '{{ (state.s)() }}',
    '{{ state.s | now }}',
  ]) {
    throwsCode(() => r(src), 'TEMPLATE_SYNTAX')
  }
})

test('10-10 settings is a template root: {{ settings.llm.model }}, in with:, output: and goto', async () => {
  const ran = await run(`name: s
settings:
  llm: { model: "ollama:qwen2.5:1.5b" }
nodes:
  - name: a
    uses: test.echo
    with: { m: "{{ settings.llm.model }}" }
    output: { model: "{{ result.m }}", steps: "{{ settings.max_steps }}" }
    goto:
      - if: "settings.llm.model.startswith('ollama:')"
        to: b
      - to: __end__
  - name: b
    run: "return { went: 'b' }"
`)
  assert.is(ran.status, 'completed', JSON.stringify(ran.error))
  assert.equal([ran.state.model, ran.state.steps, ran.state.went], ['ollama:qwen2.5:1.5b', 1000, 'b'])
})

test.run()
