/**
 * Issue 31 item 6: a `run:` error names the line inside the body, with the node: for JavaScript the line a value
 * was thrown at (the innermost frame of the body, in a nested function too, in an async body too) and the line's
 * text, in the message and as `line` of the run's error event; a syntax error's line in an async body is the
 * body's, not the wrapper's. Lua, Python and Prolog name their body's line the same way.
 */

import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { scratch, tea } from './cli.ts'

const agent = (body: string, extra = ''): string =>
  `name: t\nnodes:\n  - name: calc\n${extra}    run: |\n${body
    .trim()
    .split('\n')
    .map((l) => `      ${l}`)
    .join('\n')}\n`

/** Runs `yaml` and returns its failure: the stderr line and the error event's error. */
async function failure(yaml: string): Promise<{ code: number | null; line: string; error: Record<string, any> }> {
  const s = scratch({ 'a.yaml': yaml })
  try {
    const r = await tea(['run', s.path('a.yaml'), '--data-dir', s.path('data'), '--stream'])
    const events = r.stdout
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
    const error = events.find((e) => e.type === 'error')?.error ?? {}
    return { code: r.code, line: /^tea: run \S+ failed: (.*)$/m.exec(r.stderr)?.[1] ?? r.stderr, error }
  } finally {
    s.cleanup()
  }
}

test('issue 31 item 6: a JavaScript run: error names the line of the body it was thrown at, and the node', async () => {
  const f = await failure(agent('const a = 1\nconst b = 2\nreturn { c: a + undefinedThing }'))
  assert.is(f.code, 1)
  assert.is(
    f.line,
    "[CODE_ERROR] node 'calc': run: code threw at line 3 (`return { c: a + undefinedThing }`): ReferenceError: undefinedThing is not defined",
  )
  // Details are the error's own fields in its JSON (TeaError.toJSON).
  assert.equal([f.error.language, f.error.line], ['javascript', 3])
})

test('issue 31 item 6: the line is where the throw happened: inside a nested function, in an async body, under guarded loops', async () => {
  const nested = await failure(agent("function f(x) {\n  throw new Error('bad ' + x)\n}\nreturn { c: f(1) }"))
  assert.match(nested.line, "run: code threw at line 2 (`throw new Error('bad ' + x)`): bad 1")
  const async = await failure(agent('const a = await Promise.resolve(1)\nfor (let i = 0; i < 3; i++) {}\nreturn { c: a.b.c }'))
  assert.match(
    async.line,
    "run: code threw at line 3 (`return { c: a.b.c }`): TypeError: Cannot read properties of undefined (reading 'c')",
  )
  assert.is(async.error.line, 3)
})

test('issue 31 item 6: a one-line body and a thrown non-Error say no line; a syntax error in an async body names the body line', async () => {
  const one = await failure('name: t\nnodes:\n  - name: calc\n    run: "return { c: nope }"\n')
  assert.match(one.line, "node 'calc': run: code threw: ReferenceError: nope is not defined")
  const text = await failure(agent("const a = 1\nthrow 'plain string'"))
  assert.match(text.line, "node 'calc': run: code threw: plain string")
  const s = scratch({ 'a.yaml': agent('const a = await Promise.resolve(1)\nreturn { c: a + }') })
  const syntax = await tea(['run', s.path('a.yaml'), '--data-dir', s.path('data')])
  assert.is(syntax.code, 2)
  assert.match(syntax.stderr, "CODE_ERROR node 'calc': run: code has a syntax error at line 2: Unexpected token '}'")
  s.cleanup()
})

test('issue 31 item 6: a flow.steps run: error names its line inside the step', async () => {
  const f = await failure(
    'name: t\nnodes:\n  - name: calc\n    uses: flow.steps\n    with:\n      steps:\n        - name: one\n          run: |\n            const a = 1\n            return { c: a.b.c }\n',
  )
  assert.match(f.line, "node 'calc' (flow.steps), steps[0] (one): run: code threw at line 2 (`return { c: a.b.c }`)")
})

test('issue 31 item 6: Lua, Python and Prolog run: errors name the line of their body too', async () => {
  const lua = await failure(agent('local a = 1\nlocal b = nil\nreturn { c = a + b }', '    language: lua\n'))
  assert.match(lua.line, "node 'calc' (lua.run), run: Lua, line 3: ")
  assert.equal([lua.error.language, lua.error.line], ['lua', 3])
  const python = await failure(agent('a = 1\nb = None\nreturn {"c": a + b}', '    language: python\n'))
  assert.match(
    python.line,
    "node 'calc' (python.run), run: Python, line 3: TypeError: unsupported operand type(s) for +: 'int' and 'NoneType'",
  )
  const prolog = await failure(agent('X = 1,\nB is X + ,\nreturn(c, B).', '    language: prolog\n'))
  assert.match(prolog.line, "node 'calc' (prolog.run), run: Prolog, line 2: Syntax error")
})

test.run()
