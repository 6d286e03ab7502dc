/**
 * Lua `run:` code reaches only what tea hands it (issue 28 item 3, security probe round 2 finding J, and what a
 * further probe found): `load` reads text only and never hands a chunk the interpreter's real globals (where `os`
 * and `io` were, and `os.execute` ended in Node's child_process); `string.dump` is gone; the strings' shared
 * metatable, `collectgarbage` and `_G` carry nothing from one run to the next on a warm engine; and a run stops
 * at its memory limit (item 6) with the engine still usable.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { LuaEngine, type LuaOutcome } from '../../src/lua/engine.ts'
import { runtimeFiles } from '../../src/sea/runtime-files.ts'

const t = suite<{ lua: LuaEngine }>('Lua sandbox')
t.before(async (c) => {
  const [loader, wasm] = runtimeFiles('lua', ['index.cjs', 'glue.wasm'], 'wasmoon/dist/glue.wasm')
  c.lua = await LuaEngine.start({ loader: loader!, wasm: wasm! })
})

const update = (o: LuaOutcome): Record<string, unknown> => {
  assert.is(o.kind, 'done', JSON.stringify(o))
  return (o as { update: Record<string, unknown> }).update
}

/** The first bytes of a Lua 5.4 binary chunk: enough for load to see it is one. */
const BYTECODE = String.raw`"\27Lua\84\0\25\147\r\n\26\n\4\8\8"`

t('J: string.dump is gone, and load refuses a binary chunk whatever mode the caller asks for', ({ lua }) => {
  const r = update(
    lua.run(
      `local f1, e1 = load(${BYTECODE}, "x", "b")
       local f2, e2 = load(${BYTECODE}, "x", "bt")
       local f3, e3 = load(${BYTECODE})
       return { dump = string.dump == nil, e1 = e1, e2 = e2, e3 = e3, f = f1 == nil and f2 == nil and f3 == nil }`,
      {},
    ),
  )
  const refused = "attempt to load a binary chunk (mode is 't')"
  assert.equal(r, { dump: true, e1: refused, e2: refused, e3: refused, f: true })
})

t("load gives a chunk the run's own globals, never the interpreter's (os, io, require, package stay out of reach)", ({ lua }) => {
  const r = update(
    lua.run(
      `local G = load("return _G")()
       return { same = G == _G, os = load("return os")() == nil, io = load("return io")() == nil,
         require = load("return require")() == nil, package = load("return package")() == nil,
         debug = load("return debug")() == nil, dofile = load("return dofile")() == nil, loadfile = load("return loadfile")() == nil,
         own = load("return state.n", "c", "t", { state = { n = 7 } })() }`,
      {},
    ),
  )
  assert.equal(r, { same: true, os: true, io: true, require: true, package: true, debug: true, dofile: true, loadfile: true, own: 7 })
  const e = lua.run('return load("return os")().execute("id > /tmp/tea-lua-pwned")', {})
  assert.ok(e.kind === 'error' && /attempt to index a nil value/.test(e.message), JSON.stringify(e))
})

t('a warm engine carries nothing between runs: globals set through load, rawset(_G) or the string metatable', ({ lua }) => {
  update(
    lua.run(
      'load("leak_a = 1")(); rawset(_G, "leak_b", 2); local ok = pcall(function() getmetatable("").__index.upper = function() return "pwned" end end); return {}',
      {},
    ),
  )
  assert.equal(update(lua.run('return { a = leak_a == nil, b = leak_b == nil, upper = ("abc"):upper(), mt = getmetatable("") }', {})), {
    a: true,
    b: true,
    upper: 'ABC',
    mt: false,
  })
})

t('collectgarbage collects, counts and steps; stopping the collector (which would outlive the run) is refused', ({ lua }) => {
  const stop = lua.run('collectgarbage("stop")', {})
  assert.equal(stop, { kind: 'error', line: 1, message: "collectgarbage('stop') is not available to run: code" })
  const gen = lua.run('collectgarbage("generational")', {})
  assert.ok(gen.kind === 'error' && /not available/.test(gen.message), JSON.stringify(gen))
  const r = update(
    lua.run(
      'collectgarbage(); collectgarbage("step"); return { running = collectgarbage("isrunning"), kb = collectgarbage("count") > 0 }',
      {},
    ),
  )
  assert.equal(r, { running: true, kb: true })
})

t('an error value whose __tostring fails is reported, not thrown out of the engine', ({ lua }) => {
  const o = lua.run('error(setmetatable({}, { __tostring = function() error("nope") end }))', {})
  assert.equal(o, { kind: 'error', message: 'an error value that cannot be shown' })
})

t('item 6: an allocation bomb stops at the memory limit; the engine stays usable and its memory is given back', ({ lua }) => {
  const bomb = "local t = {} while true do t[#t + 1] = string.rep('x', 1e7) .. #t end"
  assert.equal(lua.run(bomb, {}, 64), { kind: 'memory' })
  assert.equal(lua.run('local t = {} for i = 1, 1e9 do t[i] = i end', {}, 64), { kind: 'memory' })
  // Code that catches the memory error still cannot pass the limit, and goes on.
  const caught = `local ok = pcall(function() local t = {} while true do t[#t + 1] = string.rep('y', 1e6) .. #t end end)
    return { ok = ok, after = #string.rep('z', 10) }`
  assert.equal(update(lua.run(caught, {}, 64)), { ok: false, after: 10 })
  // Within the limit, the same engine does what it did before.
  assert.equal(update(lua.run("return { n = #string.rep('x', 1e7) }", {}, 64)), { n: 1e7 })
})

t.run()
