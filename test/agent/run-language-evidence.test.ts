/**
 * Issue 29: a `run:` body that compiles as JavaScript but can only fail as JavaScript (a Python dict method called
 * on tea's state, a free True/False/None) is Python; nothing that could make the JavaScript reading succeed is
 * taken as that evidence.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { javascriptOnlyFails } from '../../src/agent/js-only-fails.ts'
import { loadAgentText } from '../../src/agent/load.ts'
import { describeLanguage, type RunLanguage } from '../../src/agent/run-language.ts'
import { testRegistry } from '../engine/harness.ts'

// The engines' actions load on first use: loaded once here, as the CLI loads those a file names.
const registry = testRegistry()
test.before(() => registry.load())

function choices(bodies: string[]): RunLanguage[] {
  const nodes = bodies.map((b, i) => `  - name: n${i}\n    run: ${JSON.stringify(b)}\n`).join('')
  const { spec, problems } = loadAgentText(`name: e\nnodes:\n${nodes}`, '/tmp/e.yaml', registry)
  assert.equal(problems, [])
  return spec!.runLanguages ?? []
}

test("29 TEA's Python that is also JavaScript is Python when JavaScript can only fail on it", () => {
  assert.is(javascriptOnlyFails('return {"result": state.get("value", 0) * 2}'), "state.get(…) is not a function on tea's state")
  assert.is(javascriptOnlyFails('return {"n": len(state.items())}'), "state.items(…) is not a function on tea's state")
  assert.is(javascriptOnlyFails('return {"ok": True}'), 'True is not defined in JavaScript')
  assert.is(javascriptOnlyFails('return {"x": None}'), 'None is not defined in JavaScript')
  const [c] = choices(['return {"result": state.get("value", 0) * 2}'])
  assert.equal([c!.language, c!.reason], ['python', 'decided'])
  assert.is(describeLanguage(c!), "python (as JavaScript it can only fail: state.get(…) is not a function on tea's state)")
})

test("29 the evidence makes the file's other ambiguous bodies Python, as a body that is not JavaScript does", () => {
  const cs = choices(['return {"a": 1}', 'return {"b": state.get("a")}'])
  assert.equal(
    cs.map((c) => [c.key, c.language, c.reason]),
    [
      ['n0', 'python', 'file'],
      ['n1', 'python', 'decided'],
    ],
  )
})

test("29 tea's own JavaScript is not taken for Python", () => {
  for (const js of [
    'return { x: state.count + 1 }',
    'return { keys: Object.keys(state) }',
    'return { v: state.values?.length }',
    'return { s: "state.get(x) True None" } // state.get( True',
    'const m = new Map(); return { v: m.get("a") }',
    'const True = 1; return { v: True }',
    'return { t: typeof None }',
    'try { return { v: state.get("a") } } catch { return { v: state.a } }',
    'const state2 = state; return { v: state2.get }',
    'return { v: ctx.True, w: { True: 1 } }',
    'return { v: state.list.map((x) => x.get) }',
    'return { r: /state.get(/.test(state.s) }',
    'return { r: `${state.get("a")}` }',
  ])
    assert.is(javascriptOnlyFails(js), undefined, js)
})

test('29 nothing in the file may make the sign succeed: a body that writes the key or the global voids it', () => {
  assert.is(javascriptOnlyFails('return {"r": state.get("a")}', ['return { get: Math.max }']), undefined)
  assert.is(javascriptOnlyFails('return {"r": state.get("a")}', ['state["get"] = 1']), undefined)
  assert.is(javascriptOnlyFails('return {"r": state.get("a")}', ['const get = Math.max; return { get }']), undefined)
  assert.is(javascriptOnlyFails('return {"r": state.get("a")}', ['return Object.fromEntries([[state.k, Math.max]])']), undefined)
  assert.is(javascriptOnlyFails('return {"r": state[key].x, "s": state.get("a")}'), undefined)
  assert.ok(
    javascriptOnlyFails('return {"r": state.get("a")}', ['return {"x": state["y"].get("z")}']),
    "another body's dict read voids nothing",
  )
  assert.is(javascriptOnlyFails('return {"r": None}', ['None = 0; return {}']), undefined)
  assert.is(javascriptOnlyFails('state = new Map(); return {"r": state.get("a")}'), undefined)
  const cs = choices(['return { get: Math.max }', 'return { r: state.get(1, 2) }'])
  assert.equal(
    cs.map((c) => c.language),
    ['javascript', 'javascript'],
  )
})

test.run()
