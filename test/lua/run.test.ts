/**
 * Lua `run:` code as agents write it (issue 11, part 2): TEA's ways of naming the language, lowered at load onto
 * `lua.run` and run on a pool worker; a time limit that stops a runaway loop without stopping parallel branches;
 * errors with the node and the line; `tea validate` reading the code first; a build without the engine that says
 * so; and TEA's `lua.eval`.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { loadAgentText } from '../../src/agent/load.ts'
import { verifyAgent } from '../../src/agent/verify.ts'
import { errorMessage } from '../../src/core/errors.ts'
import { load, run, testRegistry } from '../engine/harness.ts'
import { branchResults, fanOutAgent, loadWithoutEngines } from '../support/languages.ts'

test('AC-1 the three ways TEA names Lua (language:, run: {type, code}, a -- lua first line) run, one after another', async () => {
  const r = await run(
    `name: ways
nodes:
  - name: count
    language: lua
    run: |
      local words = {}
      for w in state.text:gmatch("%a+") do words[#words + 1] = w:lower() end
      return { words = words }
  - name: typed
    run:
      type: lua
      code: "return { n = #state.words }"
  - name: marker
    run: |
      -- lua
      return state.n * 10
`,
    { input: { text: 'Hello brave new World' } },
  )
  assert.is(r.status, 'completed', errorMessage(r.error))
  assert.equal(JSON.parse(JSON.stringify([r.state.words, r.state.n, r.state.result])), [['hello', 'brave', 'new', 'world'], 4, 40])
  assert.is(load('name: l\nnodes:\n  - name: p\n    language: lua\n    run: "return {}"\n').nodes[0]!.uses, 'lua.run')
})

test("a build without the lua feature names it at load: run: is Lua; this build lacks the 'lua' feature", () => {
  assert.equal(
    loadWithoutEngines('lua', 'return {}').map((p) => [p.code, p.message, p.where.node]),
    [
      [
        'CODE_ERROR',
        "run: is Lua; this build (source) lacks the 'lua' feature: the linux-arm64, linux-armv7 and linux-x64 builds have it (or port the code to JavaScript)",
        'x',
      ],
    ],
  )
})

test('AC-3 an error names the node and the line', async () => {
  const r = await run('name: e\nnodes:\n  - name: calc\n    language: lua\n    run: |\n      local a = 1\n      return { b = a + nil }\n')
  assert.is(r.status, 'failed')
  assert.is(r.error?.code, 'CODE_ERROR')
  assert.match(errorMessage(r.error), "node 'calc' (lua.run), run: Lua, line 2: attempt to perform arithmetic on a nil value")
})

test('AC-4 a runaway loop is stopped at its time limit; parallel branches run in isolation and are not stopped', async () => {
  // CPU time, not wall time: a loop left running burns it; other test files on the machine do not add to it.
  const cpu0 = process.cpuUsage()
  const r = await run(
    fanOutAgent('lua', {
      left: { run: 'shared = "left was here"\nreturn { left = "done" }' },
      right: { run: 'return { right_saw = shared or "nothing" }' },
      runaway: { run: 'while true do end', timeout: 1 },
    }),
  )
  assert.is(r.status, 'completed', errorMessage(r.error))
  const results = branchResults(r.state)
  assert.is(results[0]!.left, 'done')
  assert.is(results[1]!.right_saw, 'nothing', 'no branch sees the globals of another')
  const err = results[2]!.__error__ as { code: string; message: string }
  assert.is(err.code, 'NODE_TIMEOUT')
  assert.match(err.message, 'the Lua code ran over its time limit of 1 s and was stopped')
  const cpu = process.cpuUsage(cpu0)
  assert.ok(cpu.user + cpu.system < 20_000_000, `took ${(cpu.user + cpu.system) / 1000} ms of CPU`)
})

test('tea validate compiles Lua before any run: a syntax error with its line', async () => {
  const spec = load('name: v\nnodes:\n  - name: calc\n    language: lua\n    run: |\n      local a = 1\n      if a then\n      return a\n')
  const found = await verifyAgent(spec, testRegistry())
  assert.is(found.length, 1)
  assert.equal([found[0]!.node, found[0]!.action], ['calc', 'lua.run'])
  assert.match(found[0]!.message, /^Lua, line 4: .*expected/)
})

test("TEA's lua.eval (its WebAssembly runtime's action): code given state, the table as the update", async () => {
  const r = await run(
    `name: eval
nodes:
  - name: words
    action: lua.eval
    with:
      code: |
        local n = 0
        for _ in string.gmatch(state.text, "%S+") do n = n + 1 end
        return { word_count = n, is_short = n < 100 }
    output: lua_result
`,
    { input: { text: 'one two three' } },
  )
  assert.is(r.status, 'completed', errorMessage(r.error))
  assert.equal(JSON.parse(JSON.stringify(r.state.lua_result)), { word_count: 3, is_short: true })
})

test.run()
