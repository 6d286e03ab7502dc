/**
 * `reflection.loop` (TEA's action; TEA-AGENT-001.2): generate → evaluate → correct, until an evaluation passes or
 * `max_iterations` attempts were made. Written to TEA's documentation and parameters:
 *
 * - `generator` and `corrector`: `{action: <name>, …its parameters}` (or `uses:`, or the parameters under
 *   `with:`), or `{run: <code>}`. Their templates are rendered before every attempt with the loop's state, which
 *   holds `reflection_iteration` (from 1), `reflection_output`, `reflection_errors`, `reflection_history`,
 *   `reflection_best`, `reflection_best_score`. A model call's result (an `llm.*` action) counts as its reply: the
 *   JSON in it when there is some, else its text; any other action's result counts as it is.
 * - After a failed evaluation the corrector runs (not after the last attempt). A corrector that is a model call
 *   returns the corrected output, which is evaluated next; any other corrector's result is merged into the loop's
 *   state (as TEA does) and the generator runs again. The corrector's result is also `reflection_correction`.
 * - `evaluator.type`: `schema` (JSON Schema, with TEA's coercion of strings to the numbers and booleans the schema
 *   asks for), `llm` (the model judges: `prompt`, `model`, few-shot `examples` of {input, output}), or `custom`
 *   (`run:` code returning `{valid, score?, errors?, suggestions?}`).
 * - `on_failure`: `return_best` (default: the highest-scoring attempt), `return_last`, or `raise`
 *   (REFLECTION_FAILED with the history in its details).
 * - A generator that fails is an attempt with score 0 and the error, and the loop goes on (TEA's rule);
 *   configuration errors (an unknown action, code in a language this build lacks) fail at once.
 *
 * Code is JavaScript, like every `run:`, or Python with `language: python` (TEA's reflection code is Python): it
 * runs on the python feature's interpreter with TEA's contract for reflection code — executed as it is, `state`,
 * `output` and the loop's keys in scope, its value the variable `result` it sets. A Python evaluator that raises is
 * a failed evaluation, as in TEA. A Lua evaluator is the body of TEA's `function(state, output)` (through the lua
 * feature); TEA's Prolog evaluators fail naming the feature (TEA_UNSUPPORTED).
 */

import * as v from 'valibot'
import { defineAction, type ActionContext } from '../actions/types.ts'
import { compileCodeValue, type CompiledCodeValue } from '../code/compile.ts'
import { errorMessage, isTeaError, TeaError } from '../core/errors.ts'
import { extractJson } from '../core/json-extract.ts'
import { isPlainObject, type State } from '../core/util.ts'
import type { ChatMessage } from '../llm/types.ts'
import { ask, modelEntries } from './model.ts'
import { parseVerdict } from './parse.ts'
import { judgePrompt, VERDICT_SCHEMA } from './prompts.ts'
import { schemaVerdict, type Evaluation } from './schema-evaluator.ts'
import { traceFileEntry, Tracer } from './trace.ts'

const step = v.looseObject({
  action: v.optional(v.string()),
  uses: v.optional(v.string()),
  with: v.optional(v.record(v.string(), v.unknown())),
  run: v.optional(v.string()),
  language: v.optional(v.string()),
})

const evaluator = v.looseObject({
  type: v.optional(v.picklist(['schema', 'llm', 'custom']), 'schema'),
  schema: v.optional(v.record(v.string(), v.unknown())),
  prompt: v.optional(v.string()),
  model: v.optional(v.string()),
  examples: v.optional(v.array(v.object({ input: v.unknown(), output: v.unknown() }))),
  run: v.optional(v.string()),
  language: v.optional(v.string()),
})

const atLeastOne = 'must be a whole number ≥ 1'

const params = v.object({
  generator: v.pipe(step, v.description('What produces the output: {action, …params} or {run: code}.')),
  evaluator: v.pipe(evaluator, v.description('How the output is judged: {type: schema|llm|custom, …}.')),
  corrector: v.optional(v.pipe(step, v.description('What fixes a failed output: {action, …params} or {run: code}.'))),
  max_iterations: v.optional(
    v.pipe(v.number(atLeastOne), v.integer(atLeastOne), v.minValue(1, atLeastOne), v.description('Attempts at most (default 3).')),
    3,
  ),
  on_failure: v.optional(
    v.pipe(v.picklist(['return_best', 'return_last', 'raise']), v.description('When no attempt passes (default return_best).')),
    'return_best',
  ),
  trace_file: traceFileEntry,
  ...modelEntries,
})

type Params = v.InferOutput<typeof params>
type Step = v.InferOutput<typeof step>

export interface Attempt {
  iteration: number
  output: unknown
  score: number
  valid: boolean
  errors: Array<Record<string, unknown>>
}

const STEP_KEYS = new Set(['action', 'uses', 'with', 'run', 'language'])

export const reflectionLoop = defineAction({
  name: 'reflection.loop',
  description:
    "TEA's reflection loop: generate, evaluate (schema, llm or custom), correct, until valid or max_iterations; returns {valid, reflection_output, reflection_history, …}.",
  params,
  raw: ['generator', 'evaluator', 'corrector'],
  // `tea validate` compiles Python code the way it runs (through python.run), so a syntax error is found first.
  async verify(params, ctx) {
    const python = ctx.action('python.run')
    const found: string[] = []
    for (const role of ['generator', 'evaluator', 'corrector']) {
      const part = params[role]
      if (!python?.verify || !isPlainObject(part) || typeof part.run !== 'string') continue
      if (codeLanguage(typeof part.language === 'string' ? part.language : undefined) !== 'python') continue
      for (const message of await python.verify({ code: part.run, contract: 'reflection' }, ctx)) found.push(`${role}: ${message}`)
    }
    return found
  },
  async run(p, ctx) {
    checkSteps(p, ctx)
    const tracer = new Tracer(ctx, 'reflection.loop', p.trace_file)
    const code = new CodeCache(ctx)
    const history: Attempt[] = []
    let best: { output: unknown; score: number } = { output: null, score: -1 }
    const loop: State = { ...ctx.state }
    let corrected: { output: unknown } | undefined
    for (let iteration = 1; iteration <= p.max_iterations; iteration++) {
      Object.assign(loop, { reflection_iteration: iteration, reflection_history: history })
      let output: unknown
      if (corrected) output = corrected.output
      else {
        try {
          output = await perform(ctx, code, p.generator, loop, 'generator')
        } catch (e) {
          if (isConfigError(e)) throw e
          const errors = [{ message: `generator failed: ${errorMessage(e)}`, type: 'generator_error' }]
          history.push({ iteration, output: null, score: 0, valid: false, errors })
          loop.reflection_errors = errors
          tracer.add('generate', { iteration, error: errors[0]!.message })
          continue
        }
      }
      corrected = undefined
      loop.reflection_output = output
      tracer.add('generate', { iteration, output })
      const verdict = await evaluate(p, ctx, code, output, loop)
      history.push({ iteration, output, score: verdict.score, valid: verdict.valid, errors: verdict.errors })
      tracer.add('evaluate', { iteration, ...verdict })
      if (verdict.score > best.score) best = { output, score: verdict.score }
      Object.assign(loop, { reflection_best: best.output, reflection_best_score: best.score, reflection_errors: verdict.errors })
      if (verdict.valid) {
        return {
          ...spread(output),
          success: true,
          valid: true,
          reflection_iteration: iteration,
          reflection_output: output,
          reflection_errors: [],
          reflection_history: history,
          reflection_best: output,
          reflection_best_score: verdict.score,
          reasoning_trace: await tracer.finish(),
        }
      }
      if (iteration < p.max_iterations && p.corrector) {
        try {
          const result = await perform(ctx, code, p.corrector, loop, 'corrector')
          loop.reflection_correction = result
          tracer.add('correct', { iteration, output: result })
          if (isModelAction(p.corrector)) corrected = { output: result }
          else if (isPlainObject(result)) Object.assign(loop, result)
        } catch (e) {
          if (isConfigError(e)) throw e
          const error = { message: `corrector failed: ${errorMessage(e)}`, type: 'corrector_error' }
          loop.reflection_errors = [...verdict.errors, error]
          tracer.add('correct', { iteration, error: error.message })
        }
      }
    }
    const last = history.at(-1)
    if (p.on_failure === 'raise') {
      throw new TeaError('REFLECTION_FAILED', `no output passed the evaluation in ${p.max_iterations} attempt(s)`, {
        where: { node: ctx.node },
        details: { history, best_score: best.score },
      })
    }
    const final = p.on_failure === 'return_best' ? best.output : (last?.output ?? null)
    return {
      ...spread(final),
      success: false,
      valid: false,
      exhausted: true,
      reflection_iteration: history.length,
      reflection_output: final,
      reflection_errors: last?.errors ?? [],
      reflection_history: history,
      reflection_best: best.output,
      reflection_best_score: best.score,
      reasoning_trace: await tracer.finish(),
    }
  },
})

/** TEA puts an object output's keys beside the loop's, and anything else under `result`. */
function spread(output: unknown): State {
  return isPlainObject(output) ? { ...output } : { result: output }
}

function isModelAction(s: Step): boolean {
  return (s.action ?? s.uses ?? '').startsWith('llm.')
}

function isConfigError(e: unknown): boolean {
  return isTeaError(e, 'UNKNOWN_ACTION') || isTeaError(e, 'INVALID_PARAMS') || isTeaError(e, 'TEA_UNSUPPORTED')
}

/** Configuration mistakes fail the node before the first attempt, not as failed attempts. */
function checkSteps(p: Params, ctx: ActionContext): void {
  for (const [role, s] of [
    ['generator', p.generator],
    ['corrector', p.corrector],
  ] as const) {
    if (!s) continue
    const named = (s.action ?? s.uses) !== undefined
    if (named === (s.run !== undefined)) throw config(ctx, role, 'give either action (or uses) or run')
    if (s.run !== undefined) checkLanguage(ctx, role, s.language)
  }
  const e = p.evaluator
  if (e.type === 'schema' && !e.schema) throw config(ctx, 'evaluator', 'type schema needs schema')
  if (e.type === 'custom') {
    if (e.run === undefined) throw config(ctx, 'evaluator', 'type custom needs run')
    checkLanguage(ctx, 'evaluator', e.language)
  }
}

function checkLanguage(ctx: ActionContext, role: string, language: string | undefined): void {
  const lang = codeLanguage(language)
  const where = { node: ctx.node, field: `with.${role}.run` }
  if (lang === 'javascript') return
  // TEA runs evaluators in Python, Lua or Prolog, and generators and correctors in Python only.
  const engine = lang === 'python' || (lang === 'lua' && role === 'evaluator') ? `${lang}.run` : undefined
  if (engine) {
    if (ctx.listActions().some((a) => a.name === engine)) return
    const name = lang === 'lua' ? 'Lua' : 'Python'
    throw new TeaError('CODE_ERROR', `reflection.loop ${role}: run: is ${name}; this build lacks the '${lang}' feature`, { where })
  }
  throw new TeaError(
    'TEA_UNSUPPORTED',
    `reflection.loop ${role} code in ${language} is a TEA feature that tea does not provide: tea runs reflection code in JavaScript or Python (and evaluators in Lua)`,
    { where, hint: 'port the code to JavaScript or Python (language: python)' },
  )
}

/** The language of reflection code: JavaScript unless `language:` names Python (or another, which tea lacks). */
function codeLanguage(language: string | undefined): string {
  const lang = (language ?? 'javascript').toLowerCase()
  return lang === 'js' ? 'javascript' : lang === 'py' ? 'python' : lang
}

/** Runs a generator or corrector over the loop's state and returns its output. */
async function perform(ctx: ActionContext, code: CodeCache, s: Step, loop: State, role: string): Promise<unknown> {
  if (s.run !== undefined) return code.run(s.run, s.language, role, loop, {})
  const name = (s.action ?? s.uses) as string
  const inline = Object.fromEntries(Object.entries(s).filter(([k]) => !STEP_KEYS.has(k)))
  const args = ctx.render({ ...inline, ...s.with }, { state: loop }, role)
  const result = await ctx.invoke(name, args, loop)
  return name.startsWith('llm.') ? replyValue(result) : result
}

/** A model call's result as an output: its structured reply, the JSON in its text, or the text. */
function replyValue(result: State): unknown {
  if (result.parsed !== undefined) return result.parsed
  if (typeof result.content !== 'string') return result
  const json = extractJson(result.content)
  return json.ok ? json.value : result.content.trim()
}

async function evaluate(p: Params, ctx: ActionContext, code: CodeCache, output: unknown, loop: State): Promise<Evaluation> {
  const e = p.evaluator
  if (e.type === 'schema') return schemaVerdict(e.schema as Record<string, unknown>, output)
  if (e.type === 'custom') {
    try {
      return customVerdict(await code.run(e.run as string, e.language, 'evaluator', loop, { output }))
    } catch (err) {
      // TEA: an evaluator in Python or Lua that raises is a failed evaluation, not a failed node.
      if (!['python', 'lua'].includes(codeLanguage(e.language)) || !isTeaError(err, 'CODE_ERROR')) throw err
      const message = `custom evaluator error: ${errorMessage(err)}`
      return { valid: false, score: 0, errors: [{ message, type: 'evaluator_error' }], suggestions: ['Check your custom evaluation code'] }
    }
  }
  const prompt =
    e.prompt === undefined
      ? 'Is this output valid and correct?'
      : String(ctx.render(e.prompt, { state: { ...loop, output_to_evaluate: output } }, 'evaluator.prompt'))
  const messages: ChatMessage[] = [{ role: 'system', content: judgePrompt() }]
  for (const x of e.examples ?? []) {
    messages.push({ role: 'user' as const, content: text(x.input) })
    messages.push({ role: 'assistant' as const, content: text(x.output) })
  }
  const user =
    e.prompt === undefined || !/reflection_output|output_to_evaluate/.test(e.prompt) ? `${prompt}\n\nOutput:\n${text(output)}` : prompt
  messages.push({ role: 'user' as const, content: user })
  const reply = await ask(ctx, { ...p, ...(e.model !== undefined && { model: e.model }) }, messages, { schema: VERDICT_SCHEMA })
  try {
    const verdict = parseVerdict(reply.content)
    return {
      valid: verdict.valid,
      score: verdict.score ?? (verdict.valid ? 1 : 0),
      errors: verdict.valid ? [] : [{ message: verdict.feedback || 'the judge found the output invalid', type: 'llm_judgement' }],
      suggestions: verdict.suggestions,
    }
  } catch (err) {
    if (!isTeaError(err, 'REASONING_PARSE_ERROR')) throw err
    return {
      valid: false,
      score: 0,
      errors: [{ message: `the judge's reply holds no verdict: ${reply.content.slice(0, 200)}`, type: 'llm_judgement' }],
      suggestions: [],
    }
  }
}

/** A custom evaluator's result, whatever it returned, as an evaluation. */
function customVerdict(value: unknown): Evaluation {
  const o = isPlainObject(value) ? value : typeof value === 'boolean' ? { valid: value } : {}
  const valid = o.valid === true
  const score = typeof o.score === 'number' && Number.isFinite(o.score) ? o.score : valid ? 1 : 0
  const errors = (Array.isArray(o.errors) ? o.errors : o.errors === undefined ? [] : [o.errors]).map((x) =>
    isPlainObject(x) ? { ...x } : { message: typeof x === 'string' ? x : JSON.stringify(x) },
  )
  if (!valid && errors.length === 0)
    errors.push({
      message: typeof o.valid === 'boolean' ? 'the evaluator found the output invalid' : 'the evaluator returned no boolean valid',
    })
  const suggestions = Array.isArray(o.suggestions) ? o.suggestions.map(String) : []
  return { valid, score, errors, suggestions }
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value)
}

function config(ctx: ActionContext, role: string, what: string): TeaError {
  return new TeaError('INVALID_PARAMS', `reflection.loop ${role}: ${what}`, { where: { node: ctx.node, field: `with.${role}` } })
}

/** `run:` code of the generator, corrector and evaluator: compiled once per action, run with the agent's limit. */
class CodeCache {
  private readonly compiled = new Map<string, CompiledCodeValue>()
  constructor(private readonly ctx: ActionContext) {}

  async run(source: string, language: string | undefined, role: string, state: State, extra: Record<string, unknown>): Promise<unknown> {
    const ctx = this.ctx
    const where = { node: ctx.node, field: `with.${role}.run` }
    if (!ctx.settings.allow_inline_code)
      throw new TeaError('INLINE_CODE_FORBIDDEN', 'run: code is forbidden by settings.allow_inline_code: false', { where })
    if (codeLanguage(language) === 'python') {
      // TEA's evaluator sees its output in the state too (eval_state["output"]).
      const onState = 'output' in extra ? { ...state, output: extra.output } : state
      const done = await ctx.invoke('python.run', { code: source, contract: 'reflection', output: extra.output ?? null }, onState)
      return done.result
    }
    if (codeLanguage(language) === 'lua') {
      // TEA's Lua evaluator is the body of function(state, output); lua.run's is a body given state. `output` is
      // bound on the code's first line, so error lines stay the code's own.
      const done = await ctx.invoke('lua.run', { code: `local output = state.output; ${source}` }, { ...state, output: extra.output })
      // lua.run turns a value that is not a table into {result = value}; a verdict is a table or a boolean.
      const keys = Object.keys(done)
      return keys.length === 1 && keys[0] === 'result' && !isPlainObject(done.result) ? done.result : done
    }
    const names = Object.keys(extra)
    const key = `${names.join(',')}\u0000${source}`
    let fn = this.compiled.get(key)
    if (!fn) this.compiled.set(key, (fn = compileCodeValue(source, where, { names })))
    const log = (message: string): void => ctx.emit({ type: 'log', node: ctx.node, message })
    const limitMs = ctx.settings.run_timeout > 0 ? ctx.settings.run_timeout * 1000 : 2 ** 31 - 1
    return fn({ state, variables: ctx.variables, ctx, log, extra, memoryMb: ctx.settings.run_memory_mb }, limitMs)
  }
}
