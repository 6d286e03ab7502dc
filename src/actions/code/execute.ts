/**
 * TEA's `code.execute` (code_actions.py): Python code run as it is, its value the variable `result` it sets,
 * with TEA's result shape `{success, stdout, stderr, return_value, error, execution_time_ms}`. TEA runs it under
 * RestrictedPython inside its own process, and only when the embedding program enables it (its CLI never does).
 * tea runs it as `run:` Python code (python.run's reflection contract: code as written, `state` and `variables` in
 * scope): in the Python sandbox, under `settings.allow_inline_code`, `settings.run_memory_mb` and a time limit.
 * A failure of the code is a result with `success: false`, as in TEA; tea's limits stop the node.
 *
 * What the code prints goes to the run's log (as for every run: code) and not into `stdout`, which is empty.
 */

import * as v from 'valibot'
import { isTeaError, TeaError } from '../../core/errors.ts'
import { monotonicMs } from '../../core/util.ts'
import { defineAction } from '../types.ts'

const MAX_CODE = 1_000_000

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
    const shape = (x: { success: boolean; return_value: unknown; error: string | null }) => ({
      ...x,
      stdout: '',
      stderr: '',
      execution_time_ms: monotonicMs() - start,
    })
    try {
      const out = await ctx.invoke('python.run', { code: p.code, contract: 'reflection', output: null, timeout })
      return shape({ success: true, return_value: out.result ?? null, error: null })
    } catch (e) {
      if (isTeaError(e, 'CODE_ERROR')) return shape({ success: false, return_value: null, error: e.message })
      if (isTeaError(e, 'NODE_TIMEOUT') && !ctx.signal.aborted)
        return shape({ success: false, return_value: null, error: `Execution timed out after ${timeout} seconds` })
      throw e
    }
  },
})
