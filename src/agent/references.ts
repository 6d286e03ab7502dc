/**
 * The checks that need the whole agent: node names, goto/edge/fallback/interrupt targets, actions and their
 * static parameters, template syntax, and `run:` code syntax. They read the raw data defensively so that they
 * still report what they can when the structural pass found problems elsewhere.
 *
 * Checking a template or a `run:` body means compiling it, so what compiles is kept (`CompiledParts`, by node
 * index) and the engine runs it: one pass validates and compiles, nothing is compiled twice.
 */

import { buildInfo } from '../core/build-info.ts'
import { errorMessage, isTeaError } from '../core/errors.ts'
import type { Where } from '../core/issues.ts'
import { closest, isPlainObject } from '../core/util.ts'
import { listed, paramIssues, type Registry } from '../actions/registry.ts'
import {
  compileCondition,
  compileTemplate,
  compileValue,
  type CompiledValue,
  type Condition,
  type TemplateLimits,
} from '../template/index.ts'
import { compileCode } from '../code/compile.ts'
import type { Parsed } from './parse.ts'
import type { Problem } from './problems.ts'
import type { GotoRule } from './schema.ts'
import { teaAction, teaKey, teaMessage, UNSUPPORTED } from './tea-dialect.ts'
import { looksLike } from './run-language.ts'
import { FORBIDDEN, forbidCode } from './inline-code.ts'
import { LOWERED_LANGUAGE } from './tea-nodes.ts'

import { END, START, type CompiledParts } from './types.ts'

type Path = Array<string | number>

export interface References {
  problems: Problem[]
  /** What compiled, by node index. */
  compiled: CompiledParts[]
  /**
   * TEA's conditional edges (`when:`, `condition:`), lowered onto goto rules of their source node, in file order;
   * their conditions are in that node's `compiled.goto`.
   */
  routes: Map<string, GotoRule[]>
  /** Nodes whose action is a TEA action tea does not provide, by index: the message their run fails with. */
  unsupported: Map<number, string>
  /** What the file may keep as TEA's runtime does, said as warnings (a template in run: code that does not parse). */
  warnings: Problem[]
}

const RUN_TIME_NOTE = "; the template in this node's run: code is rendered when the node runs (as TEA renders it), so the node fails then"

export function checkReferences(data: Record<string, unknown>, parsed: Parsed, registry: Registry): References {
  const problems: Problem[] = []
  const warnings: Problem[] = []
  const compiled: CompiledParts[] = []
  const unsupported = new Map<number, string>()
  const at = (path: Path, code: Problem['code'], message: string, where?: Where): void => {
    problems.push({ code, message, where: { ...parsed.locate(path), ...where } })
  }
  /** A problem from an error that knows its own place inside the node (a template's field, the node of code). */
  const failed = (path: Path, code: Problem['code'], e: unknown): void => {
    if (isTeaError(e)) at(path, code, e.message, e.where)
    else at(path, 'AGENT_INVALID', e instanceof Error ? e.message : String(e))
  }
  const nodes = Array.isArray(data.nodes) ? data.nodes : []
  // The run: languages: JavaScript and each feature's (lowered onto its `<language>.run` by tea-nodes.ts).
  const languages = ['javascript', ...(registry.features?.languages ?? [])]
  const checkLanguage = (path: Path, value: unknown): void => {
    if (typeof value === 'string' && !languages.includes(value)) at(path, 'AGENT_INVALID', `must be ${listed(languages, 'or')}`)
  }
  if (isPlainObject(data.settings)) checkLanguage(['settings', 'run_language'], data.settings.run_language)
  const mcpServers: unknown = isPlainObject(data.settings) && isPlainObject(data.settings.mcp) ? data.settings.mcp.servers : undefined
  const names = new Map<string, number>()
  nodes.forEach((n, i) => {
    if (!isPlainObject(n) || typeof n.name !== 'string') return
    if (n.name === END || n.name === START) at(['nodes', i, 'name'], 'AGENT_INVALID', `'${n.name}' is reserved and cannot name a node`)
    const first = names.get(n.name)
    if (first !== undefined) {
      at(
        ['nodes', i, 'name'],
        'DUPLICATE_NODE',
        `duplicate node name '${n.name}' (first defined at line ${parsed.locate(['nodes', first]).line})`,
      )
    } else names.set(n.name, i)
  })
  const target = (path: Path, name: unknown, what: string, allowEnd = true): void => {
    if (typeof name !== 'string' || names.has(name) || (allowEnd && name === END)) return
    const near = closest(name, names.keys())
    at(path, 'UNKNOWN_NODE', `${what} '${name}' is not a node of this agent${near.length ? ` (did you mean '${near[0]}'?)` : ''}`)
  }
  const inlineCode = !(isPlainObject(data.settings) && data.settings.allow_inline_code === false)
  // A value the schema refuses is reported by it; here it falls back to the default.
  const maxBytes = isPlainObject(data.settings) ? data.settings.max_template_bytes : undefined
  const limits: TemplateLimits = typeof maxBytes === 'number' && Number.isInteger(maxBytes) && maxBytes > 0 ? { maxBytes } : {}
  // A file written for TEA (it declares TEA's state_schema) reads a missing key as none in its values, as TEA's
  // DotDict does (docs/agents.md, "The undefined rule"); conditions keep tea's rule, where a missing key is false.
  const valueLimits: TemplateLimits = teaTemplates(data) ? { ...limits, missingIsNone: true } : limits

  nodes.forEach((n, i) => {
    const parts: CompiledParts = {}
    compiled[i] = parts
    if (!isPlainObject(n)) return
    const here = ['nodes', i]
    const label = typeof n.name === 'string' ? n.name : `#${i + 1}`
    const kinds = ['uses', 'action', 'run'].filter((k) => n[k] !== undefined)
    const node = { node: label }
    checkLanguage([...here, 'language'], n.language)
    // A TEA node kind tea lacks (`type: dynamic_parallel`, `steps:`…) is reported by its key, not as a node with nothing to do.
    const teaKind = (): boolean =>
      (n as Record<symbol, unknown>)[UNSUPPORTED] !== undefined ||
      Object.keys(n).some((k) => ['planned', 'not in tea'].includes(teaKey(['nodes', i, k], n[k])?.feature.status ?? ''))
    if (kinds.length === 0 && !teaKind()) at(here, 'AGENT_INVALID', "needs 'uses:' (an action) or 'run:' (code)", node)
    else if (kinds.length > 1) at(here, 'AGENT_INVALID', `has both ${kinds.map((k) => `'${k}:'`).join(' and ')}; give one`, node)
    if (kinds.length !== 1) return
    if (typeof n.run === 'string') {
      // TEA's runtime reads neither on a run: node (yaml_nodes.py: inline code wins); tea warns and sets them aside.
      for (const k of ['with', 'output'] as const)
        if (n[k] !== undefined)
          at(
            [...here, k],
            'TEA_UNSUPPORTED',
            `'${k}:' goes with 'uses:', not 'run:'; TEA's runtime does not read it on a run: node either, and tea sets it aside (the code's returned mapping is merged into the state)`,
            node,
          )
      if (!inlineCode) at([...here, 'run'], 'INLINE_CODE_FORBIDDEN', FORBIDDEN, node)
      else {
        try {
          parts.code = compileCode(n.run, node)
        } catch (e) {
          const like = looksLike(n.run)
          if (like) {
            const message = `run: code is not JavaScript; it looks like ${titled(like)} (TEA's runtimes run it as that): add \`language: ${like}\` to the node, or \`settings.run_language: ${like}\` to the file (${errorMessage(e).replace(/^node '[^']*': /, '')})`
            at([...here, 'run'], 'CODE_ERROR', message, node)
          } else failed([...here, 'run'], 'CODE_ERROR', e)
        }
      }
    }
    const actionName = typeof n.uses === 'string' ? n.uses : typeof n.action === 'string' ? n.action : undefined
    if (!inlineCode) forbidCode(n, actionName, registry, here, node, at)
    const action = actionName === undefined ? undefined : registry.get(actionName)
    const language = (n as Record<symbol, unknown>)[LOWERED_LANGUAGE]
    if (actionName !== undefined && !action && typeof language === 'string') {
      const builds = registry.features?.lacking(actionName)?.builds ?? []
      const have = builds.length ? `the ${listed(builds)} builds have it` : 'no release build has it'
      const message = `run: is ${titled(language)}; this build (${buildInfo().target}) lacks the '${language}' feature: ${have} (or port the code to JavaScript)`
      at(here, 'CODE_ERROR', message, node)
    } else if (actionName !== undefined && !action) {
      const tea = teaAction(actionName)
      const path = [...here, n.uses !== undefined ? 'uses' : 'action']
      if (tea && (tea.feature.status === 'planned' || tea.feature.status === 'not in tea')) {
        const message = teaMessage(`action '${actionName}'`, tea.feature)
        at(path, 'TEA_UNSUPPORTED', message, node)
        unsupported.set(i, message)
      } else failed(path, 'UNKNOWN_ACTION', registry.unknown(actionName, node))
    }
    const withValue = isPlainObject(n.with) ? withoutKeys(n.with, action?.raw) : n.with
    if (action?.raw?.length && isPlainObject(n.with)) {
      // TEA renders run: code as a template when the node runs (yaml_nodes.py), so a template there that does not
      // parse fails that node when it runs, not the file: tea says so now and fails the node as TEA does.
      const found: Problem[] = []
      templates(selected(n.with, action.raw), [...here, 'with'], label, 'with', found, parsed)
      if (typeof language === 'string') warnings.push(...found.map((w) => ({ ...w, message: `${w.message}${RUN_TIME_NOTE}` })))
      else problems.push(...found)
    }
    const w = compileTree(withValue ?? {}, [...here, 'with'], label, 'with', problems, parsed, valueLimits)
    if (w) parts.with = w
    if (isPlainObject(n.output)) {
      const o = compileTree(n.output, [...here, 'output'], label, 'output', problems, parsed, valueLimits)
      if (o) parts.output = o
    }
    if (action?.refers && isPlainObject(n.with)) {
      for (const key of action.refers.node ?? []) {
        const name = n.with[key]
        if (typeof name === 'string' && !/\{[{%]/.test(name)) target([...here, 'with', key], name, `${action.name} ${key} node`, false)
      }
      for (const key of action.refers.action ?? []) {
        // One action name, or a list of them (reason.react's `tools`).
        const value = n.with[key]
        const names = Array.isArray(value) ? value.map((name, i) => [name, [key, i]] as const) : [[value, [key]] as const]
        for (const [name, path] of names) {
          if (typeof name !== 'string' || /\{[{%]/.test(name) || registry.get(name)) continue
          if (name.startsWith('mcp.')) {
            const problem = mcpToolProblem(name, mcpServers)
            if (problem) at([...here, 'with', ...path], 'UNKNOWN_ACTION', `${action.name} ${key}: ${problem}`, node)
            continue
          }
          const tea = teaAction(name)
          if (tea && (tea.feature.status === 'planned' || tea.feature.status === 'not in tea')) {
            // A TEA action tea lacks, as a tool: the node fails when it runs, naming it.
            const message = teaMessage(`${action.name} ${key}: action '${name}'`, tea.feature)
            at([...here, 'with', ...path], 'TEA_UNSUPPORTED', message, node)
            if (!unsupported.has(i)) unsupported.set(i, message)
          } else {
            failed([...here, 'with', ...path], 'UNKNOWN_ACTION', registry.unknown(name, { node: label, field: `with.${path.join('.')}` }))
          }
        }
      }
    }
    if (action && (n.with === undefined || isPlainObject(n.with))) {
      const templated = templatedPaths(n.with ?? {}, [])
      for (const issue of paramIssues(action, n.with ?? {})) {
        const path = issue.path ?? []
        if (issue.code !== 'unknown_parameter' && templated.some((t) => startsWith(path, t) || startsWith(t, path))) continue
        at([...here, 'with', ...path], 'INVALID_PARAMS', issue.message, { node: label, field: ['with', ...path].join('.') })
      }
    }
    // TEA's `next:` (a node name, or {condition, to} rules) is goto under another name.
    const routeKey = n.goto === undefined && n.next !== undefined ? 'next' : 'goto'
    if (n.goto !== undefined && n.next !== undefined)
      at([...here, 'next'], 'AGENT_INVALID', "has both goto: and next: (TEA's name for it); give one", node)
    const route = n[routeKey]
    if (typeof route === 'string') target([...here, routeKey], route, 'goto target')
    else if (Array.isArray(route)) {
      const tests: Array<Condition | undefined> = (parts.goto = [])
      const testKey = routeKey === 'next' ? 'condition' : 'if'
      route.forEach((rule, r) => {
        if (!isPlainObject(rule)) return
        target([...here, routeKey, r, 'to'], rule.to, 'goto target')
        const test = rule[testKey]
        if (typeof test === 'string' || typeof test === 'boolean') {
          try {
            tests[r] = compileCondition(test, { node: label, field: `${routeKey}[${r}].${testKey}` }, limits)
          } catch (e) {
            failed([...here, routeKey, r, testKey], 'TEMPLATE_SYNTAX', e)
          }
        }
      })
    }
    if (isPlainObject(n.on_error)) target([...here, 'on_error', 'fallback'], n.on_error.fallback, 'on_error.fallback', false)
  })

  const edges = Array.isArray(data.edges) ? data.edges : []
  const routes = new Map<string, GotoRule[]>()
  const plainFrom = new Map<string, number>()
  edges.forEach((e, i) => {
    if (!isPlainObject(e)) return
    const source = nodes.find((n) => isPlainObject(n) && n.name === e.from)
    if (Array.isArray(e.to) && isPlainObject(source) && source.goto !== undefined) {
      at(['edges', i], 'AGENT_INVALID', 'has a goto and a parallel edge; goto wins, so the fan-out would never run', {
        node: String(e.from),
      })
    }
    if (e.from !== START) target(['edges', i, 'from'], e.from, 'edge source', false)
    if (e.parallel_strategy === 'remote')
      at(
        ['edges', i, 'parallel_strategy'],
        'TEA_UNSUPPORTED',
        "'parallel_strategy: remote' (branches on other hosts over SSH) is a TEA feature that tea does not provide: tea runs the branches concurrently in this process",
      )
    if (Array.isArray(e.to) && e.to.some(isPlainObject)) {
      // TEA's Python fails to build such an edge (the list is not a node name) and its Rust runtime has no such form.
      at(
        ['edges', i, 'to'],
        'AGENT_INVALID',
        "to: is a list of mappings ({target, condition}), which no TEA runtime reads (TEA's loader fails on it too): write one edge per target with when: or condition:, or goto: rules on the node",
      )
      return
    }
    if (Array.isArray(e.to)) {
      e.to.forEach((t, j) => target(['edges', i, 'to', j], t, 'parallel branch', false))
      if (e.fan_in === undefined)
        at(['edges', i], 'AGENT_INVALID', `a parallel edge (to: [...]) needs fan_in: the node that joins the branches`)
      else target(['edges', i, 'fan_in'], e.fan_in, 'fan_in node', false)
      return
    }
    target(['edges', i, 'to'], e.to, 'edge target')
    if (e.type === 'parallel') {
      // TEA's spelling of a fan-out: one edge per branch; load.ts gathers them by source.
      if (e.fan_in === undefined) at(['edges', i], 'AGENT_INVALID', 'a type: parallel edge needs fan_in: the node that joins the branches')
      else target(['edges', i, 'fan_in'], e.fan_in, 'fan_in node', false)
      const first = edges.findIndex((o) => isPlainObject(o) && o.type === 'parallel' && o.from === e.from)
      const other = edges[first] as Record<string, unknown>
      if (first !== i && other.fan_in !== e.fan_in)
        at(
          ['edges', i, 'fan_in'],
          'AGENT_INVALID',
          `the parallel edges from '${String(e.from)}' name different fan_in nodes ('${String(other.fan_in)}' in edges[${first}])`,
        )
      if (isPlainObject(source) && source.goto !== undefined)
        at(['edges', i], 'AGENT_INVALID', 'has a goto and a parallel edge; goto wins, so the fan-out would never run', {
          node: String(e.from),
        })
      return
    }
    if (typeof e.from !== 'string' || typeof e.to !== 'string' || e.from === START) {
      if (e.when !== undefined || e.condition !== undefined)
        at(['edges', i], 'AGENT_INVALID', 'a conditional edge from __start__ is not supported: route from the first node instead')
      return
    }
    const conditional = e.when !== undefined || e.condition !== undefined
    if (conditional && isPlainObject(source) && source.goto !== undefined) {
      at(['edges', i], 'AGENT_INVALID', `node '${e.from}' has a goto and a conditional edge; goto wins, so the edge would never be taken`, {
        node: e.from,
      })
      return
    }
    const rules = routes.get(e.from)
    if (!conditional && !rules) {
      // Several plain edges from one node: only one can be taken, and which one depends on the runtime.
      const first = plainFrom.get(e.from)
      if (first !== undefined)
        at(
          ['edges', i],
          'AGENT_INVALID',
          `node '${e.from}' already has an edge without a condition (edges[${first}]); give each edge from it a when: condition, or use goto`,
          { node: e.from },
        )
      else plainFrom.set(e.from, i)
      return
    }
    // A conditional edge: this node's edges become goto rules, tried in file order (TEA tries them in order too).
    const index = nodes.findIndex((n) => isPlainObject(n) && n.name === e.from)
    if (index === -1) return
    const parts = (compiled[index] ??= {})
    const tests = (parts.goto ??= [])
    const list = rules ?? []
    if (!rules) {
      routes.set(e.from, list)
      const plain = plainFrom.get(e.from)
      // A plain edge written before the first conditional one is tried first, as TEA does: it always wins.
      if (plain !== undefined)
        at(
          ['edges', plain],
          'AGENT_INVALID',
          `node '${e.from}' has an edge without a condition before its conditional edges, so they would never be taken; put it last as the fallback`,
          { node: e.from },
        )
    }
    try {
      const test = edgeCondition(
        e.when,
        e.condition,
        { node: e.from, field: `edges[${i}].${e.condition === undefined ? 'when' : 'condition'}` },
        limits,
      )
      tests[list.length] = test
      list.push(test === undefined ? { to: e.to } : { if: conditionText(e.when, e.condition), to: e.to })
    } catch (err) {
      failed(['edges', i, e.condition === undefined ? 'when' : 'condition'], 'TEMPLATE_SYNTAX', err)
    }
  })
  const config = isPlainObject(data.config) ? data.config : {}
  for (const key of ['interrupt_before', 'interrupt_after'] as const) {
    const list = config[key]
    if (Array.isArray(list)) list.forEach((name, i) => target(['config', key, i], name, `config.${key} entry`, false))
  }
  return { problems, compiled, routes, unsupported, warnings }
}

/**
 * Compiles a template tree (a `with:` or `output:` block) in one go. When that fails, every string is compiled on
 * its own so that each bad template is reported with its own place, not only the first.
 */
function compileTree(
  value: unknown,
  path: Path,
  node: string,
  field: string,
  problems: Problem[],
  parsed: Parsed,
  limits: TemplateLimits,
): CompiledValue | undefined {
  try {
    return compileValue(value, { node, field }, limits)
  } catch {
    const before = problems.length
    templates(value, path, node, field, problems, parsed)
    if (problems.length === before)
      throw new Error(`internal: ${field} of node '${node}' failed to compile as a whole but not string by string`)
    return undefined
  }
}

/** The params the engine renders: all but those the action renders itself (Action.raw). */
export function withoutKeys(params: Record<string, unknown>, keys: readonly string[] | undefined): Record<string, unknown> {
  if (!keys?.length) return params
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(params)) if (!keys.includes(k)) out[k] = v
  return out
}

function selected(params: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const k of keys) if (Object.hasOwn(params, k)) out[k] = params[k]
  return out
}

function templates(value: unknown, path: Path, node: string, field: string, problems: Problem[], parsed: Parsed): void {
  if (typeof value === 'string') {
    try {
      compileTemplate(value, { node, field })
    } catch (e) {
      const inside = isTeaError(e) ? e.where : undefined
      problems.push({
        code: 'TEMPLATE_SYNTAX',
        message: isTeaError(e) ? e.message : String(e),
        where: { ...parsed.locate(path), ...inside },
      })
    }
  } else if (Array.isArray(value)) value.forEach((v, i) => templates(v, [...path, i], node, `${field}[${i}]`, problems, parsed))
  else if (isPlainObject(value))
    for (const [k, v] of Object.entries(value)) templates(v, [...path, k], node, `${field}.${k}`, problems, parsed)
}

/** Paths of the strings in `value` that contain template syntax (their type is only known after rendering). */
function templatedPaths(value: unknown, path: Path): Path[] {
  if (typeof value === 'string') return /\{\{|\{%/.test(value) ? [path] : []
  if (Array.isArray(value)) return value.flatMap((v, i) => templatedPaths(v, [...path, i]))
  if (isPlainObject(value)) return Object.entries(value).flatMap(([k, v]) => templatedPaths(v, [...path, k]))
  return []
}

/**
 * Whether the file's templates follow TEA's rule for a missing key (none, not undefined): a file that declares
 * TEA's `state_schema`, a key only TEA's runtimes read, was written for them.
 */
function teaTemplates(data: Record<string, unknown>): boolean {
  return data.state_schema !== undefined
}

/**
 * Why `name` (`mcp.<server>.<tool>` or `mcp.<server>`) cannot be a tool of the agent's MCP servers, if it cannot:
 * its server must be in settings.mcp.servers. Its tools are known only once it runs.
 */
function mcpToolProblem(name: string, servers: unknown): string | undefined {
  const server = name.split('.')[1] ?? ''
  if (isPlainObject(servers) && isPlainObject(servers[server])) return undefined
  const known = isPlainObject(servers) ? Object.keys(servers) : []
  return `'${name}' names MCP server '${server}', which settings.mcp.servers does not have${known.length ? ` (it has: ${known.join(', ')})` : ''}`
}

function startsWith(path: Path, prefix: Path): boolean {
  return prefix.length <= path.length && prefix.every((p, i) => p === path[i])
}

/**
 * The test of one of TEA's conditional edges, as TEA's `evaluate_condition` reads it: `when: true|false` (or the
 * strings), `when: "!flag"` and `when: "flag"` (a state key), a template or a bare expression; or `condition:`, an
 * expression (or `{type: expression, value}`), taken when it is truthy — or, with `when: false`, when it is not.
 * Undefined means the edge is always taken.
 */
function edgeCondition(
  when: unknown,
  condition: unknown,
  site: { node: string; field: string },
  limits: TemplateLimits,
): Condition | undefined {
  if (condition !== undefined) {
    const expr = isPlainObject(condition) ? condition.value : condition
    if (isPlainObject(condition) && condition.type !== 'expression')
      throw new Error(`unknown condition type '${String(condition.type)}' (TEA knows only 'expression')`)
    if (typeof expr !== 'string') throw new Error('condition must be an expression string or {type: expression, value}')
    const test = conditionOf(expr, site, limits)
    const wanted = when === undefined ? true : flag(when)
    if (wanted === undefined) throw new Error(`with condition:, when: must be true or false, not '${String(when)}'`)
    return wanted ? test : (scope) => !test(scope)
  }
  if (when === undefined) return undefined
  const constant = flag(when)
  if (constant !== undefined) return constant ? undefined : () => false
  if (typeof when !== 'string') throw new Error('when: must be true, false or a condition')
  return conditionOf(when, site, limits)
}

const LITERALS = new Set(['True', 'False', 'None', 'true', 'false', 'none'])

/**
 * TEA's `evaluate_condition` (yaml_templates.py), which reads `when:` and `condition:` alike: `flag` and `!flag`
 * name a state key; anything else is an expression or a template.
 */
function conditionOf(expr: string, site: { node: string; field: string }, limits: TemplateLimits): Condition {
  const text = expr.trim()
  const bare = /^(!)?\s*([A-Za-z_][A-Za-z0-9_]*)$/.exec(text)
  if (bare && (bare[1] !== undefined || !LITERALS.has(bare[2]!)))
    return compileCondition(`${bare[1] ? 'not ' : ''}state.${bare[2]}`, site, limits)
  return compileCondition(text, site, limits)
}

function flag(v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v
  if (typeof v === 'string' && /^(true|false)$/i.test(v.trim())) return v.trim().toLowerCase() === 'true'
  return undefined
}

function conditionText(when: unknown, condition: unknown): string {
  const expr = condition === undefined ? String(when) : String(isPlainObject(condition) ? condition.value : condition)
  return condition !== undefined && flag(when) === false ? `not (${expr})` : expr
}

/** A language's name as written in prose: `Python` for `python`. */
function titled(language: string): string {
  return language[0]!.toUpperCase() + language.slice(1)
}
