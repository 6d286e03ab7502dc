/**
 * `python.run`: what a `run:` node in Python becomes when the agent loads (src/agent/tea-nodes.ts lowers
 * `language: python`, `run: {type: python, code}` and the file-wide `settings.run_language: python` onto it). As in
 * TEA, the code is first rendered as a template when it contains `{{ }}` or `{% %}`, and `${variable}` replaced, each value as data
 * (code-template.ts: escaped inside a string literal, a Python literal elsewhere, text in code refused). It runs on a pool worker with
 * a time limit (src/pool/engine-call.ts); what it prints goes to the run's log.
 */

import * as v from 'valibot'
import { defineAction } from '../actions/types.ts'
import { TeaError } from '../core/errors.ts'
import { callEngine } from '../pool/engine-call.ts'
import { runtimeFiles } from '../sea/runtime-files.ts'
import { pythonSource } from './code-template.ts'
import type { PythonOutcome } from './engine.ts'
import type { PythonOp, PythonTask } from './task.ts'

const FILES = ['pyodide.cjs', 'pyodide.asm.mjs', 'pyodide.asm.wasm', 'python_stdlib.zip', 'pyodide-lock.json']

function task(work: PythonOp): PythonTask {
  const [loader] = runtimeFiles('python', FILES, 'pyodide/pyodide.js')
  return { kind: 'python', files: { loader: loader! }, work }
}

export const pythonRun = defineAction({
  name: 'python.run',
  runsCode: true,
  description:
    "Runs Python code with TEA's contract: state, variables, json and datetime in scope; code with `return` is a function body whose dict is the update, otherwise the variables it sets are. Standard library only.",
  params: v.object({
    code: v.pipe(
      v.string(),
      v.description('The Python code; rendered first when it contains {{ }} or {% %}, and ${variable} replaced, as TEA does.'),
    ),
    timeout: v.optional(
      v.pipe(v.number(), v.gtValue(0, 'must be > 0'), v.description('Seconds the code may run (default settings.run_timeout).')),
    ),
    contract: v.optional(
      v.pipe(
        v.picklist(['run', 'reflection']),
        v.description(
          "run (default): TEA's run: contract. reflection: TEA's reflection.loop code — executed as it is, `output` in scope; the result is {result: its variable result}.",
        ),
      ),
      'run',
    ),
    output: v.optional(v.pipe(v.unknown(), v.description('With contract: reflection, the value the code sees as `output`.'))),
  }),
  raw: ['code'],
  async verify(params, ctx) {
    if (typeof params.code !== 'string' || /\{[{%]/.test(params.code)) return []
    const call = { signal: ctx.signal, timeoutMs: 30_000, where: {}, what: 'reading the Python code' }
    const check = task({ op: 'check', code: params.code, asIs: params.contract === 'reflection' })
    const found = (await callEngine(check, call)) as { line?: number; message: string } | null
    return found ? [`Python${found.line ? `, line ${found.line}` : ''}: ${found.message}`] : []
  },
  async run(p, ctx) {
    const where = { node: ctx.node, field: 'run' }
    // Whatever way the code arrived (a run: node, uses: python.run, a template over the state), it is code.
    if (!ctx.settings.allow_inline_code) {
      throw new TeaError('INLINE_CODE_FORBIDDEN', 'python.run: code is forbidden by settings.allow_inline_code: false', {
        where,
        hint: 'remove settings.allow_inline_code: false to let this agent run Python code',
      })
    }
    const memoryMb = ctx.settings.run_memory_mb
    // TEA renders run: code as a template first, never its reflection code.
    const code = p.contract === 'reflection' ? p.code : pythonSource(p.code, ctx)
    const outcome = (await callEngine(
      task({
        op: 'run',
        code,
        state: ctx.state,
        variables: ctx.variables,
        workspace: ctx.settings.workspace,
        memoryMb,
        ...(p.contract === 'reflection' && { reflection: { output: p.output } }),
      }),
      { signal: ctx.signal, timeoutMs: (p.timeout ?? ctx.settings.run_timeout) * 1000, where, what: 'the Python code' },
    )) as PythonOutcome
    for (const line of outcome.output) ctx.emit({ type: 'log', node: ctx.node, message: line })
    if (outcome.kind === 'memory') {
      throw new TeaError('NODE_MEMORY_LIMIT', `the Python code went over its memory limit of ${memoryMb} MiB and was stopped`, {
        where,
        details: { language: 'python', limit_mb: memoryMb, ...(outcome.usedMb && { used_mb: outcome.usedMb }) },
        hint: `raise settings.run_memory_mb (now ${memoryMb}) if the code needs more; the interpreter itself takes ~32 MiB of it`,
      })
    }
    if (outcome.kind === 'error') {
      throw new TeaError('CODE_ERROR', `Python${outcome.line ? `, line ${outcome.line}` : ''}: ${outcome.message}`, {
        where,
        details: { language: 'python', ...(outcome.line && { line: outcome.line }) },
      })
    }
    return outcome.update
  },
})
