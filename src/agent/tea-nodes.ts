/**
 * TEA's node kinds, lowered onto tea's own nodes before the file is validated, so the rest of the loader, the
 * engine and its checkpoints see plain action nodes:
 * - `type: dynamic_parallel` with `items`, `item_var`, `index_var`, `max_concurrency`, `fail_fast` and `action:`
 *   (`{uses, with, output}`) or `steps:` becomes a `flow.map` node with TEA's defaults (`fail_fast: false`) and
 *   result shape (`results: branches`, TEA's ParallelFlowResult); its results go to `output` (default
 *   `parallel_results`), and its `fan_in:` node is where it goes next when no edge or goto says otherwise;
 * - `type: while_loop` with `condition`, `max_iterations` and `body:` becomes a `flow.while` node;
 * - a node with `steps:` becomes a `flow.steps` node;
 * - `run:` code in Python, Lua or Prolog becomes a `python.run`, `lua.run` or `prolog.run` node, and JavaScript a
 *   plain `run:` node. The language is pinned by `language:`, `run: {type, code}`, a first line `% prolog` /
 *   `-- lua`, or `settings.run_language`; otherwise it is chosen as TEA's runtimes choose it (run-language.ts);
 * - a `reflection.loop`'s generator, evaluator and corrector `run:` code is in the file's language unless it
 *   says `language:` (TEA's reflection code is Python).
 * What cannot be lowered (`subgraph:`) is left as written, and the loader names it as a TEA
 * feature tea does not have yet (tea-dialect.ts). Problems inside a lowered node point at the node.
 */

import { isPlainObject } from '../core/util.ts'
import { chooseLanguage, type LanguageChooser, languageChooser, type RunLanguage } from './run-language.ts'
import { readSubAgent, type SubAgent } from './tea-subgraph.ts'

const MAP_KEYS = ['items', 'item_var', 'index_var', 'max_concurrency', 'fail_fast'] as const
/** What the lowering consumes; any other key stays on the node, so the loader still reports what it does not know. */
const CONSUMED = new Set<string>([...MAP_KEYS, 'type', 'action', 'steps', 'fan_in', 'output', 'language'])

/**
 * Rewrites, in place, the TEA node kinds of `data.nodes` that tea runs, and returns the language each unmarked
 * `run:` body was given (run-language.ts); `engines` are the `run:` languages besides JavaScript (the registry's
 * features: src/feature-list.ts), `recorded` the languages a resumed run started with, `file` the agent's path (a
 * `subgraph:` is read from beside it).
 */
export function lowerTeaNodes(
  data: Record<string, unknown>,
  engines: readonly string[],
  recorded?: Readonly<Record<string, string>>,
  file?: string,
): RunLanguage[] {
  if (!Array.isArray(data.nodes)) return []
  const edgeSources = new Set((Array.isArray(data.edges) ? data.edges : []).filter(isPlainObject).map((e) => e.from))
  const pinned = isPlainObject(data.settings) && typeof data.settings.run_language === 'string' ? data.settings.run_language : undefined
  const chooser: EngineChooser = { ...languageChooser(unmarkedBodies(data.nodes), pinned, recorded), engines }
  data.nodes = data.nodes.map((n) => {
    if (!isPlainObject(n)) return n
    if (n.type === 'dynamic_parallel' && n.subgraph === undefined && (isPlainObject(n.action) || Array.isArray(n.steps)))
      return dynamicParallel(n, edgeSources, chooser)
    if (
      n.type === 'dynamic_parallel' &&
      typeof n.subgraph === 'string' &&
      file !== undefined &&
      n.action === undefined &&
      n.steps === undefined
    ) {
      // A sub-agent tea cannot take as steps stays as written: the loader names `subgraph:` as a TEA feature.
      const sub = readSubAgent(n.subgraph, file)
      if (typeof sub !== 'string') return dynamicParallel(n, edgeSources, chooser, sub)
    }
    if (n.type === 'while_loop' && Array.isArray(n.body)) return whileLoop(n)
    if (n.type === undefined && Array.isArray(n.steps) && n.uses === undefined && n.run === undefined) return steps(n, chooser)
    if ((n.uses ?? n.action) === 'reflection.loop') return reflectionCode(n, chooser)
    const code = runCode(n, chooser, String(n.name))
    if (code && chooser.engines.includes(code.language)) return onEngine(n, code.language, code.code)
    if (code?.language === 'javascript') return { ...without(n, ['language', 'script']), run: code.code }
    return n
  })
  return chooser.choices
}

/** The `run:` bodies that name no language, in file order: the ones whose language is chosen. */
function unmarkedBodies(nodes: unknown[]): string[] {
  const bodies: string[] = []
  const add = (n: Record<string, unknown>): void => {
    const code = typeof n.run === 'string' ? n.run : typeof n.script === 'string' ? n.script : undefined
    if (code !== undefined && n.language === undefined && marked(code) === undefined) bodies.push(code)
  }
  for (const n of nodes) {
    if (!isPlainObject(n)) continue
    add(n)
    if (Array.isArray(n.steps) && n.language === undefined) for (const s of n.steps) if (isPlainObject(s)) add(s)
    // A reflection loop's code (TEA's is Python) says what the file's language is too.
    if ((n.uses ?? n.action) === 'reflection.loop' && isPlainObject(n.with))
      for (const role of ['generator', 'evaluator', 'corrector']) if (isPlainObject(n.with[role])) add(n.with[role])
  }
  return bodies
}

/** TEA's first-line markers: `% prolog`, `-- lua`. */
function marked(code: string): string | undefined {
  const first = code.trimStart()
  if (/^%\s*prolog\b/i.test(first)) return 'prolog'
  if (/^--\s*lua\b/i.test(first)) return 'lua'
  return undefined
}

function dynamicParallel(
  n: Record<string, unknown>,
  edgeSources: Set<unknown>,
  chooser: EngineChooser,
  sub?: SubAgent,
): Record<string, unknown> {
  const out = unconsumed(n)
  const args: Record<string, unknown> = {}
  for (const k of MAP_KEYS) if (n[k] !== undefined) args[k] = n[k]
  if (args.items !== undefined) args.items = noneIsEmpty(args.items)
  // TEA's defaults and result shape: a failed item does not stop the others, and each result is a
  // ParallelFlowResult ({branch, success, state, error, timing_ms}), which TEA's fan-in code reads.
  args.fail_fast ??= false
  args.results = 'branches'
  if (isPlainObject(n.action)) {
    const { uses, action, with: params, output } = n.action
    args.action = { uses: uses ?? action, ...(params !== undefined && { with: params }), ...(output !== undefined && { output }) }
  } else if (sub) {
    delete out.subgraph
    delete out.input
    // TEA's sub-agent starts from the `input:` mapping rendered for the item, not from this agent's state.
    args.input = isPlainObject(n.input) ? n.input : {}
    args.steps = subAgentSteps(String(n.name), sub, chooser)
  } else args.steps = stepsOnEngines(n, chooser)
  out.uses = 'flow.map'
  out.with = args
  out.output = { [typeof n.output === 'string' ? n.output : 'parallel_results']: '{{ result.result }}' }
  if (typeof n.fan_in === 'string' && out.goto === undefined && out.next === undefined && !edgeSources.has(n.name)) out.goto = n.fan_in
  return out
}

/**
 * TEA's dynamic_parallel runs no item when `items` comes out as none (yaml_nodes.py): `{{ expr }}` becomes
 * `{{ expr if expr is not none else [] }}`, the test lenient as `is none` is, so a missing key gives no items too.
 */
function noneIsEmpty(items: unknown): unknown {
  if (typeof items !== 'string') return items
  const only = /^\s*\{\{-?([^{}]*?)-?\}\}\s*$/.exec(items)
  if (!only) return items
  const expr = only[1]!.trim()
  return `{{ (${expr}) if (${expr}) is not none else [] }}`
}

/**
 * A reflection.loop's generator, evaluator and corrector code is chosen like a node's (keyed `node.role`) unless it
 * names its own language; JavaScript, where nothing else decides, is left unsaid.
 */
function reflectionCode(n: Record<string, unknown>, chooser: EngineChooser): Record<string, unknown> {
  if (!isPlainObject(n.with)) return n
  const params: Record<string, unknown> = { ...n.with }
  for (const role of ['generator', 'evaluator', 'corrector']) {
    const part = params[role]
    if (!isPlainObject(part) || typeof part.run !== 'string' || part.language !== undefined) continue
    const language = chooseLanguage(chooser, `${String(n.name)}.${role}`, part.run)
    if (language !== 'javascript' || chooser.choices.at(-1)?.reason !== 'default') params[role] = { ...part, language }
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
 * The language and code of a `run:` node (or step): the one it names (TEA's three ways), or the one chosen for it
 * (run-language.ts, which records the choice under `key`).
 */
function runCode(
  n: Record<string, unknown>,
  chooser: EngineChooser,
  key: string,
  inherited?: string,
): { language: string; code: string } | undefined {
  const pin = (language: string, code: string) => {
    chooser.choices.push({ key, language, reason: 'named' })
    return { language, code }
  }
  if (isPlainObject(n.run) && typeof n.run.type === 'string' && typeof n.run.code === 'string') return pin(n.run.type, n.run.code)
  // TEA's expression node is a Python expression whose value goes to output_key (default result).
  if (isPlainObject(n.run) && n.run.type === 'expression' && typeof n.run.value === 'string') {
    const key = typeof n.run.output_key === 'string' ? n.run.output_key : 'result'
    return pin('python', `return {${JSON.stringify(key)}: (${n.run.value})}`)
  }
  const code = typeof n.run === 'string' ? n.run : typeof n.script === 'string' ? n.script : undefined
  if (code === undefined) return undefined
  if (typeof n.language === 'string') return pin(n.language, code)
  if (inherited !== undefined) return pin(inherited, code)
  const language = marked(code)
  if (language !== undefined) return pin(language, code)
  return { language: chooseLanguage(chooser, key, code), code }
}

/** The node marker the loader reads to name the language when the build lacks its engine. */
export const LOWERED_LANGUAGE = Symbol('run: language')

/** The chooser, with the languages whose `run:` code becomes `<language>.run` (each a feature's). */
interface EngineChooser extends LanguageChooser {
  engines: readonly string[]
}

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

function steps(n: Record<string, unknown>, chooser: EngineChooser): Record<string, unknown> {
  // A node's language: is its steps' (TEA): a step in another engine's language becomes that engine's action.
  return {
    ...without(unconsumed(n), ['language']),
    uses: 'flow.steps',
    with: { steps: stepsOnEngines(n, chooser) },
    ...(n.output !== undefined && { output: n.output }),
  }
}

/**
 * A sub-agent's nodes as steps, each in its engine's language: the sub-agent's unmarked bodies are chosen among
 * themselves (it is its own file), and the choices are recorded under `<node>.subgraph.<its node>`.
 */
function subAgentSteps(node: string, sub: SubAgent, chooser: EngineChooser): unknown[] {
  const prefix = `${node}.subgraph.`
  const recorded = chooser.recorded
    ? Object.fromEntries(Object.entries(chooser.recorded).flatMap(([k, l]) => (k.startsWith(prefix) ? [[k.slice(prefix.length), l]] : [])))
    : undefined
  const own = { ...languageChooser(unmarkedBodies(sub.nodes), sub.runLanguage, recorded), engines: chooser.engines }
  const steps = sub.nodes.map((s) => stepOnEngine(s, own, String(s.name), undefined))
  for (const c of own.choices) chooser.choices.push({ ...c, key: `${prefix}${c.key}` })
  return steps
}

/** A node's steps, each in its engine's language: the step's, else the node's, else the one chosen for it. */
function stepsOnEngines(n: Record<string, unknown>, chooser: EngineChooser): unknown[] {
  const language = typeof n.language === 'string' ? n.language : undefined
  return (n.steps as unknown[]).map((s, i) => (isPlainObject(s) ? stepOnEngine(s, chooser, `${String(n.name)}.steps[${i}]`, language) : s))
}

function stepOnEngine(
  s: Record<string, unknown>,
  chooser: EngineChooser,
  key: string,
  inherited: string | undefined,
): Record<string, unknown> {
  const code = runCode(s, chooser, key, inherited)
  if (!code || !chooser.engines.includes(code.language))
    return code?.language === 'javascript' ? { ...without(s, ['language', 'script']), run: code.code } : s
  return { ...(typeof s.name === 'string' && { name: s.name }), uses: `${code.language}.run`, with: { code: code.code } }
}

function unconsumed(n: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [k, value] of Object.entries(n)) if (!CONSUMED.has(k)) out[k] = value
  return out
}
