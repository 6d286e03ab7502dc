/**
 * TEA's node kinds, lowered onto tea's own nodes before the file is validated, so the rest of the loader, the
 * engine and its checkpoints see plain action nodes:
 * - `type: dynamic_parallel` with `items`, `item_var`, `index_var`, `max_concurrency`, `fail_fast` and `action:`
 *   (`{uses, with, output}`) or `steps:` becomes a `flow.map` node with TEA's defaults (`fail_fast: false`) and
 *   result shape (`results: branches`, TEA's ParallelFlowResult); its results go to `output` (default
 *   `parallel_results`), and its `fan_in:` node is where it goes next when no edge or goto says otherwise;
 * - `type: while_loop` with `condition`, `max_iterations` and `body:` becomes a `flow.while` node;
 * - a node with `steps:` becomes a `flow.steps` node;
 * - `run:` code in Prolog or Lua — `language: prolog|lua`, `run: {type: prolog|lua, code}`, or a first line
 *   `% prolog` / `-- lua` (TEA's explicit markers; TEA's guess from the code's look is not followed: without a
 *   language, `run:` is JavaScript) — becomes a `prolog.run` or `lua.run` node, and `language: javascript` (or
 *   `type: javascript`) a plain `run:` node. Python is left as written, for the loader to name;
 * - a `reflection.loop`'s generator, evaluator and corrector `run:` code is in `settings.run_language` unless it
 *   says `language:` (TEA's reflection code is Python).
 * What cannot be lowered (`subgraph:`) is left as written, and the loader names it as a TEA
 * feature tea does not have yet (tea-dialect.ts). Problems inside a lowered node point at the node.
 */

import { isPlainObject } from '../core/util.ts'

const MAP_KEYS = ['items', 'item_var', 'index_var', 'max_concurrency', 'fail_fast'] as const
/** What the lowering consumes; any other key stays on the node, so the loader still reports what it does not know. */
const CONSUMED = new Set<string>([...MAP_KEYS, 'type', 'action', 'steps', 'fan_in', 'output', 'language'])

/** Rewrites, in place, the TEA node kinds of `data.nodes` that tea runs. */
export function lowerTeaNodes(data: Record<string, unknown>): void {
  if (!Array.isArray(data.nodes)) return
  const edgeSources = new Set((Array.isArray(data.edges) ? data.edges : []).filter(isPlainObject).map((e) => e.from))
  const fileLanguage =
    isPlainObject(data.settings) && typeof data.settings.run_language === 'string' ? data.settings.run_language : undefined
  data.nodes = data.nodes.map((n) => {
    if (!isPlainObject(n)) return n
    if (n.type === 'dynamic_parallel' && n.subgraph === undefined && (isPlainObject(n.action) || Array.isArray(n.steps)))
      return dynamicParallel(n, edgeSources, fileLanguage)
    if (n.type === 'while_loop' && Array.isArray(n.body)) return whileLoop(n)
    if (n.type === undefined && Array.isArray(n.steps) && n.uses === undefined && n.run === undefined) return steps(n, fileLanguage)
    if ((n.uses ?? n.action) === 'reflection.loop' && fileLanguage !== undefined) return reflectionCode(n, fileLanguage)
    const code = runCode(n, fileLanguage)
    if (code && ENGINE_LANGUAGES.includes(code.language)) return onEngine(n, code.language, code.code)
    if (code?.language === 'javascript') return { ...without(n, ['language']), run: code.code }
    return n
  })
}

function dynamicParallel(n: Record<string, unknown>, edgeSources: Set<unknown>, fileLanguage: string | undefined): Record<string, unknown> {
  const out = unconsumed(n)
  const args: Record<string, unknown> = {}
  for (const k of MAP_KEYS) if (n[k] !== undefined) args[k] = n[k]
  // TEA's defaults and result shape: a failed item does not stop the others, and each result is a
  // ParallelFlowResult ({branch, success, state, error, timing_ms}), which TEA's fan-in code reads.
  args.fail_fast ??= false
  args.results = 'branches'
  if (isPlainObject(n.action)) {
    const { uses, action, with: params, output } = n.action
    args.action = { uses: uses ?? action, ...(params !== undefined && { with: params }), ...(output !== undefined && { output }) }
  } else args.steps = stepsOnEngines(n, fileLanguage)
  out.uses = 'flow.map'
  out.with = args
  out.output = { [typeof n.output === 'string' ? n.output : 'parallel_results']: '{{ result.result }}' }
  if (typeof n.fan_in === 'string' && out.goto === undefined && out.next === undefined && !edgeSources.has(n.name)) out.goto = n.fan_in
  return out
}

/** A reflection.loop's generator, evaluator and corrector code is in the file's language unless it names its own. */
function reflectionCode(n: Record<string, unknown>, fileLanguage: string): Record<string, unknown> {
  if (!isPlainObject(n.with)) return n
  const params: Record<string, unknown> = { ...n.with }
  for (const role of ['generator', 'evaluator', 'corrector']) {
    const part = params[role]
    if (isPlainObject(part) && typeof part.run === 'string' && part.language === undefined)
      params[role] = { ...part, language: fileLanguage }
  }
  return { ...n, with: params }
}

function whileLoop(n: Record<string, unknown>): Record<string, unknown> {
  const out = unconsumed(n)
  for (const k of ['condition', 'max_iterations', 'body']) delete out[k]
  const args: Record<string, unknown> = { body: n.body }
  if (n.condition !== undefined) args.condition = n.condition
  if (n.max_iterations !== undefined) args.max_iterations = n.max_iterations
  return { ...out, uses: 'flow.while', with: args, ...(n.output !== undefined && { output: n.output }) }
}

/**
 * The language and code of a `run:` node, when it says which language (TEA's three ways), or when the file names
 * one for all its `run:` code (`settings.run_language`, tea's own key: TEA's Python runtime needs none, its files
 * say nothing).
 */
function runCode(n: Record<string, unknown>, fileLanguage?: string): { language: string; code: string } | undefined {
  if (isPlainObject(n.run) && typeof n.run.type === 'string' && typeof n.run.code === 'string')
    return { language: n.run.type, code: n.run.code }
  // TEA's expression node is a Python expression whose value goes to output_key (default result).
  if (isPlainObject(n.run) && n.run.type === 'expression' && typeof n.run.value === 'string') {
    const key = typeof n.run.output_key === 'string' ? n.run.output_key : 'result'
    return { language: 'python', code: `return {${JSON.stringify(key)}: (${n.run.value})}` }
  }
  const code = typeof n.run === 'string' ? n.run : typeof n.script === 'string' ? n.script : undefined
  if (code === undefined) return undefined
  if (typeof n.language === 'string') return { language: n.language, code }
  const first = code.trimStart()
  if (/^%\s*prolog\b/i.test(first)) return { language: 'prolog', code }
  if (/^--\s*lua\b/i.test(first)) return { language: 'lua', code }
  return fileLanguage === undefined ? undefined : { language: fileLanguage, code }
}

/** The node marker the loader reads to name the language when the build lacks its engine. */
export const LOWERED_LANGUAGE = Symbol('run: language')

/** Languages whose `run:` code becomes `<language>.run` (the prolog and lua features). */
const ENGINE_LANGUAGES = ['prolog', 'lua', 'python']

function onEngine(n: Record<string, unknown>, language: string, code: string): Record<string, unknown> {
  // The node's timeout goes to the action, which starts its clock once the engine is ready: starting the engine
  // (seconds on a small board) is not the code's time.
  const out: Record<string | symbol, unknown> = { ...without(n, ['language', 'run', 'script', 'timeout']), uses: `${language}.run` }
  out.with = { code, ...(typeof n.timeout === 'number' && { timeout: n.timeout }) }
  out[LOWERED_LANGUAGE] = language
  return out as Record<string, unknown>
}

function without(n: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  const out = { ...n }
  for (const k of keys) delete out[k]
  return out
}

function steps(n: Record<string, unknown>, fileLanguage: string | undefined): Record<string, unknown> {
  // A node's language: is its steps' (TEA): a step in another engine's language becomes that engine's action.
  return {
    ...without(unconsumed(n), ['language']),
    uses: 'flow.steps',
    with: { steps: stepsOnEngines(n, fileLanguage) },
    ...(n.output !== undefined && { output: n.output }),
  }
}

/** A node's steps, each in its engine's language where one is named (the step's, else the node's, else the file's). */
function stepsOnEngines(n: Record<string, unknown>, fileLanguage: string | undefined): unknown[] {
  const language = typeof n.language === 'string' ? n.language : fileLanguage
  return (n.steps as unknown[]).map((s) => (isPlainObject(s) ? stepOnEngine(s, language) : s))
}

function stepOnEngine(s: Record<string, unknown>, inherited: string | undefined): Record<string, unknown> {
  const code = runCode(s, inherited)
  if (!code || !ENGINE_LANGUAGES.includes(code.language))
    return code?.language === 'javascript' ? { ...without(s, ['language']), run: code.code } : s
  return { ...(typeof s.name === 'string' && { name: s.name }), uses: `${code.language}.run`, with: { code: code.code } }
}

function unconsumed(n: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [k, value] of Object.entries(n)) if (!CONSUMED.has(k)) out[k] = value
  return out
}

/**
 * The language `run:` code that does not compile as JavaScript looks like, for the loader's hint — never to run it
 * as that language: tea does not guess (TEA's runtimes did, and TEA's Python runtime runs every `run:` as Python).
 */
export function looksLike(code: string): 'python' | 'lua' | 'prolog' | undefined {
  const has = (re: RegExp): boolean => re.test(code)
  if (has(/:-|\bstate\(\s*\w+\s*,/) && has(/\.\s*$/)) return 'prolog'
  if (has(/^\s*(import\s+[\w.]+|from\s+[\w.]+\s+import\b|def\s+\w+\s*\(.*\)\s*:|elif\b|class\s+\w+.*:\s*$)/m)) return 'python'
  if (has(/\bstate\[\s*['"]|\b(True|False|None)\b|:\s*$/m)) return 'python'
  // A # comment line, an f-string, a comprehension, `x or []`, an inline if-else, str methods JavaScript lacks.
  if (has(/^\s*#(?!!)|\bf["']|\[[^\]\n]*\bfor\s+\w+(\s*,\s*\w+)*\s+in\s|\s(or|and)\s+(\[\]|None|True|False)/m)) return 'python'
  if (has(/=[^=\n]*\sif\s[^\n]*\selse\s|\.(lower|upper|strip)\(\)/)) return 'python'
  if (has(/^\s*local\s+\w+|\bthen\b|^\s*end\s*$|\.\.\s*["'\w]/m)) return 'lua'
  return undefined
}
