/**
 * TEA's Python contract on the real interpreter (CPython in WebAssembly, Pyodide), started once in this thread:
 * `state`, `variables`, `json`, `datetime` in scope; code with `return` is a function body, otherwise its variables
 * are the update; standard library only, with clear errors for what TEA had beyond it.
 */
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { PythonEngine, type PythonOutcome } from '../../src/python/engine.ts'
import { runtimeFiles } from '../../src/sea/runtime-files.ts'
import { tempDir } from '../support/temp-dir.ts'

const t = suite<{ py: PythonEngine; dir: string }>('Python engine')
t.before(async (c) => {
  const [loader] = runtimeFiles('python', ['pyodide.cjs'], 'pyodide/pyodide.js')
  c.py = await PythonEngine.start({ loader: loader! })
  c.dir = tempDir('tea-python-')
})
t.after((c) => rmSync(c.dir, { recursive: true, force: true }))

const update = (o: PythonOutcome): Record<string, unknown> => {
  if (o.kind !== 'done') throw new Error(JSON.stringify(o))
  return o.update
}

t('code with return is a function body: the dict it returns is the update, JSON types both ways', async ({ py }) => {
  const state = { n: 41, f: 2.5, s: 'text', b: true, z: null, list: [1, 'a', [2]], obj: { k: 'v' } }
  const r = update(
    await py.run(
      'return {"n": state["n"] + 1, "f": state["f"] * 2, "len": len(state["s"]), "b": not state["b"], "z": state["z"] is None, "list": state["list"][::-1], "obj": state["obj"]}',
      state,
      {},
      undefined,
    ),
  )
  assert.equal(r, { n: 42, f: 5, len: 4, b: false, z: true, list: [[2], 'a', 1], obj: { k: 'v' } })
})

t('without return, the variables it sets are the update (not _private ones, modules or functions)', async ({ py }) => {
  const r = update(
    await py.run(
      'import math\ndef helper(x):\n    pass\n_tmp = 1\ntotal = math.floor(state["x"] * 10)\nlabel = "x"',
      { x: 4.25 },
      {},
      undefined,
    ),
  )
  assert.equal(r, { total: 42, label: 'x' })
})

t("TEA's rule: code whose text contains 'return' anywhere is a function body (a helper's return is enough)", async ({ py }) => {
  assert.equal(update(await py.run('def helper(x):\n    return x\ntotal = helper(3)', {}, {}, undefined)), {})
})

t('a returned value that is not a dict is {result}; None changes nothing; variables, json and datetime are there', async ({ py }) => {
  assert.equal(update(await py.run('return state["x"] * 2', { x: 21 }, {}, undefined)), { result: 42 })
  assert.equal(update(await py.run('return None', {}, {}, undefined)), {})
  const r = update(
    await py.run('return {"v": variables["unit"], "j": json.dumps([1]), "d": datetime.date(2026, 1, 2)}', {}, { unit: 'C' }, undefined),
  )
  assert.equal(r, { v: 'C', j: '[1]', d: '2026-01-02' })
})

t('print goes to the output lines (the run log), never to stdout', async ({ py }) => {
  const o = await py.run('print("hello", 42)\nreturn {}', {}, {}, undefined)
  assert.equal(o, { kind: 'done', update: {}, output: ['hello 42'] })
})

t('errors name the line and the exception; a missing module is named, and nothing is downloaded', async ({ py }) => {
  const o = await py.run('a = 1\nb = None\nreturn {"c": a + b}', {}, {}, undefined)
  assert.ok(o.kind === 'error' && o.line === 3 && /^TypeError: unsupported operand/.test(o.message), JSON.stringify(o))
  const syntax = await py.run('x = (1,\ny = 2', {}, {}, undefined)
  assert.ok(syntax.kind === 'error' && /^SyntaxError/.test(syntax.message), JSON.stringify(syntax))
  const missing = await py.run('import numpy as np\nreturn {}', {}, {}, undefined)
  assert.ok(missing.kind === 'error' && missing.line === 1, JSON.stringify(missing))
  assert.match(
    (missing as { message: string }).message,
    "Python module 'numpy' is not available in tea: run: code in Python has the standard library only",
  )
  const yaml = await py.run('import yaml', {}, {}, undefined)
  assert.match((yaml as { message: string }).message, "module 'yaml' is not available")
})

t('what TEA gave beyond the standard library (requests, OpenAI, actions) fails with a clear error when used', async ({ py }) => {
  const o = await py.run('r = requests.get("http://example.invalid")', {}, {}, undefined)
  assert.ok(o.kind === 'error' && /requests is not available in tea's Python run: code: .*http\.get/.test(o.message), JSON.stringify(o))
  const a = await py.run('return actions["llm.call"](state)', {}, {}, undefined)
  assert.ok(a.kind === 'error' && /actions is not available/.test(a.message), JSON.stringify(a))
})

t('isolation: globals of one run are not seen by the next', async ({ py }) => {
  update(await py.run('global leaked\nleaked = 1\nreturn {}', {}, {}, undefined))
  assert.equal(update(await py.run('return {"seen": "leaked" in globals()}', {}, {}, undefined)), { seen: false })
})

t('hostile strings in the state are data, never code', async ({ py }) => {
  const nasty = ['"""; import os; os.system("x"); """', "'); import os #", '\u0000', '{{ state }}']
  assert.equal(update(await py.run('return {"xs": state["xs"]}', { xs: nasty }, {}, undefined)), { xs: nasty })
})

t("the workspace is mounted and current: open() reads the agent's files", async ({ py, dir }) => {
  writeFileSync(join(dir, 'data.txt'), 'from the host')
  assert.equal(update(await py.run('with open("data.txt") as f:\n    text = f.read()', {}, {}, dir)), { text: 'from the host' })
})

t('check compiles without running: the syntax error with its line, or none', async ({ py }) => {
  assert.is(await py.check('x = 1\nreturn {"x": x}'), undefined)
  const bad = await py.check('x = 1\nif x\n    pass')
  assert.ok(bad?.line === 2 && /SyntaxError/.test(bad.message), JSON.stringify(bad))
})

t.run()
