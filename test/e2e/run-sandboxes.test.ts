/**
 * Issue 28 items 3, 6 and 7 through `tea run` and `tea serve`, as an attacker's agent file or input would come at
 * them (security-probe-2 B, C, D, J): each language's way to the host, an allocation bomb in each, and one agent's
 * patch of a Python module seen by the next agent in the same daemon. The engine-level tests beside the languages
 * (test/python/host.test.ts, test/prolog/sandbox.test.ts, test/lua/sandbox.test.ts, test/code/memory-limit.test.ts)
 * try every vector; these prove the shipped bundle holds them.
 */
import { existsSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { scratch, tea } from './cli.ts'
import { startServe } from './serve-harness.ts'

const SECRET = `tea-secret-${process.pid}`
const env = { TEA_SECRET_TEST: SECRET }
const STACK = /^\s+at .+[:(]\d+/m

async function attack(agent: string, timeoutMs = 120_000): Promise<{ code: number | null; out: string; pwned: boolean }> {
  const s = scratch({ 'a.yaml': agent })
  try {
    const r = await tea(['run', s.path('a.yaml'), '--data-dir', s.path('data')], { cwd: s.dir, env, timeoutMs })
    assert.not.match(r.stderr, STACK)
    return { code: r.code, out: r.stdout + r.stderr, pwned: existsSync(s.path('pwned')) }
  } finally {
    s.cleanup()
  }
}

const node = (language: string, body: string): string =>
  `name: escape\nsettings: { run_memory_mb: 64 }\nnodes:\n  - name: x\n    language: ${language}\n    run: |\n${body
    .split('\n')
    .map((l) => `      ${l}`)
    .join('\n')}\n`

test('probe B: Python run: code reaches neither Node (import js) nor a shell (os.system, subprocess) through tea run', async () => {
  for (const body of [
    'import js\nreturn {"s": str(js.process.env.TEA_SECRET_TEST)}',
    'import os\nos.system("id > pwned")\nreturn {"s": os.environ.get("TEA_SECRET_TEST", "")}',
    'import subprocess\nsubprocess.run(["sh", "-c", "id > pwned"])\nreturn {}',
  ]) {
    const r = await attack(node('python', body))
    assert.is(r.code, 1, r.out)
    assert.not.ok(r.out.includes(SECRET), r.out)
    assert.not.ok(r.pwned, body)
  }
})

test('probe B: Prolog run: code has no bridge to JavaScript (js_run_script) and no shell, through tea run', async () => {
  for (const body of [
    `:- js_run_script("require('fs').writeFileSync('pwned', process.env.TEA_SECRET_TEST)").`,
    ":- shell('id > pwned').",
    ":- getenv('TEA_SECRET_TEST', S), return(s, S).",
  ]) {
    const r = await attack(node('prolog', body))
    assert.is(r.code, 1, r.out)
    assert.match(r.out, /CODE_ERROR/)
    assert.not.ok(r.out.includes(SECRET), r.out)
    assert.not.ok(r.pwned, body)
  }
})

test('probe J: Lua refuses binary chunks and has no string.dump or os, through tea run', async () => {
  const dump = await attack(node('lua', 'local f = string.dump(function() return 1 end)\nreturn { n = #f }'))
  assert.is(dump.code, 1, dump.out)
  const binary = await attack(node('lua', 'local f, e = load("\\27Lua", "x", "b")\nreturn { loaded = f ~= nil, e = tostring(e) }'))
  assert.is(binary.code, 0, binary.out)
  assert.match(binary.out, /"loaded":\s*false/)
  const os = await attack(node('lua', 'local g = load("return os")()\nreturn { os = g == nil }'))
  assert.is(os.code, 0, os.out)
  assert.match(os.out, /"os":\s*true/)
})

test('probe C: an allocation bomb in JavaScript, Python, Lua and Prolog ends as NODE_MEMORY_LIMIT and tea exits 1', async () => {
  const bombs = [
    `name: bomb\nsettings: { run_memory_mb: 64 }\nnodes:\n  - name: x\n    run: |\n      const a = []\n      while (true) a.push(new Array(1e5).fill(0))\n`,
    node('python', 'a = []\nwhile True: a.append(bytearray(10**7))'),
    node('lua', "local t = {}\nwhile true do t[#t + 1] = string.rep('x', 1e7) .. #t end"),
    node('prolog', 'grow(L) :- length(X, 100000), grow([X|L]).\n:- grow([]).'),
  ]
  for (const agent of bombs) {
    const r = await attack(agent)
    assert.is(r.code, 1, r.out)
    assert.match(r.out, /NODE_MEMORY_LIMIT/, agent)
  }
})

test('probe D: in one tea serve, agent A patches json.dumps and writes its workspace; agent B, next, sees neither', async () => {
  const s = scratch({
    'patcher.yaml': `name: patcher\nsettings: { workspace: ws-a }\nnodes:\n  - name: x\n    language: python\n    run: |\n      import json, string\n      open("private.txt", "w").write("${SECRET}")\n      string.capwords = lambda *a, **k: "PATCHED"\n      json.dumps = lambda *a, **k: '{"injected_by": "patcher"}'\n`,
    'victim.yaml': `name: victim\nsettings: { workspace: ws-b }\nnodes:\n  - name: x\n    language: python\n    run: |\n      import json, os\n      import string\n      return {"dumped": json.dumps({"a": 1}), "cap": string.capwords("a b"), "here": sorted(os.listdir(".")), "there": os.path.exists(WS_A + "/private.txt")}\n`,
  })
  const { mkdirSync, writeFileSync, readFileSync } = await import('node:fs')
  writeFileSync(s.path('victim.yaml'), readFileSync(s.path('victim.yaml'), 'utf8').replace('WS_A', JSON.stringify(s.path('ws-a'))))
  mkdirSync(s.path('ws-a'))
  mkdirSync(s.path('ws-b'))
  const daemon = await startServe(['--agents', s.dir, '--data-dir', s.path('data'), '--max-concurrent', '1'], { env })
  try {
    const done = async (agent: string): Promise<Record<string, any>> => {
      const started = await daemon.json('POST', '/api/runs', { agent })
      assert.is(started.status, 201, JSON.stringify(started.body))
      return (await daemon.events(started.body.run_id)).at(-1)!
    }
    // The patcher's own result may not survive its patch of json.dumps (its run is its own business).
    await done('patcher')
    const end = await done('victim')
    assert.is(end.type, 'complete', JSON.stringify(end))
    const b = end.state
    assert.is(b.cap, 'A B')
    assert.is(b.dumped, '{"a": 1}')
    assert.equal(b.here, [])
    assert.is(b.there, false)
    assert.ok(existsSync(s.path('ws-a/private.txt')), "agent A's own workspace holds its file")
  } finally {
    await daemon.stop()
    s.cleanup()
  }
})

test.run()
