/**
 * Issue 28 item 3, probe defect B: Python `run:` code has no path to the host. Each vector is tried as an attacker
 * would, on the real interpreter: it must neither return the host's secret (an environment variable of this
 * process) nor leave a file outside the workspace. The bridges Pyodide has to JavaScript (`js`, `pyodide_js`,
 * `pyodide.ffi`, `run_js`, `_pyodide_core` made again through `_imp`, JsProxy objects found through `gc`) end at the
 * gate (src/python/gate.ts) even where a Python-level refusal is bypassed.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { PythonEngine, type PythonOutcome } from '../../src/python/engine.ts'
import { runtimeFiles } from '../../src/sea/runtime-files.ts'
import { tempDir } from '../support/temp-dir.ts'

const SECRET = `tea-secret-${process.pid}`
const t = suite<{ py: PythonEngine; ws: string; out: string }>('Python: no path to the host')
t.before(async (c) => {
  process.env.TEA_SECRET_TEST = SECRET
  const [loader] = runtimeFiles('python', ['pyodide.cjs'], 'pyodide/pyodide.js')
  c.py = await PythonEngine.start({ loader: loader! })
  c.ws = tempDir('tea-python-ws-')
  c.out = tempDir('tea-python-outside-')
})
t.after((c) => {
  delete process.env.TEA_SECRET_TEST
  rmSync(c.ws, { recursive: true, force: true })
  rmSync(c.out, { recursive: true, force: true })
})

/** Runs `code`; the outcome must carry no secret, and nothing may appear outside. */
async function attack(c: { py: PythonEngine; ws: string; out: string }, code: string): Promise<PythonOutcome> {
  const o = await c.py.run(code.replaceAll('OUT', c.out).replaceAll('SECRET_NAME', 'TEA_SECRET_TEST'), {}, {}, c.ws)
  assert.not.ok(JSON.stringify(o).includes(SECRET), `the secret came back: ${JSON.stringify(o)}`)
  assert.equal(readdirSync(c.out), [], `a file appeared outside the workspace: ${JSON.stringify(o)}`)
  return o
}

const message = (o: PythonOutcome): string => (o.kind === 'error' ? o.message : JSON.stringify(o))

t("import js (Pyodide's globalThis) is not there: the secret in process.env is not read", async (c) => {
  const o = await attack(c, 'import js\nreturn {"s": str(js.process.env.SECRET_NAME)}')
  assert.match(message(o), "Python module 'js' is not available in tea: run: code in Python cannot reach JavaScript")
})

t('pyodide_js, pyodide.code.run_js and pyodide.ffi.to_js are not there either', async (c) => {
  for (const code of [
    'import pyodide_js\nreturn {"s": str(pyodide_js._module)}',
    'from pyodide.code import run_js\nreturn {"s": run_js("process.env.SECRET_NAME")}',
    'from pyodide.ffi import to_js\nreturn {"s": str(to_js([]).constructor.constructor("return process.env.SECRET_NAME")())}',
    'import importlib\nreturn {"s": str(importlib.import_module("js").process.env.SECRET_NAME)}',
    'return {"s": str(__import__("_pyodide_core"))}',
  ])
    assert.match(message(await attack(c, code)), 'is not available in tea: run: code in Python cannot reach JavaScript')
})

t(
  'past the Python-level refusals (sys.meta_path cleared, sys.modules edited, _imp.create_builtin), the FFI is closed at the gate',
  async (c) => {
    const cleared = await attack(c, 'import sys\nsys.meta_path.clear()\nimport js\nreturn {"s": str(js.process.env.SECRET_NAME)}')
    assert.is(cleared.kind, 'error')
    const rebuilt = await attack(
      c,
      'import _imp, importlib.machinery as m\ncore = _imp.create_builtin(m.ModuleSpec("_pyodide_core", None))\n' +
        'x = core.to_js([1])\nreturn {"s": str(x.constructor.constructor("return process.env.SECRET_NAME")())}',
    )
    assert.match(message(rebuilt), 'the code reached for JavaScript or the host (')
    assert.match(message(rebuilt), 'which Python run: code cannot do')
    const found = await attack(
      c,
      'import gc\nfor o in gc.get_objects():\n    if "JsProxy" in type(type(o)).__name__ + type(o).__name__ and not isinstance(o, type):\n' +
        '        return {"s": str(o.process.env.SECRET_NAME)}\nreturn {"none": True}',
    )
    assert.ok(found.kind === 'error' || (found.kind === 'done' && found.update.none === true), JSON.stringify(found))
  },
)

t('os.system, posix.system after a reload, subprocess and fork start nothing', async (c) => {
  assert.match(
    message(await attack(c, 'import os\nos.system("touch OUT/system")')),
    "PermissionError: tea's Python run: code cannot start processes",
  )
  assert.match(message(await attack(c, 'import subprocess\nsubprocess.run(["touch", "OUT/sub"])')), 'cannot start processes')
  assert.match(message(await attack(c, 'import os\nos.fork()')), 'cannot start processes')
  assert.match(message(await attack(c, 'import os\nos.execv("/bin/sh", ["sh", "-c", "touch OUT/exec"])')), 'cannot start processes')
  // Past the Python-level refusal, the gate answers system() with failure (-1) and starts no shell.
  const posix = await attack(
    c,
    'import posix, importlib, os\nimportlib.reload(os)\nreturn {"a": posix.system("touch OUT/posix"), "b": os.system("touch OUT/reload")}',
  )
  assert.equal(posix, { kind: 'done', update: { a: -1, b: -1 }, output: [] })
})

t("os.environ holds nothing of the host's, and sys.executable and argv name no host program", async (c) => {
  const o = await attack(c, 'import os, sys\nreturn {"env": dict(os.environ), "exe": sys.executable, "argv": sys.argv}')
  assert.is(o.kind, 'done', JSON.stringify(o))
  const seen = JSON.stringify(o)
  for (const host of [process.argv[1]!, process.execPath, process.cwd()]) assert.not.ok(seen.includes(host), `${host} in ${seen}`)
  // Emscripten's and Pyodide's own variables, none taken from this process.
  const own = ['HOME', 'LANG', 'LD_LIBRARY_PATH', 'LOGNAME', 'PATH', 'PWD', 'PYTHONINSPECT', 'USER', '_']
  const env = (o as unknown as { update: { env: Record<string, string> } }).update.env
  assert.equal(
    Object.keys(env).filter((k) => !own.includes(k)),
    [],
  )
  assert.equal([env.HOME, env.PATH, env.USER, env._], ['/home/pyodide', '/', 'web_user', 'python'])
})

t('ctypes is not there, and sockets cannot be opened (no connection to 127.0.0.1)', async (c) => {
  assert.match(message(await attack(c, 'import ctypes')), "Python module 'ctypes' is not available in tea")
  const socket = await attack(c, 'import socket\nsocket.create_connection(("127.0.0.1", 22), timeout=1)')
  assert.match(message(socket), 'PermissionError: [Errno 63] Operation not permitted')
})

t("the host's files are not there: /etc/passwd and absolute paths outside the workspace do not exist", async (c) => {
  assert.match(message(await attack(c, 'return {"s": open("/etc/passwd").read()}')), 'FileNotFoundError')
  assert.match(message(await attack(c, 'return {"s": open("/proc/self/environ").read()}')), 'FileNotFoundError')
  assert.match(message(await attack(c, 'open("OUT/made", "w").write("x")')), 'FileNotFoundError')
})

t('os._exit ends the run as refused, and the next run starts from a clean interpreter', async (c) => {
  assert.match(message(await attack(c, 'import os\nos._exit(3)')), 'the code reached for JavaScript or the host (proc_exit)')
  assert.equal(await c.py.run('return {"ok": 1}', {}, {}, c.ws), { kind: 'done', update: { ok: 1 }, output: [] })
  assert.not.ok(existsSync(join(c.out, 'posix')))
})

t.run()
