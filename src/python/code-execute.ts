/**
 * TEA's `code.execute` (code_actions.py): Python code run as it is, its value the variable `result` it sets,
 * with TEA's result shape `{success, stdout, stderr, return_value, error, execution_time_ms}`. TEA runs it under
 * RestrictedPython inside its own process, and only when the embedding program enables it (its CLI never does).
 * tea runs it as `run:` Python code (python.run's reflection contract: code as written, `state` and `variables` in
 * scope): in the Python sandbox, under `settings.allow_inline_code`, `settings.run_memory_mb` and a time limit.
 * A failure of the code is a result with `success: false`, as in TEA; tea's memory limit stops the node.
 *
 * What the code prints is caught as TEA catches it: the code runs inside a few lines of Python (`wrapped`) that
 * point sys.stdout and sys.stderr at buffers, cut each to `max_output_bytes` as TEA does, and hand them back
 * beside the value. The code goes into those lines as a string literal, and is compiled under python.run's file
 * name, so an error's line is the line of the code as written.
 */

import * as v from 'valibot'
import { isTeaError, TeaError } from '../core/errors.ts'
import { monotonicMs } from '../core/util.ts'
import { defineAction } from '../actions/types.ts'

const MAX_CODE = 1_000_000

/** TEA's default `max_output_bytes`. */
const MAX_OUTPUT = 65_536

/** The Python that runs `code` (a JSON string is a Python string literal) and catches what it prints. */
function wrapped(code: string, maxOutput: number): string {
  return [
    'import io as _tea_io, sys as _tea_sys',
    'def _tea_cut(text, limit):',
    "    data = text.encode('utf-8')",
    "    return text if len(data) <= limit else data[:limit].decode('utf-8', errors='ignore') + '\\n... [output truncated]'",
    '_tea_streams = (_tea_sys.stdout, _tea_sys.stderr)',
    '_tea_sys.stdout, _tea_sys.stderr = _tea_io.StringIO(), _tea_io.StringIO()',
    'try:',
    `    exec(compile(${JSON.stringify(code)}, '<run>', 'exec'), globals())`,
    '    _tea_printed = (_tea_sys.stdout.getvalue(), _tea_sys.stderr.getvalue())',
    'finally:',
    '    _tea_sys.stdout, _tea_sys.stderr = _tea_streams',
    `result = {'value': globals().get('result'), 'stdout': _tea_cut(_tea_printed[0], ${maxOutput}), 'stderr': _tea_cut(_tea_printed[1], ${maxOutput})}`,
  ].join('\n')
}

export const codeExecute = defineAction({
  name: 'code.execute',
  runsCode: true,
  description:
    "TEA's code.execute: runs Python code as written in tea's Python sandbox (state in scope, the variable result is the value); returns {success, stdout, stderr, return_value, error, execution_time_ms}.",
  params: v.object({
    code: v.pipe(
      v.string(),
      v.maxLength(MAX_CODE, `must be at most ${MAX_CODE} characters`),
      v.description('Python code; set result to return a value.'),
    ),
    language: v.optional(
      v.pipe(
        v.picklist(['python'], "TEA's code.execute runs Python only; for Lua, Prolog or JavaScript write a run: node in that language"),
        v.description('python (the only language TEA runs here).'),
      ),
    ),
    timeout: v.optional(
      v.pipe(
        v.number(),
        v.gtValue(0, 'must be > 0'),
        v.maxValue(3600, 'must be ≤ 3600'),
        v.description('Seconds (default settings.run_timeout).'),
      ),
    ),
    max_output_bytes: v.optional(
      v.pipe(v.number(), v.integer(), v.minValue(0), v.description("TEA's output limit; tea's log lines have their own.")),
    ),
  }),
  // The code is run as written: a {{ }} in it is Python (a dict literal), not a template.
  raw: ['code'],
  async run(p, ctx) {
    if (!ctx.settings.allow_inline_code) {
      throw new TeaError('INLINE_CODE_FORBIDDEN', 'code.execute runs code, which settings.allow_inline_code: false forbids', {
        where: { node: ctx.node, action: 'code.execute' },
        hint: 'remove settings.allow_inline_code: false to let this agent run Python code',
      })
    }
    const timeout = p.timeout ?? ctx.settings.run_timeout
    const start = monotonicMs()
    const shape = (x: { success: boolean; return_value: unknown; error: string | null; stdout?: string; stderr?: string }) => ({
      stdout: '',
      stderr: '',
      ...x,
      execution_time_ms: monotonicMs() - start,
    })
    try {
      const code = wrapped(p.code, p.max_output_bytes ?? MAX_OUTPUT)
      const out = await ctx.invoke('python.run', { code, contract: 'reflection', output: null, timeout })
      const got = (out.result ?? {}) as { value?: unknown; stdout?: unknown; stderr?: unknown }
      return shape({
        success: true,
        return_value: got.value ?? null,
        error: null,
        stdout: String(got.stdout ?? ''),
        stderr: String(got.stderr ?? ''),
      })
    } catch (e) {
      if (isTeaError(e, 'CODE_ERROR')) return shape({ success: false, return_value: null, error: e.message })
      if (isTeaError(e, 'NODE_TIMEOUT') && !ctx.signal.aborted)
        return shape({ success: false, return_value: null, error: `Execution timed out after ${timeout} seconds` })
      throw e
    }
  },
})
