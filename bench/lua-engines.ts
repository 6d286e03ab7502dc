/**
 * Two Lua engines from npm compared on The Edge Agent (TEA)'s own Lua code (docs/lua-engines.md): wasmoon (the
 * reference Lua 5.4 interpreter in WebAssembly, the engine tea uses) and fengari (Lua 5.3 rewritten in plain
 * JavaScript).
 *
 * fengari is installed outside the repository, never into it:
 *
 *   mkdir -p /tmp/luacmp && cd /tmp/luacmp && npm init -y && npm install fengari@0.1.5
 *   npx tsx bench/lua-engines.ts             (from the repo root; LUACMP_MODULES=<dir> for another node_modules)
 *
 * Both engines get the same small Lua wrapper (WRAPPER below), not tea's glue: it runs a body as the function
 * `function(state) <body> end` in a fresh environment without os, io and debug, as TEA's contract does, and turns
 * the returned table into JSON text with sorted keys so the two engines' answers can be compared as strings. The
 * state goes in as Lua source (a table constructor) the bench writes: it controls the input, and that keeps the
 * wrapper free of a JSON decoder. What it measures, on the Lua bodies of the TEA corpus (../shared/tea-corpus: the
 * `run:` code of nodes with `language: lua`, `run: {type: lua, code}` or a `-- lua` first line):
 *
 * 1. Correctness: does each body compile; does it run, against an empty state and against a state guessed from
 *    the body (sampleState); do both engines give the same answer. Lua 5.4 features and behaviours TEA's code may
 *    touch are probed with small snippets whose Lua 5.4 answer is known, and a regular expression per feature
 *    counts the corpus bodies that use it (an estimate, not a parse).
 * 2. Start: median of 7 fresh Node processes, from loading the package to the first body's answer.
 * 3. Per call: median µs of a small TEA-style body (state in, table out as JSON text) run 1000 times in a warm
 *    engine; and a 1e6-iteration arithmetic loop, with and without a count hook armed, for raw interpreter speed.
 * 4. Time limit: whether a runaway body is stopped, by the engine's count hook on the same thread (wasmoon's
 *    functionTimeout option; a hook of our own for fengari) and by terminating the worker thread, as tea does.
 * 5. Bytes: the package directory with its dependencies, and the files a process actually loaded.
 *
 * It reads nothing from src/: tea's engine adds its own contract (src/lua/glue.ts) on top of wasmoon.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { CORPUS, corpusBodies, isObject, type Located, runIn } from './corpus-bodies.ts'
import { dirBytes, median } from './measure.ts'

const root = join(import.meta.dirname, '..')
const MODULES = process.env.LUACMP_MODULES ?? '/tmp/luacmp/node_modules'
const WASMOON_DIR = join(root, 'node_modules', 'wasmoon')
const FENGARI_DIR = join(MODULES, 'fengari')
const STARTS = 7
const CALLS = 1000
const ROUNDS = 7
/** How long a runaway body may run before it should be stopped, and how long we wait for that. */
const LIMIT_MS = 200
const WATCHDOG_MS = 3000

if (!existsSync(join(FENGARI_DIR, 'package.json'))) {
  console.error(`fengari is not in ${MODULES}. Install it outside the repository:
  mkdir -p /tmp/luacmp && cd /tmp/luacmp && npm init -y && npm install fengari@0.1.5
or point LUACMP_MODULES at a node_modules directory that has it.`)
  process.exit(1)
}
if (!existsSync(join(WASMOON_DIR, 'dist', 'glue.wasm'))) {
  console.error(`wasmoon is not in ${join(root, 'node_modules')}: run npm install in the repository first.`)
  process.exit(1)
}
if (!existsSync(join(CORPUS, 'manifest.json'))) {
  console.error(`The TEA corpus is not at ${CORPUS}.`)
  process.exit(1)
}

// ---------------------------------------------------------------------------------------------------------------
// The corpus's Lua bodies.

type Body = { code: string } & Located

const luaBodies = () =>
  corpusBodies((x) => {
    const code = runIn(x, 'lua', /^--\s*lua\b/i)
    return code === undefined ? [] : [{ code }]
  })

/** The code with comments removed and string literals emptied, so operators inside text do not count. */
const codeOnly = (code: string) =>
  code.replace(/--\[(=*)\[[\s\S]*?\]\1\]|--[^\n]*|\[(=*)\[[\s\S]*?\]\2\]|"(?:\\[\s\S]|[^"\\\n])*"|'(?:\\[\s\S]|[^'\\\n])*'/g, (m) =>
    m.startsWith('--') ? '' : '""',
  )

/**
 * A state for a body, guessed from how it reads each `state.key`, following locals assigned from it (`local r =
 * state.x`) and loop variables over it (`for _, v in ipairs(state.xs)`): a table of the fields it reads
 * (`state.key.field`, each guessed the same way); a list of three guessed elements where it is iterated, indexed
 * or measured with # (unless a string method is called on it); the number 3 where it meets arithmetic or a
 * comparison or defaults to a number; true where it is tested as a flag; nothing where it defaults to a table
 * constructor (the body's own default then applies); else the text "sample key". A regular-expression guess, not
 * a type inference: a body may still get a value it does not expect.
 */
function sampleState(code: string): Record<string, unknown> {
  const text = codeOnly(code)
  const keys = new Set([...text.matchAll(/\bstate\.(\w+)/g)].map((m) => m[1]!))
  return Object.fromEntries([...keys].map((k) => [k, guess(text, [`\\bstate\\.${k}(?!\\w)`], k, 0)]))
}

/** `exprs`: regular expressions for the places the value is read. */
function guess(text: string, exprs: string[], name: string, depth: number): unknown {
  const named = (re: string) => [...text.matchAll(new RegExp(re, 'g'))].map((m) => `(?<![\\w.])${m[1]}(?!\\w)`)
  const aliases = exprs.flatMap((e) => named(`\\blocal\\s+(\\w+)\\s*=\\s*\\(?${e}`))
  const at = `(?:${[...exprs, ...aliases].join('|')})`
  if (depth < 4) {
    const fields = new Set([...text.matchAll(new RegExp(`${at}\\.(\\w+)`, 'g'))].map((m) => m[1]!))
    if (fields.size > 0) return Object.fromEntries([...fields].map((f) => [f, guess(text, [`${at}\\.${f}(?!\\w)`], f, depth + 1)]))
    const isText = new RegExp(`${at}\\s*:\\s*\\w+\\s*\\(|\\bstring\\.\\w+\\(\\s*${at}`).test(text)
    if (!isText && new RegExp(`\\bi?pairs\\(\\s*${at}|#${at}|${at}\\s*\\[`).test(text)) {
      const items = named(`\\bfor\\s+\\w+\\s*,\\s*(\\w+)\\s+in\\s+i?pairs\\(\\s*${at}\\s*\\)`)
      const item = items.length > 0 ? guess(text, items, name, depth + 1) : 3
      return [item, item, item]
    }
  }
  const fallback = new RegExp(`${at}\\s+or\\s+(\\S+)`).exec(text)?.[1] ?? ''
  if (fallback.startsWith('{')) return undefined
  if (fallback.startsWith('"')) return `sample ${name}`
  if (/^-?[\d.]/.test(fallback) || new RegExp(`${at}\\s*([-+*/%^<>]|[=~]=\\s*-?\\d)|([-+*/%^<>]|[=~]=)\\s*${at}`).test(text)) return 3
  if (/^(true|false)\b/.test(fallback) || new RegExp(`\\bif\\s+${at}\\s+then|\\bnot\\s+${at}`).test(text)) return true
  return `sample ${name}`
}

/** A JavaScript value as a Lua expression (the bench writes the state; nothing hostile crosses here). */
function luaSource(v: unknown): string {
  if (v === null || v === undefined) return 'nil'
  if (typeof v === 'string') return `"${v.replace(/[\\"\n\r\0]/g, (c) => `\\${c.charCodeAt(0)}`)}"`
  if (typeof v === 'number' || typeof v === 'boolean') return String(v)
  if (Array.isArray(v)) return `{${v.map(luaSource).join(', ')}}`
  return `{${Object.entries(v as Record<string, unknown>)
    .map(([k, x]) => `[${luaSource(k)}] = ${luaSource(x)}`)
    .join(', ')}}`
}

const stateSource = (state: Record<string, unknown>) => `return ${luaSource(state)}`

// ---------------------------------------------------------------------------------------------------------------
// The Lua both engines run: a Lua 5.3 subset, so fengari can load it.

const WRAPPER = String.raw`
local LIBS = { 'string', 'table', 'math', 'utf8', 'coroutine' }
local BASICS = { 'assert', 'error', 'ipairs', 'next', 'pairs', 'pcall', 'print', 'rawequal', 'rawget', 'rawlen',
  'rawset', 'select', 'setmetatable', 'getmetatable', 'tonumber', 'tostring', 'type', 'xpcall', 'load',
  'collectgarbage', 'warn', '_VERSION' }

-- The same sequence on both engines: 5.3 and 5.4 have different generators, and the corpus's random calls are
-- simulations whose exact draws do not matter. Floats, because fengari's integers are 32 bits.
local function fixed_random()
  local seed = 12345.0
  return function(m, n)
    seed = (seed * 16807.0) % 2147483647.0
    local x = seed / 2147483647.0
    if m == nil then return x end
    if n == nil then m, n = 1, m end
    return m + math.floor(x * (n - m + 1))
  end
end

-- Fresh globals for one run, over copies of the library tables, without os, io, debug and package.
local function environment(fixed)
  local env = {}
  for _, name in ipairs(BASICS) do env[name] = _G[name] end
  for _, lib in ipairs(LIBS) do
    local copy = {}
    for k, v in pairs(_G[lib]) do copy[k] = v end
    env[lib] = copy
  end
  if fixed then env.math.random = fixed_random() end
  env._G = env
  return env
end

local function encode(v, depth)
  if depth > 50 then error('nested too deep', 0) end
  local kind = type(v)
  if kind == 'nil' then return 'null'
  elseif kind == 'boolean' then return tostring(v)
  elseif kind == 'number' then
    if v ~= v or v == math.huge or v == -math.huge then return 'null' end
    -- tostring keeps the subtype visible (3 against 3.0) and is each engine's own number-to-text.
    return tostring(v)
  elseif kind == 'string' then
    return '"' .. (v:gsub('[%c"\\]', function(c) return string.format('\\u%04x', c:byte()) end)) .. '"'
  elseif kind ~= 'table' then
    return '"<' .. kind .. '>"'
  end
  local n, keys = 0, {}
  for k in pairs(v) do n = n + 1; keys[n] = k end
  local list = true
  for i = 1, n do if v[i] == nil then list = false end end
  local parts = {}
  if list and n > 0 then
    for i = 1, n do parts[i] = encode(v[i], depth + 1) end
    return '[' .. table.concat(parts, ',') .. ']'
  end
  -- Sorted keys: pairs order is the engine's own and would make equal tables differ.
  for i = 1, n do keys[i] = tostring(keys[i]) end
  table.sort(keys)
  for i = 1, n do
    local k = keys[i]
    local x = v[k]
    if x == nil then x = v[tonumber(k)] end
    parts[i] = encode(k, depth + 1) .. ':' .. encode(x, depth + 1)
  end
  return '{' .. table.concat(parts, ',') .. '}'
end

-- A body's answer as text: the JSON of its table, or 'compile error: ...' / 'error: ...'.
function bench_run(code, state_source)
  local state = load(state_source, '=state', 't', {})()
  local chunk, err = load('local state = ... ' .. code, '=run', 't', environment(true))
  if not chunk then return 'compile error: ' .. err end
  local ok, result = pcall(chunk, state)
  if not ok then return 'error: ' .. tostring(result) end
  if result == nil then return '{}' end
  if type(result) ~= 'table' then result = { result = result } end
  local done, out = pcall(encode, result, 0)
  return done and out or 'error: the returned value: ' .. tostring(out)
end

function bench_check(code)
  local _, err = load('local state = ... ' .. code, '=run', 't', {})
  return err or ''
end

-- A probe snippet's value as text.
function bench_probe(code)
  local chunk, err = load(code, '=probe', 't', environment(false))
  if not chunk then return 'compile error: ' .. err end
  local ok, result = pcall(chunk)
  return ok and tostring(result) or 'error: ' .. tostring(result)
end
`

// ---------------------------------------------------------------------------------------------------------------
// The engines. Each adapter is JavaScript text run as is in this process, in fresh processes (start time) and in
// worker threads (time limit), so the three measure the same code. It expects `require` and `LIMIT` (ms, or
// undefined for no limit) in scope and defines `call(name, ...strings)`: the Lua global function's string answer.

interface EngineKind {
  name: string
  dir: string
  adapter: string
  /** Files read by path rather than required, which require.cache does not list. */
  dataFiles: string[]
}

const wasmoonJs = join(WASMOON_DIR, 'dist', 'index.js')
const wasmoonWasm = join(WASMOON_DIR, 'dist', 'glue.wasm')

const wasmoon: EngineKind = {
  name: 'wasmoon',
  dir: WASMOON_DIR,
  dataFiles: [wasmoonWasm],
  // Options as tea's src/lua/engine.ts; functionTimeout arms wasmoon's own count hook on each call from JS.
  adapter: `
const { LuaFactory } = require(${JSON.stringify(wasmoonJs)})
const lua = await new LuaFactory(${JSON.stringify(wasmoonWasm)}).createEngine({
  injectObjects: false, enableProxy: false, openStandardLibs: true, functionTimeout: LIMIT })
lua.doStringSync(${JSON.stringify(WRAPPER)})
const fns = {}
const call = (name, ...args) => (fns[name] ??= lua.global.get(name))(...args)`,
}

const fengari: EngineKind = {
  name: 'fengari',
  dir: FENGARI_DIR,
  dataFiles: [],
  // fengari has no time limit of its own: a count hook every 1000 instructions checks the clock; past the
  // deadline it fires at every instruction, so a body that catches the error with pcall is stopped all the same.
  adapter: `
const { lua, lauxlib, lualib, to_luastring } = require(${JSON.stringify(FENGARI_DIR)})
const L = lauxlib.luaL_newstate()
lualib.luaL_openlibs(L)
const fail = (what) => { const m = lua.lua_tojsstring(L, -1); lua.lua_pop(L, 1); throw new Error(what + ': ' + m) }
if (lauxlib.luaL_loadstring(L, to_luastring(${JSON.stringify(WRAPPER)})) !== lua.LUA_OK) fail('wrapper')
if (lua.lua_pcall(L, 0, 0, 0) !== lua.LUA_OK) fail('wrapper')
const call = (name, ...args) => {
  if (LIMIT !== undefined) {
    const deadline = Date.now() + LIMIT
    const hook = (T) => {
      if (Date.now() <= deadline) return
      lua.lua_sethook(T, hook, lua.LUA_MASKCOUNT, 1)
      lauxlib.luaL_error(T, to_luastring('time limit exceeded'))
    }
    lua.lua_sethook(L, hook, lua.LUA_MASKCOUNT, 1000)
  }
  lua.lua_getglobal(L, to_luastring(name))
  for (const a of args) lua.lua_pushstring(L, to_luastring(a))
  const status = lua.lua_pcall(L, args.length, 1, 0)
  if (LIMIT !== undefined) lua.lua_sethook(L, null, 0, 0)
  if (status !== lua.LUA_OK) fail(name)
  const out = lua.lua_tojsstring(L, -1)
  lua.lua_pop(L, 1)
  return out
}`,
}

const ENGINES = [wasmoon, fengari]

type Call = (name: string, ...args: string[]) => string
const AsyncFunction = (async () => {}).constructor as new (...args: string[]) => (...a: unknown[]) => Promise<Call>

/** The engine's `call` in this process. */
function start(kind: EngineKind, limit?: number): Promise<Call> {
  return new AsyncFunction('require', 'LIMIT', `${kind.adapter}\nreturn call`)(createRequire(import.meta.url), limit)
}

// ---------------------------------------------------------------------------------------------------------------
// Probes: each snippet's answer on Lua 5.4 (the reference), and the corpus bodies whose text uses the feature.

interface Probe {
  name: string
  code: string
  expect: string
  /**
   * The answer of Lua 5.3 where it differs from 5.4's (checked with the reference lua5.3 5.3.6 interpreter), so a
   * 5.3 engine giving it is doing what its version does rather than getting it wrong.
   */
  lua53?: string
  /** Matched against the body without comments and strings, or with them when `inText` (format directives). */
  uses: RegExp
  inText?: boolean
}

const PROBES: Probe[] = [
  {
    name: 'integer division `//`',
    code: "return 7 // 2 .. ' ' .. 7.0 // 2 .. ' ' .. -7 // 2",
    expect: '3 3.0 -4',
    uses: /[\w)\]]\s*\/\/\s*[\w(]/,
  },
  {
    name: 'bitwise operators',
    code: "return (5 & 3) .. ' ' .. (5 | 3) .. ' ' .. (5 ~ 3) .. ' ' .. (1 << 4) .. ' ' .. (~0)",
    expect: '1 7 6 16 -1',
    uses: /[\w)\]]\s*(&|\||<<|>>|~(?!=))\s*[\w(]|(^|[^\w)\]\s])\s*~\s*[\w(]/,
  },
  {
    name: '`goto` and labels',
    code: 'local i = 0 ::top:: i = i + 1 if i < 3 then goto top end return i',
    expect: '3',
    uses: /\bgoto\b|::\w+::/,
  },
  {
    name: 'integer and float subtypes (`/`, floor, math.type)',
    code: "return math.type(1) .. ' ' .. math.type(1.0) .. ' ' .. 3 / 2 .. ' ' .. math.type(math.floor(3.7)) .. ' ' .. math.tointeger(3.0)",
    expect: 'integer float 1.5 integer 3',
    uses: /\bmath\.(type|tointeger|floor|ceil)\b|[\w)\]]\s*\/\s*[\w(]/,
  },
  {
    name: '64-bit integers',
    code: "return math.maxinteger .. ' ' .. 2147483647 + 1 .. ' ' .. (1 << 40)",
    expect: '9223372036854775807 2147483648 1099511627776',
    uses: /\d{10,}|\bmath\.(maxinteger|mininteger)\b|\bos\.time\b/,
  },
  {
    name: 'numbers as text (tostring, `..`)',
    code: "return tostring(0.1) .. ' ' .. 1e15 .. ' ' .. 2^53 .. ' ' .. -0.0 .. ' ' .. 0.95 * 100 .. ' ' .. 1/0",
    expect: '0.1 1e+15 9.007199254741e+15 -0.0 95.0 inf',
    uses: /\btostring\(|\.\./,
  },
  {
    name: 'text as numbers (tonumber, `"10" + 1`)',
    code: `return ("10" + 1) .. ' ' .. math.type("10" + 1) .. ' ' .. ("3.0" + 1) .. ' ' .. tonumber("0x10") .. ' ' .. tonumber(" 12 ")`,
    expect: '11 integer 4.0 16 12',
    lua53: '11.0 float 4.0 16 12',
    uses: /\btonumber\(/,
  },
  {
    name: 'string.format of numbers',
    code: `return string.format('%.4f|%d|%5.1f|%g|%x|%s|%5.2f', 1/3, 3.0, 2.25, 1e20, 255, 1.5, 0.125)`,
    expect: '0.3333|3|  2.2|1e+20|ff|1.5| 0.12',
    uses: /\bstring\.format\(|:format\(/,
  },
  {
    name: "string.format('%q')",
    code: `return string.format('%q', 'a\\nb"\\0') .. ' ' .. string.format('%q', 7) .. ' ' .. string.format('%q', 0.5)`,
    expect: '"a\\\nb\\"\\0" 7 0x1p-1',
    uses: /%q/,
    inText: true,
  },
  {
    name: 'Lua patterns (match, gsub, %f, %b)',
    code: String.raw`local a = (" a b "):match("^%s*(.-)%s*$")
local b = ("THE (quick) fox"):gsub("%f[%a]%a+", string.lower)
local c = ("x(a(b)c)y"):match("%b()")
local d = ("k1=v1, k2=v2"):gsub("(%w+)=(%w+)", "%2=%1")
return a .. '|' .. b .. '|' .. c .. '|' .. d`,
    expect: 'a b|the (quick) fox|(a(b)c)|v1=k1, v2=k2',
    uses: /:(g?match|gsub|find)\(|\bstring\.(g?match|gsub|find)\(/,
  },
  {
    name: 'upper/lower and lengths of UTF-8 text',
    code: `return ("héllo"):upper() .. ' ' .. #"é" .. ' ' .. ("é"):byte(1)`,
    expect: 'HéLLO 2 195',
    uses: /:(upper|lower|len|sub)\(|\bstring\.(upper|lower|len|sub)\(|#/,
  },
  {
    name: 'utf8 library',
    code: `return utf8.char(72, 233, 8364) .. ' ' .. utf8.len("h\\u{E9}\\u{20AC}") .. ' ' .. utf8.codepoint("\\u{20AC}")`,
    expect: 'Hé€ 3 8364',
    uses: /\butf8\./,
  },
  {
    name: 'table library (sort, concat, unpack, move)',
    code: "local t = {3, 1, 2} table.sort(t) return table.concat(t, ',') .. ' ' .. select('#', table.unpack({1, nil, 3}, 1, 3)) .. ' ' .. table.concat(table.move({1, 2, 3}, 1, 3, 2, {}), ',', 2, 4)",
    expect: '1,2,3 3 1,2,3',
    uses: /\btable\.(sort|concat|unpack|move)\b/,
  },
  {
    name: 'error message naming the variable',
    code: 'local t local ok, e = pcall(function() return t.x end) return e',
    expect: "probe:1: attempt to index a nil value (upvalue 't')",
    uses: /\bx?pcall\(|\berror\(/,
  },
  {
    name: '`<const>` and `<close>` attributes (5.4)',
    code: "local x <const> = 41 local closed = false do local c <close> = setmetatable({}, { __close = function() closed = true end }) end return x + 1 .. ' ' .. tostring(closed)",
    expect: '42 true',
    lua53: "compile error: probe:1: unexpected symbol near '<'",
    uses: /<\s*(const|close)\s*>/,
  },
  {
    name: '5.4 library additions (warn, coroutine.close, math.random(0))',
    code: "return type(warn) .. ' ' .. type(coroutine.close) .. ' ' .. math.type(math.random(0))",
    expect: 'function function integer',
    lua53: "error: probe:1: bad argument #1 to 'random' (interval is empty)",
    uses: /\bwarn\(|\bcoroutine\.close\b|\bmath\.random\(\s*0\s*\)/,
  },
  {
    name: 'collectgarbage and `__gc` finalizers',
    code: 'local hit = false do setmetatable({}, { __gc = function() hit = true end }) end collectgarbage() collectgarbage() return tostring(hit)',
    expect: 'true',
    uses: /__gc\b|\bcollectgarbage\(/,
  },
]

// ---------------------------------------------------------------------------------------------------------------
// Speed and time-limit subjects.

/** A TEA-style body: reads a few state keys, returns a table with text, a number and a list. */
const SMALL = `local count = state.count or 0
local tags = {}
for i, t in ipairs(state.tags or {}) do tags[i] = string.upper(t) end
return { count = count + 1, greeting = "Hello, " .. (state.name or "world") .. "!", tags = tags }`
const SMALL_STATE = stateSource({ count: 41, name: 'tea', tags: ['a', 'b', 'c'] })
const SMALL_ANSWER = '{"count":42,"greeting":"Hello, tea!","tags":["A","B","C"]}'

/** Integer arithmetic that stays under 2^31, so fengari's 32-bit integers give the same sum. */
const LOOP = 'local s = 0 for i = 1, 1000000 do s = (s + i * 7) % 1000003 end return { s = s }'
const LOOP_ANSWER = '{"s":21}'

const RUNAWAYS = [
  { name: '`while true do end`', code: 'while true do end' },
  { name: 'a runaway that catches errors', code: 'while true do pcall(function() while true do end end) end' },
]

// ---------------------------------------------------------------------------------------------------------------
// Measuring.

/** The package directory (with any node_modules inside it) and the dependencies it declares found beside it. */
function installedBytes(packageDir: string): { bytes: number; packages: string[] } {
  const modules = join(packageDir, '..')
  const seen = new Set<string>()
  const visit = (name: string, from: string) => {
    if (existsSync(join(from, 'node_modules', name))) return // nested: counted with its parent's directory
    if (seen.has(name) || !existsSync(join(modules, name))) return
    seen.add(name)
    const pkg = JSON.parse(readFileSync(join(modules, name, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> }
    for (const dep of Object.keys(pkg.dependencies ?? {})) visit(dep, join(modules, name))
  }
  visit(packageDir.slice(modules.length + 1), modules)
  const nested = (name: string) => {
    const dir = join(modules, name, 'node_modules')
    return existsSync(dir)
      ? readdirSync(dir).flatMap((d) => (d.startsWith('@') ? readdirSync(join(dir, d)).map((s) => `${d}/${s}`) : [d]))
      : []
  }
  const names = [...seen].flatMap((n) => [n, ...nested(n)])
  return { bytes: [...seen].reduce((sum, name) => sum + dirBytes(join(modules, name)), 0), packages: names }
}

const versionOf = (dir: string) => (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version

/**
 * Runs `main` after the engine's adapter in a fresh Node process and returns what it printed as JSON. Speed is
 * measured this way too, not in this process: fengari's speed depends on what V8 has compiled so far (the loop
 * took about 65 ms in a process that had run nothing else, several times that after other Lua code), so each
 * figure gets the same history: a fresh process that has loaded the wrapper and runs only what is measured.
 */
function inChild<T>(kind: EngineKind, limit: number | undefined, main: string): T {
  const source = `
const t0 = performance.now()
const { createRequire } = await import('node:module')
const require = createRequire(${JSON.stringify(join(kind.dir, 'x.js'))})
const LIMIT = ${limit ?? 'undefined'}
${kind.adapter}
${main}`
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', source], { encoding: 'utf8' })
  try {
    return JSON.parse(r.stdout.trim().split('\n').pop() ?? '') as T
  } catch {
    throw new Error(`${kind.name}: ${r.stderr || r.stdout}`)
  }
}

/** Fresh processes: ms from loading the package to the first answer, and the files the process loaded. */
function startTimes(kind: EngineKind): { ready: number[]; files: string[] } {
  const main = `
const out = call('bench_run', ${JSON.stringify(SMALL)}, ${JSON.stringify(SMALL_STATE)})
const ready = performance.now() - t0
console.log(JSON.stringify({ ready, ok: out === ${JSON.stringify(SMALL_ANSWER)}, files: Object.keys(require.cache) }))`
  const ready: number[] = []
  let files: string[] = []
  for (let i = 0; i < STARTS; i++) {
    const m = inChild<{ ready: number; ok: boolean; files: string[] }>(kind, undefined, main)
    if (!m.ok) throw new Error(`${kind.name} start: wrong first answer`)
    ready.push(m.ready)
    files = [...m.files, ...kind.dataFiles]
  }
  return { ready, files }
}

/** Median µs per call over ROUNDS rounds of `calls` calls, after one round to warm the engine up. */
function perCall(kind: EngineKind, code: string, state: string, answer: string, calls: number, limit?: number): number {
  const main = `
const rounds = []
for (let r = 0; r <= ${ROUNDS}; r++) {
  const t = performance.now()
  for (let i = 0; i < ${calls}; i++) call('bench_run', ${JSON.stringify(code)}, ${JSON.stringify(state)})
  if (r > 0) rounds.push(((performance.now() - t) * 1000) / ${calls})
}
const ok = call('bench_run', ${JSON.stringify(code)}, ${JSON.stringify(state)}) === ${JSON.stringify(answer)}
console.log(JSON.stringify({ rounds, ok }))`
  const m = inChild<{ rounds: number[]; ok: boolean }>(kind, limit, main)
  if (!m.ok) throw new Error(`${kind.name}: wrong answer for ${code.slice(0, 40)}`)
  return median(m.rounds)
}

interface Stop {
  stopped: boolean
  /** ms from the start of the runaway to its end (hook), or from terminate() to the worker's exit. */
  ms: number
  detail: string
}

/** A runaway body in a worker thread, stopped by the engine's count hook or by terminating the worker. */
function stopRunaway(kind: EngineKind, code: string, how: 'hook' | 'terminate'): Promise<Stop> {
  const source = `
const { parentPort } = require('node:worker_threads')
;(async () => {
  const LIMIT = ${how === 'hook' ? LIMIT_MS : 'undefined'}
  ${kind.adapter}
  parentPort.postMessage({ ready: true })
  const t0 = Date.now()
  let out
  try { out = call('bench_run', ${JSON.stringify(code)}, 'return {}') } catch (e) { out = 'threw: ' + e.message }
  const ms = Date.now() - t0
  let after
  try { after = call('bench_run', 'return { x = 1 }', 'return {}') } catch (e) { after = 'threw: ' + e.message }
  parentPort.postMessage({ ms, out, usable: after === '{"x":1}' })
})()`
  return new Promise((resolve, reject) => {
    const worker = new Worker(source, { eval: true })
    let watchdog: NodeJS.Timeout | undefined
    const finish = (stop: Stop) => {
      clearTimeout(watchdog)
      void worker.terminate().then(() => resolve(stop))
    }
    worker.on('error', reject)
    worker.on('message', (m: { ready?: true; ms?: number; out?: string; usable?: boolean }) => {
      if (m.ready && how === 'terminate')
        setTimeout(() => {
          const t = performance.now()
          const exited = new Promise((ok) => worker.once('exit', ok))
          void worker.terminate()
          void exited.then(() => finish({ stopped: true, ms: performance.now() - t, detail: 'worker exited' }))
        }, LIMIT_MS)
      else if (m.ready)
        watchdog = setTimeout(
          () => finish({ stopped: false, ms: WATCHDOG_MS, detail: `still running after ${WATCHDOG_MS} ms` }),
          WATCHDOG_MS,
        )
      else
        finish({
          stopped: true,
          ms: m.ms!,
          detail: `${quiet(m.out!)}; engine ${m.usable ? 'usable' : 'not usable'} after`,
        })
    })
  })
}

const quiet = (s: string) => s.replace(/\s+/g, ' ').slice(0, 140)
const MB = (b: number) => `${(b / 1e6).toFixed(2)} MB`
const ms = (x: number) => `${x.toFixed(0)} ms`
const range = (xs: number[], f: (x: number) => string) => `${f(median(xs))} (${f(Math.min(...xs))}–${f(Math.max(...xs))})`

// ---------------------------------------------------------------------------------------------------------------
// Running.

const { bodies, unreadable } = luaBodies()
console.log(`TEA corpus: ${bodies.length} Lua bodies in ${new Set(bodies.map((b) => b.file)).size} files`)
console.log(`  (YAML not parsed: ${unreadable.join(', ')})`)
console.log(`Node ${process.version}, ${process.platform}-${process.arch}; fengari from ${MODULES}\n`)

interface Answers {
  compile: string[]
  empty: string[]
  guessed: string[]
}

interface Result {
  kind: EngineKind
  version: string
  lua: string
  answers: Answers
  probes: string[]
  ready: number[]
  files: string[]
  small: number
  loop: number
  loopHooked: number
  stops: Array<{ hook: Stop; terminate: Stop }>
  installed: { bytes: number; packages: string[] }
}

const results: Result[] = []
for (const kind of ENGINES) {
  // One engine for the whole corpus: the wrapper gives each run fresh globals, as TEA's contract does.
  const call = await start(kind)
  const answers: Answers = { compile: [], empty: [], guessed: [] }
  for (const body of bodies) {
    answers.compile.push(call('bench_check', body.code))
    answers.empty.push(call('bench_run', body.code, 'return {}'))
    answers.guessed.push(call('bench_run', body.code, stateSource(sampleState(body.code))))
  }
  const probes = PROBES.map((p) => call('bench_probe', p.code))
  const small = perCall(kind, SMALL, SMALL_STATE, SMALL_ANSWER, CALLS)
  const loop = perCall(kind, LOOP, 'return {}', LOOP_ANSWER, 1) / 1000
  const loopHooked = perCall(kind, LOOP, 'return {}', LOOP_ANSWER, 1, 60_000) / 1000
  const stops: Result['stops'] = []
  for (const r of RUNAWAYS)
    stops.push({ hook: await stopRunaway(kind, r.code, 'hook'), terminate: await stopRunaway(kind, r.code, 'terminate') })
  const { ready, files } = startTimes(kind)
  results.push({
    kind,
    version: `${kind.name}@${versionOf(kind.dir)}`,
    lua: call('bench_probe', 'return _VERSION'),
    answers,
    probes,
    ready,
    files,
    small,
    loop,
    loopHooked,
    stops,
    installed: installedBytes(kind.dir),
  })
}

// ---------------------------------------------------------------------------------------------------------------
// Report (Markdown, for docs/lua-engines.md).

const [a, b] = results as [Result, Result]
const isError = (s: string) => s.startsWith('error: ') || s.startsWith('compile error: ')
const runs = (r: Result, which: 'empty' | 'guessed') => r.answers[which].filter((s) => !isError(s)).length
const row = (label: string, cells: string[]) => console.log(`| ${label} | ${cells.join(' | ')} |`)
const n = bodies.length
/** Bodies whose answers are equal; an error is an answer too, so the same message counts as the same answer. */
const agreement = (which: keyof Answers) => bodies.filter((_, i) => a.answers[which][i] === b.answers[which][i]).length

console.log('### Engines\n')
console.log(`| | ${results.map((r) => r.kind.name).join(' | ')} |`)
console.log(`|---|${results.map(() => '---').join('|')}|`)
row(
  'version',
  results.map((r) => `${r.version} (${r.lua})`),
)
row(
  `bodies that compile (of ${n})`,
  results.map((r) => String(r.answers.compile.filter((s) => s === '').length)),
)
row(
  'bodies that run without error, guessed state',
  results.map((r) => String(runs(r, 'guessed'))),
)
row(
  'bodies that run without error, empty state',
  results.map((r) => String(runs(r, 'empty'))),
)
row(
  `same answer as the other engine, guessed / empty state (of ${n})`,
  results.map(() => `${agreement('guessed')} / ${agreement('empty')}`),
)
row(
  `probes with Lua 5.4's answer (of ${PROBES.length})`,
  results.map((r) => String(PROBES.filter((p, i) => r.probes[i] === p.expect).length)),
)
row(
  `start to first answer, median of ${STARTS} (range)`,
  results.map((r) => range(r.ready, ms)),
)
row(
  `small TEA-style body, µs per call (median of ${ROUNDS} × ${CALLS})`,
  results.map((r) => r.small.toFixed(1)),
)
row(
  `1e6-iteration loop, median of ${ROUNDS} runs`,
  results.map((r) => ms(r.loop)),
)
row(
  'same loop with a count hook armed (in-thread time limit)',
  results.map((r) => ms(r.loopHooked)),
)
RUNAWAYS.forEach((w, i) => {
  row(
    `${w.name}: stopped by the count hook (limit ${LIMIT_MS} ms)`,
    results.map((r) => (r.stops[i]!.hook.stopped ? `yes, after ${ms(r.stops[i]!.hook.ms)}` : `no (${r.stops[i]!.hook.detail})`)),
  )
  row(
    `${w.name}: stopped by terminating the worker`,
    results.map((r) => (r.stops[i]!.terminate.stopped ? `yes, exit ${ms(r.stops[i]!.terminate.ms)} after terminate()` : 'no')),
  )
})
row(
  'installed (package + its dependencies)',
  results.map((r) => `${MB(r.installed.bytes)} (${r.installed.packages.join(', ')})`),
)
row(
  'files loaded by a process that ran a body',
  results.map(
    (r) =>
      `${MB(r.files.reduce((sum, f) => sum + statSync(f).size, 0))} (${r.files.length} files: ${[...new Set(r.files.map((f) => f.split('/').pop()))].slice(0, 4).join(', ')}${r.files.length > 4 ? ', …' : ''})`,
  ),
)

console.log('\n### Time-limit details\n')
for (const r of results)
  RUNAWAYS.forEach((w, i) => console.log(`- ${r.kind.name}, ${w.name}, hook: ${r.stops[i]!.hook.detail.replaceAll('|', '\\|')}`))

console.log(`\n### Probes (bodies = corpus bodies whose text matches the feature's pattern; an estimate)\n`)
console.log(`| feature | bodies | Lua 5.4 answer | ${results.map((r) => r.kind.name).join(' | ')} |`)
console.log(`|---|---|---|${results.map(() => '---').join('|')}|`)
const cell = (s: string) => `\`${s.replaceAll('\n', '⏎').replaceAll('|', '\\|')}\``
PROBES.forEach((p, i) => {
  const count = bodies.filter((body) => p.uses.test(p.inText ? body.code : codeOnly(body.code))).length
  const got = results.map((r) => {
    const answer = r.probes[i]!
    return answer === p.expect ? 'yes' : answer === p.lua53 ? `no, as Lua 5.3: ${cell(answer)}` : `no: ${cell(answer)}`
  })
  console.log(`| ${p.name} | ${count} | ${cell(p.expect)} | ${got.join(' | ')} |`)
})

console.log('\n### Bodies that do not compile, fail, or differ\n')
const where = (body: Body) => `${body.file.replace(/^agents\//, '')} ${body.where}`
bodies.forEach((body, i) => {
  const [x, y] = [a.answers.compile[i]!, b.answers.compile[i]!]
  if (x !== '' || y !== '') {
    console.log(
      `- ${where(body)}: does not compile: ${x === y ? `both \`${quiet(x)}\`` : `${a.kind.name} \`${quiet(x)}\`; ${b.kind.name} \`${quiet(y)}\``}`,
    )
    return
  }
  for (const which of ['guessed', 'empty'] as const) {
    const [x, y] = [a.answers[which][i]!, b.answers[which][i]!]
    if (x !== y) console.log(`- ${where(body)}, ${which} state: ${a.kind.name} \`${quiet(x)}\`; ${b.kind.name} \`${quiet(y)}\``)
    else if (which === 'guessed' && isError(x)) console.log(`- ${where(body)}, guessed state: both \`${quiet(x)}\``)
  }
})
