/**
 * Issue 28 item 7, probe defect D2/D3: a warm worker's Python carries nothing from one run to the next. Agent A
 * patches `json.dumps`, sets a global in builtins and writes into its workspace; agent B, next on the same engine
 * (one worker's), sees the original `json.dumps`, no global, and no trace of A's workspace — neither mounted nor
 * reachable by its absolute path.
 */
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { errorMessage } from '../../src/core/errors.ts'
import { PythonEngine } from '../../src/python/engine.ts'
import { runtimeFiles } from '../../src/sea/runtime-files.ts'
import { run } from '../engine/harness.ts'
import { tempDir } from '../support/temp-dir.ts'

const t = suite<{ root: string }>('Python: nothing carried between runs')
t.before.each((c) => {
  c.root = tempDir('tea-python-iso-')
  mkdirSync(join(c.root, 'a'))
  mkdirSync(join(c.root, 'b'))
})
t.after.each((c) => rmSync(c.root, { recursive: true, force: true }))

const patcher = (wsA: string) =>
  [
    'import json, builtins, os',
    'json.dumps = lambda *a, **k: \'{"ok": {"injected_by": "A"}}\'',
    'builtins.left_by_a = True',
    'open("private.txt", "w").write("A only")',
    `return {"cwd": os.getcwd() == ${JSON.stringify(wsA)}}`,
  ].join('\n')

const reader = (wsA: string) =>
  [
    'import json, builtins, os',
    'return {"dumps": json.dumps([1]), "left": hasattr(builtins, "left_by_a"),',
    `        "seen": os.path.exists(${JSON.stringify(join(wsA, 'private.txt'))}), "mounted": os.path.exists(${JSON.stringify(wsA)})}`,
  ].join('\n')

t("on one engine: B, after A, sees the original json.dumps, no global of A, and not A's workspace", async ({ root }) => {
  const [loader] = runtimeFiles('python', ['pyodide.cjs'], 'pyodide/pyodide.js')
  const py = await PythonEngine.start({ loader: loader! })
  const wsA = join(root, 'a')
  // A's own answer goes through the json.dumps it patched: that is A's business.
  assert.equal(await py.run(patcher(wsA), {}, {}, wsA), { kind: 'done', update: { injected_by: 'A' }, output: [] })
  const b = await py.run(reader(wsA), {}, {}, join(root, 'b'))
  assert.equal(b, { kind: 'done', update: { dumps: '[1]', left: false, seen: false, mounted: false }, output: [] })
})

t('through the pool, as tea serve runs agents one after another: agent B sees nothing of agent A', async ({ root }) => {
  const agent = (name: string, ws: string, code: string) =>
    `name: ${name}\nsettings:\n  workspace: ${ws}\nnodes:\n  - name: n\n    language: python\n    run: |\n${code.replace(/^/gm, '      ')}\n`
  const wsA = join(root, 'a')
  const a = await run(agent('patcher', wsA, patcher(wsA)))
  assert.is(a.status, 'completed', errorMessage(a.error))
  for (let i = 0; i < 3; i++) {
    const b = await run(agent('reader', join(root, 'b'), reader(wsA)), { runId: `b${i}` })
    assert.is(b.status, 'completed', errorMessage(b.error))
    assert.equal(JSON.parse(JSON.stringify([b.state.dumps, b.state.left, b.state.seen, b.state.mounted, b.state.injected_by])), [
      '[1]',
      false,
      false,
      false,
      null,
    ])
  }
})

t.run()
