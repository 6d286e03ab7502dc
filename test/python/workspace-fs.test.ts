/**
 * Issue 28 item 3, probe defect E: Python's files go through `file.*`'s confinement (src/python/workspace-fs.ts
 * over confined.ts). A hard link to a file outside is neither read nor written; a symlink leading out is refused;
 * `..` and absolute paths lead into the interpreter's own file system, never the host's; and under a rename race
 * that swaps a folder for a symlink pointing out (as the probe ran it: 891 files created outside in 7,000 ops),
 * nothing is created, appended or read outside.
 */
import { spawn } from 'node:child_process'
import { linkSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { PythonEngine, type PythonOutcome } from '../../src/python/engine.ts'
import { runtimeFiles } from '../../src/sea/runtime-files.ts'
import { tempDir } from '../support/temp-dir.ts'

const t = suite<{ py: PythonEngine; root: string; ws: string; out: string }>('Python files: the workspace only')
t.before(async (c) => {
  const [loader] = runtimeFiles('python', ['pyodide.cjs'], 'pyodide/pyodide.js')
  c.py = await PythonEngine.start({ loader: loader! })
})
t.before.each((c) => {
  c.root = tempDir('tea-python-fs-')
  c.ws = join(c.root, 'ws')
  c.out = join(c.root, 'outside')
  mkdirSync(c.ws)
  mkdirSync(c.out)
  writeFileSync(join(c.out, 'secret'), 'SECRET')
})
t.after.each((c) => rmSync(c.root, { recursive: true, force: true }))

const message = (o: PythonOutcome): string => (o.kind === 'error' ? o.message : JSON.stringify(o))

t('a hard link to a file outside is not read, appended to or truncated (D5), and is left out of listings', async (c) => {
  linkSync(join(c.out, 'secret'), join(c.ws, 'hard'))
  writeFileSync(join(c.ws, 'mine.txt'), 'mine')
  for (const code of [
    'return {"s": open("hard").read()}',
    'open("hard", "a").write("X")',
    'open("hard", "w").write("X")',
    'import os\nos.truncate("hard", 0)',
  ])
    assert.match(message(await c.py.run(code, {}, {}, c.ws)), "PermissionError: [Errno 2] Permission denied: 'hard'")
  assert.is(readFileSync(join(c.out, 'secret'), 'utf8'), 'SECRET')
  assert.equal(await c.py.run('import os\nreturn {"l": sorted(os.listdir("."))}', {}, {}, c.ws), {
    kind: 'done',
    update: { l: ['mine.txt'] },
    output: [],
  })
})

t(
  'a symlink leading out is refused, absolute or relative; one inside is followed; .. and absolute paths never reach the host',
  async (c) => {
    symlinkSync(join(c.out, 'secret'), join(c.ws, 'abs'))
    symlinkSync('../outside/secret', join(c.ws, 'rel'))
    symlinkSync('../outside', join(c.ws, 'dir'))
    writeFileSync(join(c.ws, 'in.txt'), 'inside')
    symlinkSync('in.txt', join(c.ws, 'link-in'))
    for (const name of ['abs', 'rel', 'dir/secret'])
      assert.match(message(await c.py.run(`return {"s": open("${name}").read()}`, {}, {}, c.ws)), 'PermissionError', name)
    assert.match(message(await c.py.run('open("dir/new", "w").write("x")', {}, {}, c.ws)), 'PermissionError')
    for (const path of ['../outside/secret', join(c.out, 'secret'), '/etc/passwd'])
      assert.match(message(await c.py.run(`return {"s": open(${JSON.stringify(path)}).read()}`, {}, {}, c.ws)), 'FileNotFoundError', path)
    assert.match(message(await c.py.run('import os\nos.symlink("/etc", "etc")', {}, {}, c.ws)), 'PermissionError: [Errno 63]')
    assert.equal(await c.py.run('return {"s": open("link-in").read()}', {}, {}, c.ws), {
      kind: 'done',
      update: { s: 'inside' },
      output: [],
    })
    assert.equal(readdirSync(c.out), ['secret'])
  },
)

t('inside, files work as on disk: folders made, written, appended, renamed, listed, removed; the host sees the result', async (c) => {
  const code = [
    'import os, pathlib',
    'os.makedirs("a/b", exist_ok=True)',
    'open("a/b/f.txt", "w").write("hello")',
    'open("a/b/f.txt", "a").write(" world")',
    'os.rename("a/b/f.txt", "a/g.txt")',
    'pathlib.Path("a/b/h.txt").write_text("h")',
    'os.remove("a/b/h.txt")',
    'os.rmdir("a/b")',
    'return {"g": open("a/g.txt").read(), "l": sorted(os.listdir("a")), "cwd": os.getcwd(), "size": os.stat("a/g.txt").st_size}',
  ].join('\n')
  assert.equal(await c.py.run(code, {}, {}, c.ws), {
    kind: 'done',
    update: { g: 'hello world', l: ['g.txt'], cwd: c.ws, size: 11 },
    output: [],
  })
  assert.is(readFileSync(join(c.ws, 'a/g.txt'), 'utf8'), 'hello world')
})

t('under a rename race swapping a folder for a symlink pointing out, nothing is created, appended or read outside (E)', async (c) => {
  mkdirSync(join(c.ws, 'raced'))
  symlinkSync(`../${basename(c.out)}`, join(c.ws, 'evil'))
  writeFileSync(join(c.ws, 'raced', 'secret'), 'inside')
  // Another process swaps raced <-> evil as fast as it can while the code runs (the interpreter holds this thread).
  const swapper = spawn(
    process.execPath,
    [
      '-e',
      `const fs = require('fs'); const p = (n) => require('path').join(${JSON.stringify(c.ws)}, n)
       const end = Date.now() + 60000
       while (Date.now() < end) { try { fs.renameSync(p('raced'), p('tmp')); fs.renameSync(p('evil'), p('raced')); fs.renameSync(p('raced'), p('evil')); fs.renameSync(p('tmp'), p('raced')) } catch {} }`,
    ],
    { stdio: 'ignore' },
  )
  try {
    const code = [
      'made = appended = secret = 0',
      'for i in range(1000):',
      '    for op in range(3):',
      '        try:',
      '            if op == 0:',
      '                open(f"raced/f{i}", "w").write("x"); made += 1',
      '            elif op == 1:',
      '                open("raced/log", "a").write("y"); appended += 1',
      '            elif open("raced/secret").read() == "SECRET":',
      '                secret += 1',
      '        except OSError:',
      '            pass',
      'return {"made": made, "appended": appended, "secret": secret}',
    ].join('\n')
    const o = await c.py.run(code, {}, {}, c.ws)
    assert.is(o.kind, 'done', message(o))
    const counts = (o as { update: Record<string, number> }).update
    assert.is(counts.secret, 0, 'the secret outside was read')
    assert.ok(counts.made! > 0, 'the race left no operation through: the test proves nothing')
  } finally {
    swapper.kill('SIGKILL')
  }
  assert.equal(readdirSync(c.out), ['secret'], 'files were created outside the workspace')
  assert.is(readFileSync(join(c.out, 'secret'), 'utf8'), 'SECRET')
})

t.run()
