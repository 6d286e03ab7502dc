/**
 * TEA's Lua contract on the real engine (Lua 5.4 in WebAssembly), started once in this thread: the code is the body
 * of a function given `state`; a table it returns is the update, another value `{result = value}`, nil nothing;
 * no os, io, loadfile, dofile or debug; and nothing a run defines is seen by the next (TEA-PY-001, TEA-PY-002).
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { LuaEngine, type LuaOutcome } from '../../src/lua/engine.ts'
import { runtimeFiles } from '../../src/sea/runtime-files.ts'

const t = suite<{ lua: LuaEngine }>('Lua engine')
t.before(async (c) => {
  const [loader, wasm] = runtimeFiles('lua', ['index.cjs', 'glue.wasm'], 'wasmoon/dist/glue.wasm')
  c.lua = await LuaEngine.start({ loader: loader!, wasm: wasm! })
})

const update = (o: LuaOutcome): Record<string, unknown> => {
  if (o.kind === 'error') throw new Error(`Lua error at line ${o.line}: ${o.message}`)
  if (o.kind === 'memory') throw new Error('Lua: over the memory limit')
  return o.update
}

t('AC-1 state comes in as a table; the returned table is the update, with JSON types both ways', ({ lua }) => {
  const state = { n: 41, f: 2.5, s: 'text', b: true, list: [1, 'a', [2]], obj: { k: 'v', deep: { x: 1 } } }
  const r = update(
    lua.run(
      `return { n = state.n + 1, f = state.f * 2, len = #state.s, b = not state.b, count = #state.list,
        second = state.list[2], inner = state.list[3][1], k = state.obj.k, x = state.obj.deep.x, obj = state.obj }`,
      state,
    ),
  )
  assert.equal(r, { n: 42, f: 5, len: 4, b: false, count: 3, second: 'a', inner: 2, k: 'v', x: 1, obj: { k: 'v', deep: { x: 1 } } })
})

t('a value that is not a table becomes {result = value}; nil changes nothing; an array is a result too', ({ lua }) => {
  assert.equal(update(lua.run('return state.x * 2', { x: 21 })), { result: 42 })
  assert.equal(update(lua.run('return "ok"', {})), { result: 'ok' })
  assert.equal(update(lua.run('local y = 1', {})), {})
  assert.equal(update(lua.run('return {1, 2, 3}', {})), { result: [1, 2, 3] })
  assert.equal(update(lua.run('return { empty = {}, list = {}, n = 1.0, big = 2^53, frac = 0.1 }', {})), {
    empty: {},
    list: {},
    n: 1,
    big: 9007199254740992,
    frac: 0.1,
  })
})

t('null in the state is nil; unicode and every control character survive both ways', ({ lua }) => {
  const s = 'fünf ✓ 五 \n\t\u0001 "q" \\ 😀'
  assert.equal(update(lua.run('return { z = state.z == nil, s = state.s, n = utf8.len(state.s) }', { z: null, s })), {
    z: true,
    s,
    n: [...s].length,
  })
})

t('AC-5 the sandbox: os, io, loadfile, dofile, debug, require and package are absent', ({ lua }) => {
  const r = update(
    lua.run(
      'return { os = os == nil, io = io == nil, loadfile = loadfile == nil, dofile = dofile == nil, debug = debug == nil, require = require == nil, package = package == nil }',
      {},
    ),
  )
  assert.equal(r, { os: true, io: true, loadfile: true, dofile: true, debug: true, require: true, package: true })
  const e = lua.run('return os.execute("touch /tmp/pwned")', {})
  assert.ok(e.kind === 'error' && /attempt to index a nil value \(global 'os'\)/.test(e.message), JSON.stringify(e))
})

t('TEA-PY-002 isolation: globals and changes to library tables never reach the next run', ({ lua }) => {
  update(lua.run('counter = 41; string.shout = function(s) return s:upper() end; math.pi = 3; return {}', {}))
  assert.equal(update(lua.run('return { counter = counter == nil, shout = string.shout == nil, pi = math.pi > 3.14 }', {})), {
    counter: true,
    shout: true,
    pi: true,
  })
})

t('AC-3 errors name the line: at run time and for a syntax error', ({ lua }) => {
  assert.equal(lua.run('local a = 1\nlocal b = nil\nreturn { c = a + b }', {}), {
    kind: 'error',
    line: 3,
    message: "attempt to perform arithmetic on a nil value (local 'b')",
  })
  const syntax = lua.run('local x = \n  y +\n', {})
  assert.ok(syntax.kind === 'error' && syntax.line === 3 && /unexpected symbol|expected/.test(syntax.message), JSON.stringify(syntax))
  assert.equal(lua.run('error("boom")', {}), { kind: 'error', line: 1, message: 'boom' })
  assert.equal(lua.run('error({code = 7})', {}).kind, 'error')
})

t('hostile strings in the state are data, never code', ({ lua }) => {
  const nasty = ['"]] .. os.exit() .. [[', "'); os.exit(); --", '\\u0000', 'a\u0000b']
  assert.equal(update(lua.run('return { xs = state.xs, n = #state.xs }', { xs: nasty })), { xs: nasty, n: 4 })
})

t('a value that contains itself is an error, not a hang', ({ lua }) => {
  const o = lua.run('local t = {}; t.self = t; return t', {})
  assert.ok(o.kind === 'error' && /nested too deep/.test(o.message), JSON.stringify(o))
})

t('check compiles without running: the syntax error with its line, or none', ({ lua }) => {
  assert.is(lua.check('return { a = 1 }'), undefined)
  const bad = lua.check('local a = 1\nif a then\nreturn a')
  assert.ok(bad?.line === 3 && /expected/.test(bad.message), JSON.stringify(bad))
})

t.run()
