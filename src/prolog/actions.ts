/**
 * The Prolog feature's actions. `prolog.run` is what a `run:` node in Prolog becomes when the agent loads
 * (src/agent/tea-nodes.ts lowers `language: prolog`, `run: {type: prolog, code}` and a `% prolog` first line onto
 * it); `prolog.query` asks a program for the solutions of a goal over facts given as data (validate.extraction's
 * constraints use it). Both run on a pool worker with a time limit (client.ts).
 */

import * as v from 'valibot'
import { TeaError } from '../core/errors.ts'
import { defineAction, type ActionContext } from '../actions/types.ts'
import { checkProlog, queryProlog, runProlog } from './client.ts'

const timeout = v.optional(
  v.pipe(v.number(), v.gtValue(0, 'must be > 0'), v.description('Seconds the code may run (default settings.run_timeout).')),
)

const limitMs = (seconds: number | undefined, ctx: ActionContext): number => (seconds ?? ctx.settings.run_timeout) * 1000

/** Code reaches the engine only where the agent allows code (settings.allow_inline_code), wherever it came from. */
function mayRunCode(ctx: ActionContext, action: string): void {
  if (!ctx.settings.allow_inline_code) {
    throw new TeaError('INLINE_CODE_FORBIDDEN', `${action} runs Prolog code, which settings.allow_inline_code: false forbids`, {
      where: { node: ctx.node },
      hint: "remove allow_inline_code: false from the agent's settings to let it run Prolog",
    })
  }
}

function overMemory(ctx: ActionContext, what: string, field: string): TeaError {
  const mb = ctx.settings.run_memory_mb
  return new TeaError('NODE_MEMORY_LIMIT', `${what} went over its memory limit of ${mb} MiB and was stopped`, {
    where: { node: ctx.node, field },
    hint: `a term, a table of clauses or of atoms that keeps growing: raise settings.run_memory_mb (MiB, now ${mb}) if the code needs more`,
  })
}

export const prologRun = defineAction({
  name: 'prolog.run',
  runsCode: true,
  description:
    "Runs Prolog code with TEA's contract: state/2 reads the state, return/2 sets keys of the update; each clause is asserted (facts, rules) or run (goals) in a module of its own.",
  params: v.object({
    code: v.pipe(v.string(), v.description('The Prolog code (as written: not a template).')),
    timeout,
  }),
  raw: ['code'],
  verify: async (params, ctx) => syntaxProblems(params.code, ctx.signal),
  async run(p, ctx) {
    mayRunCode(ctx, 'prolog.run')
    const where = { node: ctx.node, field: 'run' }
    const call = { signal: ctx.signal, timeoutMs: limitMs(p.timeout, ctx), where, what: 'the Prolog code' }
    const outcome = await runProlog({ op: 'run', code: p.code, state: ctx.state, memoryMb: ctx.settings.run_memory_mb }, call)
    if (outcome.kind === 'memory') throw overMemory(ctx, 'the Prolog code', 'run')
    if (outcome.kind === 'error') {
      throw new TeaError('CODE_ERROR', `Prolog, line ${outcome.line}: ${outcome.message}`, {
        where,
        details: { language: 'prolog', line: outcome.line },
      })
    }
    if (outcome.kind === 'failed') {
      // TEA's runtimes return what was set before the failing goal and say nothing; tea says it in the log.
      ctx.emit({ type: 'log', node: ctx.node, message: `Prolog: the goal at line ${outcome.line} failed; clauses after it were not run` })
    }
    return outcome.returns
  },
})

export const prologQuery = defineAction({
  name: 'prolog.query',
  runsCode: true,
  description:
    'Finds the solutions of a Prolog goal over a program and facts ([name, arg, ...] lists, never parsed as code); returns {solutions: [{Var: value}], count, bindings, success}. TEA spelling: code (the goal, after any clauses and a ?- line) and facts as clause text.',
  params: v.object({
    query: v.optional(v.pipe(v.string(), v.minLength(1), v.description('The goal, e.g. "validation_error(Type, Context)".'))),
    code: v.optional(v.pipe(v.string(), v.description("TEA's spelling: the goal, or clauses followed by `?- Goal.`"))),
    program: v.optional(v.pipe(v.string(), v.description('Clauses (rules, facts, directives) consulted first.')), ''),
    facts: v.optional(
      v.pipe(
        v.union([v.array(v.pipe(v.array(v.unknown()), v.minLength(1))), v.string()]),
        v.description("Facts as [name, arg, ...] lists (data, never parsed), or TEA's clause text."),
      ),
      [],
    ),
    max_solutions: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.description('At most this many (default 1000).')), 1000),
    timeout,
  }),
  verify: async (params, ctx) => syntaxProblems(programOf(params as QueryParams), ctx.signal),
  async run(p, ctx) {
    mayRunCode(ctx, 'prolog.query')
    const { program, facts, goal } = readQuery(p, ctx.node)
    const where = { node: ctx.node, field: 'program' }
    const call = { signal: ctx.signal, timeoutMs: limitMs(p.timeout, ctx), where, what: 'the Prolog query' }
    const memoryMb = ctx.settings.run_memory_mb
    const outcome = await queryProlog({ op: 'query', program, facts, goal, max: p.max_solutions, memoryMb }, call)
    if (outcome.kind === 'memory') throw overMemory(ctx, 'the Prolog query', 'program')
    if (outcome.kind === 'error') {
      const place = outcome.line > 0 ? `program, line ${outcome.line}` : 'query'
      throw new TeaError('CODE_ERROR', `Prolog ${place}: ${outcome.message}`, { where })
    }
    // `bindings` and `success` are TEA's names for the same answer.
    return { solutions: outcome.rows, count: outcome.rows.length, bindings: outcome.rows, success: outcome.rows.length > 0 }
  },
})

/** The clauses to consult: `program`, TEA's `facts` text, and whatever precedes the `?-` line of TEA's `code`. */
function programOf(p: QueryParams): string {
  const before = p.query === undefined && p.code?.includes('?-') ? p.code.slice(0, p.code.lastIndexOf('?-')) : ''
  return [p.program ?? '', typeof p.facts === 'string' ? p.facts : '', before].filter((t) => t.trim()).join('\n')
}

interface QueryParams {
  query?: string | undefined
  code?: string | undefined
  program?: string | undefined
  facts?: unknown[][] | string | undefined
}

/** The program, the facts as data and the goal, from tea's spelling or TEA's (`code` with a `?-` line, facts as text). */
function readQuery(p: QueryParams, node: string): { program: string; facts: unknown[][]; goal: string } {
  const program = programOf(p)
  const code = p.query === undefined ? p.code : undefined
  const goal =
    p.query ??
    (code === undefined
      ? undefined
      : code
          .slice(code.includes('?-') ? code.lastIndexOf('?-') + 2 : 0)
          .trim()
          .replace(/\.$/, ''))
  if (!goal) throw new TeaError('INVALID_PARAMS', "prolog.query needs a goal: query (or TEA's code)", { where: { node } })
  const facts = Array.isArray(p.facts) ? p.facts : []
  for (const [i, f] of facts.entries()) {
    if (typeof f[0] !== 'string' || f[0] === '') {
      throw new TeaError('INVALID_PARAMS', `facts[${i}] must start with the fact's name, got ${JSON.stringify(f[0])}`, { where: { node } })
    }
  }
  return { program, facts, goal }
}

/** The first syntax error in Prolog code as written (not a template, so it can be read before a run). */
async function syntaxProblems(code: unknown, signal: AbortSignal): Promise<string[]> {
  if (typeof code !== 'string' || code.trim() === '') return []
  const call = { signal, timeoutMs: 30_000, where: {}, what: 'reading the Prolog code' }
  const found = await checkProlog({ op: 'check', code }, call)
  return found ? [`Prolog, line ${found.line}: ${found.message}`] : []
}
