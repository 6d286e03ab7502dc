/**
 * `python.run`'s limits (issue 28): the code's memory has a ceiling, `settings.run_memory_mb` (item 6, probe
 * defect C: a Python allocation bomb took 2.7 GB), and `settings.allow_inline_code: false` refuses Python code
 * however it arrives, from state through a template included (item 5, probe defect B).
 */
import { readdirSync, rmSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { errorMessage } from '../../src/core/errors.ts'
import { load, run } from '../engine/harness.ts'
import { tempDir } from '../support/temp-dir.ts'

const agent = (code: string, settings = '') =>
  `name: m\n${settings}nodes:\n  - name: grow\n    language: python\n    run: |\n${code.replace(/^/gm, '      ')}\n`

test('NODE_MEMORY_LIMIT node grow: an allocation bomb stops at settings.run_memory_mb, and the next Python run is well', async () => {
  const before = process.memoryUsage().rss
  const r = await run(agent('a = []\nwhile True:\n    a.append(bytearray(10**7))', 'settings:\n  run_memory_mb: 96\n'))
  assert.is(r.error?.code, 'NODE_MEMORY_LIMIT', errorMessage(r.error))
  assert.match(errorMessage(r.error), "node 'grow' (python.run), run: the Python code went over its memory limit of 96 MiB and was stopped")
  assert.match(String(r.error?.hint), 'raise settings.run_memory_mb (now 96)')
  // The worker never held the bomb: this process grew by far less than the 2.7 GB the probe saw.
  assert.ok(process.memoryUsage().rss - before < 400 * 1024 * 1024, `rss grew by ${process.memoryUsage().rss - before}`)
  const next = await run(agent('x = sum(range(10))'), { runId: 'next' })
  assert.is(next.status, 'completed', errorMessage(next.error))
  assert.is(next.state.x, 45)
})

test('temporary files count against the limit: a loop writing /tmp ends as NODE_MEMORY_LIMIT, not an unbounded worker', async () => {
  // A workspace of its own: the interpreter's /tmp (MEMFS) is then not the host's, which the default workspace (the
  // agent file's folder, /tmp here) would be.
  const ws = tempDir('tea-python-tmp-')
  try {
    const bomb = 'i = 0\nwhile True:\n    open(f"/tmp/f{i}", "wb").write(b"x" * 10**7)\n    i += 1'
    const r = await run(agent(bomb, `settings:\n  run_memory_mb: 96\n  workspace: ${ws}\n`))
    assert.is(r.error?.code, 'NODE_MEMORY_LIMIT', errorMessage(r.error))
    assert.equal(readdirSync(ws), [])
  } finally {
    rmSync(ws, { recursive: true, force: true })
  }
})

test('a MemoryError the code catches is survived: the node completes', async () => {
  const r = await run(
    agent(
      'try:\n    big = bytearray(500 * 2**20)\nexcept MemoryError:\n    big = None\nok = big is None',
      'settings:\n  run_memory_mb: 96\n',
    ),
  )
  assert.is(r.status, 'completed', errorMessage(r.error))
  assert.is(r.state.ok, true)
})

test('INLINE_CODE_FORBIDDEN: with allow_inline_code: false, python.run itself refuses code, also code that comes from state', async () => {
  // The loader refuses such a node first (src/agent/); this is the action's own refusal, for code that reaches
  // python.run another way (ctx.invoke, a plan's subtask, TEA's code actions): the settings are flipped after load.
  const spec = load('name: i\nnodes:\n  - name: p\n    uses: python.run\n    with:\n      code: "{{ state.code }}"\n')
  ;(spec.settings as { allow_inline_code: boolean }).allow_inline_code = false
  const r = await run(spec, { input: { code: 'import os\nos.system("id")' } })
  assert.is(r.error?.code, 'INLINE_CODE_FORBIDDEN', errorMessage(r.error))
  assert.match(errorMessage(r.error), 'python.run: code is forbidden by settings.allow_inline_code: false')
})

test.run()
