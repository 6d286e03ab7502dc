/**
 * The Lua side of tea's contract with `run:` code in Lua (TEA's Lua scripting stories: the code is the body of a
 * function whose argument is `state`; the table it returns is merged into the state, any other value becomes
 * `{result = value}`, nil changes nothing; `os`, `io`, `loadfile`, `dofile` and `debug` are absent). Values cross
 * as JSON text through this codec, never as Lua source, so a hostile string stays a string.
 *
 * Each run gets an environment of its own: a fresh table of globals over fresh copies of the standard library
 * tables, so nothing a run defines or changes — globals, `string.foo = …` — is seen by another (TEA fixed its
 * Lua isolation twice; here it holds by construction).
 *
 * The code is untrusted, and the interpreter's real globals hold `os`, `io`, `require` and `package`, which reach
 * the host through Emscripten (`os.execute` ends in Node's child_process). So, once the glue has taken what it
 * needs, those are removed from the real globals too, and nothing a run is given leads back to them: `load` is
 * tea's, which reads text only (a binary chunk is refused whatever mode the caller asks: hand-made bytecode can
 * read and write outside the interpreter's memory) and gives the chunk the run's environment unless the caller
 * names another (Lua's own `load` would give it the real globals); `string.dump` is gone; the strings' shared
 * metatable is hidden (`getmetatable("")` is false), because its `__index` is the one table every run's string
 * methods go through; `collectgarbage` only collects, counts and steps (stopping the collector would outlive
 * the run); `print` writes nowhere (the interpreter's stdout is tea's). What a run leaves for the collector is
 * collected at its end, so its finalizers (`__gc`) run inside its own time limit, not in the next run's.
 */

export const GLUE = String.raw`
local json = {}

local escapes = { ['"'] = '\\"', ['\\'] = '\\\\', ['\b'] = '\\b', ['\f'] = '\\f', ['\n'] = '\\n', ['\r'] = '\\r', ['\t'] = '\\t' }

local function is_array(t)
  local n = 0
  for k in pairs(t) do
    if math.type(k) ~= 'integer' or k < 1 then return false end
    n = n + 1
  end
  if n == 0 then return false end
  for i = 1, n do if t[i] == nil then return false end end
  return true
end

local function encode(v, depth)
  if depth > 200 then error('the value is nested too deep (over 200 levels, or it contains itself)', 0) end
  local kind = type(v)
  if v == nil then return 'null'
  elseif kind == 'boolean' then return tostring(v)
  elseif kind == 'number' then
    if v ~= v or v == math.huge or v == -math.huge then return 'null' end
    if math.type(v) == 'integer' then return string.format('%d', v) end
    if v == math.floor(v) and math.abs(v) < 2^53 then return string.format('%d', math.floor(v)) end
    return string.format('%.17g', v)
  elseif kind == 'string' then
    return '"' .. v:gsub('[%c"\\]', function(c) return escapes[c] or string.format('\\u%04x', c:byte()) end) .. '"'
  elseif kind == 'table' then
    local parts = {}
    if is_array(v) then
      for i = 1, #v do parts[i] = encode(v[i], depth + 1) end
      return '[' .. table.concat(parts, ',') .. ']'
    end
    for k, x in pairs(v) do parts[#parts + 1] = encode(tostring(k), depth + 1) .. ':' .. encode(x, depth + 1) end
    return '{' .. table.concat(parts, ',') .. '}'
  end
  return encode(tostring(v), depth)
end
json.encode = function(v) return encode(v, 0) end

local function utf8_of(code) return utf8.char(code) end

function json.decode(s)
  local pos = 1
  local value
  local function fail(what) error('bad JSON at ' .. pos .. ': ' .. what, 0) end
  local function space() pos = s:find('[^ \t\r\n]', pos) or #s + 1 end
  local function str()
    local out, i = {}, pos + 1
    while true do
      local j = s:find('["\\]', i)
      if not j then fail('unterminated string') end
      out[#out + 1] = s:sub(i, j - 1)
      if s:sub(j, j) == '"' then pos = j + 1; return table.concat(out) end
      local e = s:sub(j + 1, j + 1)
      if e == 'u' then
        local code = tonumber(s:sub(j + 2, j + 5), 16) or fail('bad \\u escape')
        i = j + 6
        if code >= 0xD800 and code <= 0xDBFF and s:sub(i, i + 1) == '\\u' then
          local low = tonumber(s:sub(i + 2, i + 5), 16) or 0
          if low >= 0xDC00 and low <= 0xDFFF then code = 0x10000 + (code - 0xD800) * 0x400 + (low - 0xDC00); i = i + 6 end
        end
        out[#out + 1] = utf8_of(code)
      else
        local map = { b = '\b', f = '\f', n = '\n', r = '\r', t = '\t', ['"'] = '"', ['\\'] = '\\', ['/'] = '/' }
        out[#out + 1] = map[e] or fail('bad escape')
        i = j + 2
      end
    end
  end
  function value()
    space()
    local c = s:sub(pos, pos)
    if c == '{' then
      local t = {}
      pos = pos + 1; space()
      if s:sub(pos, pos) == '}' then pos = pos + 1; return t end
      while true do
        space()
        if s:sub(pos, pos) ~= '"' then fail('expected a key') end
        local k = str(); space()
        if s:sub(pos, pos) ~= ':' then fail('expected :') end
        pos = pos + 1
        t[k] = value(); space()
        local d = s:sub(pos, pos); pos = pos + 1
        if d == '}' then return t elseif d ~= ',' then fail('expected , or }') end
      end
    elseif c == '[' then
      local t, n = {}, 0
      pos = pos + 1; space()
      if s:sub(pos, pos) == ']' then pos = pos + 1; return t end
      while true do
        n = n + 1
        t[n] = value(); space()
        local d = s:sub(pos, pos); pos = pos + 1
        if d == ']' then return t elseif d ~= ',' then fail('expected , or ]') end
      end
    elseif c == '"' then return str()
    elseif s:sub(pos, pos + 3) == 'true' then pos = pos + 4; return true
    elseif s:sub(pos, pos + 4) == 'false' then pos = pos + 5; return false
    elseif s:sub(pos, pos + 3) == 'null' then pos = pos + 4; return nil
    end
    local num = s:match('^-?%d+%.?%d*[eE]?[+-]?%d*', pos)
    if not num or num == '' then fail('unexpected ' .. (c == '' and 'end' or c)) end
    pos = pos + #num
    return math.tointeger(tonumber(num)) or tonumber(num)
  end
  return value()
end

local LIBRARIES = { 'string', 'table', 'math', 'utf8', 'coroutine' }
local BASICS = { 'assert', 'error', 'ipairs', 'next', 'pairs', 'pcall', 'rawequal', 'rawget', 'rawlen', 'rawset',
  'select', 'setmetatable', 'getmetatable', 'tonumber', 'tostring', 'type', 'xpcall', '_VERSION' }
local base = {}
for _, name in ipairs(BASICS) do base[name] = _G[name] end

local raw_load, raw_collect, raw_tostring, raw_pcall = load, collectgarbage, tostring, pcall
local GC_OPTIONS = { collect = true, count = true, step = true, isrunning = true }
base.collectgarbage = function(option, ...)
  option = option or 'collect'
  if not GC_OPTIONS[option] then error("collectgarbage('" .. raw_tostring(option) .. "') is not available to run: code", 2) end
  return raw_collect(option, ...)
end
base.print = function() end

-- What reaches the host, or outlives a run, leaves the real globals and the shared string table.
for _, name in ipairs({ 'os', 'io', 'require', 'package', 'debug', 'dofile', 'loadfile', 'load', 'collectgarbage', 'print' }) do
  _G[name] = nil
end
string.dump = nil
getmetatable('').__metatable = false

-- Globals for one run: the basics, copies of the library tables, and nothing from another run.
local function environment()
  local env = {}
  for k, v in pairs(base) do env[k] = v end
  for _, lib in ipairs(LIBRARIES) do
    local copy = {}
    for k, v in pairs(_G[lib]) do copy[k] = v end
    env[lib] = copy
  end
  env._G = env
  -- Text only; the run's globals unless the caller names an environment (as Lua's load takes a fourth argument).
  env.load = function(chunk, name, _mode, ...)
    if select('#', ...) > 0 then return raw_load(chunk, name, 't', (...)) end
    return raw_load(chunk, name, 't', env)
  end
  return env
end

local function run(code, state_json)
  local env = environment()
  -- 'local state = ...' shares the first line with the code, so the code's line numbers are its own.
  local chunk, err = raw_load('local state = ... ' .. code, '=run', 't', env)
  if not chunk then return json.encode({ error = err }) end
  local decoded, state = raw_pcall(json.decode, state_json)
  if not decoded then return json.encode({ error = 'the state: ' .. raw_tostring(state) }) end
  local ok, result = raw_pcall(chunk, state)
  if not ok then
    local shown, message = raw_pcall(raw_tostring, result)
    return json.encode({ error = shown and message or 'an error value that cannot be shown' })
  end
  if result == nil then return '{"ok":{}}' end
  if type(result) ~= 'table' or is_array(result) then result = { result = result } end
  local encoded, out = raw_pcall(json.encode, { ok = result })
  if not encoded then return json.encode({ error = 'the returned value: ' .. raw_tostring(out) }) end
  return out
end

-- Runs one body: returns the JSON text of {ok = update} or {error = message, line = n}.
function tea_run(code, state_json)
  local done, out = raw_pcall(run, code, state_json)
  if not done then out = json.encode({ error = raw_tostring(out) }) end
  raw_collect('collect')
  return out
end

-- Compiles a body without running it: nil, or the error.
function tea_check(code)
  local chunk, err = raw_load('local state = ... ' .. code, '=run', 't', {})
  return err
end
`
