/**
 * Issue 29: TEA's `code.execute` runs in tea's Python sandbox under the trust rules: TEA's result shape, the code's
 * failure a result, `settings.allow_inline_code: false` refusing it when the file loads and when it runs, the
 * memory limit and the time limit applying as to any run: code, and nothing of the host within reach.
 */

import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { loadAgentText } from '../../../src/agent/load.ts'
import { errorMessage } from '../../../src/core/errors.ts'
import { load, run, testRegistry } from '../../engine/harness.ts'

const agent = (code: string, settings = '', extra = '') =>
  `name: c\n${settings}nodes:\n  - name: py\n    uses: code.execute\n    with:\n      language: python\n${extra}      code: |\n${code.replace(/^/gm, '        ')}\n    output: out\n`

test('code.execute returns the variable result in TEA’s shape, with the state in scope', async () => {
  const r = await run(agent('x = {"a": [1, 2]}\nprint("hello")\nresult = {"n": state["n"] * 2, "x": x}'), { input: { n: 21 } })
  assert.is(r.status, 'completed', errorMessage(r.error))
  const out = r.state.out as Record<string, unknown>
  assert.is(out.success, true)
  assert.equal(out.return_value, { n: 42, x: { a: [1, 2] } })
  assert.is(out.error, null)
  assert.is(out.stdout, 'hello\n')
  assert.is(out.stderr, '')
  assert.type(out.execution_time_ms, 'number')
})

test('what the code prints is cut at max_output_bytes as TEA cuts it; an error names the line as written', async () => {
  const r = await run(
    agent('import sys\nprint("é" * 10)\nprint("oops", file=sys.stderr)\nresult = None', '', '      max_output_bytes: 5\n'),
  )
  assert.is(r.status, 'completed', errorMessage(r.error))
  const out = r.state.out as Record<string, unknown>
  assert.is(out.stdout, 'éé\n... [output truncated]')
  assert.is(out.stderr, 'oops\n')
  assert.is(out.return_value, null)
  const bad = await run(agent('x = 1\ny = 2\nraise ValueError("no " + "{{ x }}")'), { runId: 'bad' })
  const failed = bad.state.out as Record<string, unknown>
  assert.is(failed.success, false)
  assert.match(String(failed.error), 'line 3')
  assert.match(String(failed.error), 'ValueError: no {{ x }}')
})

test('code that raises is a result with success: false and the error, and the run goes on', async () => {
  const r = await run(agent('result = 1 / 0'))
  assert.is(r.status, 'completed', errorMessage(r.error))
  const out = r.state.out as Record<string, unknown>
  assert.is(out.success, false)
  assert.is(out.return_value, null)
  assert.match(String(out.error), /ZeroDivisionError/)
})

test('a loop that never ends is stopped at the node’s timeout and reported as TEA reports it', async () => {
  const r = await run(agent('while True:\n    pass', '', '      timeout: 1\n'))
  assert.is(r.status, 'completed', errorMessage(r.error))
  const out = r.state.out as Record<string, unknown>
  assert.is(out.success, false)
  assert.is(out.error, 'Execution timed out after 1 seconds')
})

test('the memory limit stops the node as for any run: code', async () => {
  const r = await run(agent('a = []\nwhile True:\n    a.append(bytearray(10**7))', 'settings:\n  run_memory_mb: 96\n'))
  assert.is(r.error?.code, 'NODE_MEMORY_LIMIT', errorMessage(r.error))
})

test('the host is out of reach: no processes, no files outside the workspace', async () => {
  const r = await run(agent('import os\ntry:\n    os.system("id")\n    result = "ran"\nexcept Exception as e:\n    result = "refused"'))
  assert.is(r.status, 'completed', errorMessage(r.error))
  assert.is((r.state.out as Record<string, unknown>).return_value, 'refused')
  const f = await run(agent('result = open("/etc/passwd").read()'), { runId: 'f' })
  assert.is((f.state.out as Record<string, unknown>).success, false)
})

test('allow_inline_code: false refuses code.execute when the file loads', () => {
  const { problems } = loadAgentText(agent('result = 1', 'settings:\n  allow_inline_code: false\n'), '/tmp/agent.yaml', testRegistry())
  assert.ok(
    problems.some((p) => p.code === 'INLINE_CODE_FORBIDDEN' && p.message.includes('code.execute runs code')),
    JSON.stringify(problems),
  )
})

test('allow_inline_code: false refuses code.execute when it runs, however it was reached', async () => {
  // Loaded with code allowed, then run with the setting off: the action checks again.
  const spec = load(agent('result = 1'))
  spec.settings.allow_inline_code = false
  const r = await run(spec)
  assert.is(r.error?.code, 'INLINE_CODE_FORBIDDEN', errorMessage(r.error))
})

test('a language other than Python is refused with the reason', async () => {
  const { problems } = loadAgentText(
    agent('x', '', '      language: lua\n').replace('      language: python\n', ''),
    '/tmp/agent.yaml',
    testRegistry(),
  )
  const r = problems.length ? undefined : await run(agent('x', '', '      language: lua\n').replace('      language: python\n', ''))
  const message = problems.map((p) => p.message).join('\n') || errorMessage(r?.error)
  assert.match(message, "TEA's code.execute runs Python only")
})

test.run()
