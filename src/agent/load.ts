/**
 * Agent file → AgentSpec, reporting every problem at once with its line and column (SPEC §3.2, issue: `tea
 * validate`). Three passes: YAML syntax; structure (valibot, strict objects); cross-references — node names, goto
 * and edge targets, actions and their static parameters, template syntax, `run:` code syntax. `tea run` uses the
 * same function, so nothing runs from a file `tea validate` would reject.
 */

import { readFileSync } from 'node:fs'
import { basename, dirname, resolve } from 'node:path'
import * as v from 'valibot'
import { TeaError } from '../core/errors.ts'
import { sha256Hex } from '../core/sha256.ts'
import { closest, isPlainObject } from '../core/util.ts'
import type { Registry } from '../actions/registry.ts'
import type { Parsed } from './parse.ts'
import { type AgentParse, parseAgentYaml } from './parse-cache.ts'
import { formatProblem, invalidAgent, type Problem } from './problems.ts'
import { AgentSchema, keysAt, LlmSettingsSchema, type OnErrorSchema, type ShellProviderSchema, type AgentFile } from './schema.ts'
import { teaKey, teaMessage, UNSUPPORTED } from './tea-dialect.ts'
import { lowerTeaSpellings } from './tea-spellings.ts'
import { extractionPrompt, parseExtractionSchema } from '../actions/validate/extraction.ts'
import { ltmBackendUnsupported } from '../actions/ltm/index.ts'
import { DEFAULT_RUN_MEMORY_MB, type AgentSettingsView } from '../actions/types.ts'
import { checkReferences, type References } from './references.ts'
import { expandSettingsEnv } from './env-vars.ts'
import { shellPermissionWarnings } from '../llm/shell-provider.ts'
import type { ShellProviderConfig } from '../llm/types.ts'
import type { RunLanguage } from './run-language.ts'
import { lowerTeaNodes } from './tea-nodes.ts'
import { DEFAULT_MAX_TEMPLATE_BYTES } from '../template/index.ts'
import { START, type AgentSpec, type NodeSpec } from './types.ts'

export interface LoadResult {
  spec?: AgentSpec
  problems: Problem[]
  /**
   * TEA features tea does not provide (code TEA_UNSUPPORTED), each named: the file loads without them — a key is set
   * aside, and a node that needs one fails with TEA_UNSUPPORTED when the run reaches it (NodeSpec.unsupported).
   */
  warnings: Problem[]
}

export function loadAgentFile(path: string, registry: Registry): LoadResult {
  return loadAgentText(readAgentFile(path), resolve(path), registry)
}

/** Throws AGENT_INVALID listing every problem; `warn` gets each warning (TEA features tea does not provide). */
export function requireAgent(path: string, registry: Registry, warn?: (line: string) => void): AgentSpec {
  return specOf(path, loadAgentFile(path, registry), warn)
}

/**
 * requireAgent for a registry that loads its actions on first use: the actions the file names are loaded before
 * they are checked.
 */
export async function requireAgentLoading(
  path: string,
  registry: Registry,
  warn?: (line: string) => void,
  how: Loading = {},
): Promise<AgentSpec> {
  return specOf(path, await loadAgentFileLoading(path, registry, how), warn)
}

/** loadAgentFile for a registry that loads its actions on first use (as requireAgentLoading). */
export async function loadAgentFileLoading(path: string, registry: Registry, how: Loading = {}): Promise<LoadResult> {
  const around = how.around ?? ((load) => load())
  const draft = around(() => draftAgent(readAgentFile(path), resolve(path), registry, how))
  await registry.load(actionsNamed(draft))
  return around(() => loadAgentDraft(draft, registry))
}

function readAgentFile(path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch (e) {
    throw new TeaError('USAGE', `cannot read agent file ${path}: ${(e as NodeJS.ErrnoException).code ?? e}`)
  }
}

function specOf(path: string, { spec, problems, warnings }: LoadResult, warn?: (line: string) => void): AgentSpec {
  if (!spec || problems.length) throw invalidAgent(path, problems)
  if (warn) for (const w of warnings) warn(formatProblem(path, w))
  return spec
}

export interface LoadOptions {
  /** Where `${VAR}` in settings comes from (env-vars.ts); default the process's environment. */
  env?: NodeJS.ProcessEnv
  /** A folder where the YAML parse of a file that loads is kept for its next load (parse-cache.ts); none by default. */
  parseCache?: string
  /** The `run:` languages a resumed run started with (RunRecord.runLanguages), by body: they win over the choice. */
  runLanguages?: Readonly<Record<string, string>>
}

/** How the CLI loads a file: `around` wraps each synchronous part (its leanLoad), and the load options. */
export interface Loading extends LoadOptions {
  around?: <T>(load: () => T) => T
}

export function loadAgentText(text: string, file: string, registry: Registry, options: LoadOptions = {}): LoadResult {
  return loadAgentDraft(draftAgent(text, file, registry, options), registry)
}

/**
 * An agent file after the passes that need no action: YAML read, `${VAR}`s in settings expanded, TEA's node kinds
 * lowered. `failed` is set when the file is refused already (YAML syntax, not a mapping).
 */
interface AgentDraft {
  file: string
  /** sha256 of the file's text (AgentSpec.hash), which also names its kept parse. */
  hash: string
  parsed: AgentParse & { data: Record<string, unknown> }
  expanded: Problem[]
  /** TEA's `settings.llm.backend: local`, read before `${VAR}`s are expanded (localBackend). */
  backend?: string
  /** The language each `run:` body runs in (run-language.ts). */
  languages: RunLanguage[]
  /** TEA parameters set aside because TEA's action does not read them (tea-spellings.ts): warnings. */
  aside?: Problem[]
  failed?: LoadResult
}

/** The first passes of loadAgentText; `loadAgentDraft` finishes them. */
function draftAgent(text: string, file: string, registry: Registry, options: LoadOptions = {}): AgentDraft {
  const hash = sha256Hex(text)
  const parsed = parseAgentYaml(text, hash, options.parseCache) as AgentDraft['parsed']
  const draft = { file, hash, parsed, expanded: [], languages: [] }
  if (parsed.errors.length) {
    const problems = parsed.errors.map((e): Problem => ({ code: 'YAML_SYNTAX', message: e.message, where: e.pos }))
    return { ...draft, failed: { problems, warnings: [] } }
  }
  if (!isPlainObject(parsed.data)) {
    const message = 'an agent file must be a YAML mapping with name and nodes'
    return { ...draft, failed: { problems: [{ code: 'AGENT_INVALID', message, where: { line: 1, col: 1 } }], warnings: [] } }
  }
  const backend = localBackend(parsed.data)
  const expanded = expandSettingsEnv(parsed.data, parsed, options.env ?? process.env)
  const aside = lowerTeaSpellings(parsed.data).map(
    (a): Problem => ({ code: 'TEA_UNSUPPORTED', message: a.message, where: parsed.locate(a.path, true) }),
  )
  const languages = lowerTeaNodes(parsed.data, registry.features?.languages ?? [], options.runLanguages, file)
  return { ...draft, expanded, languages, aside, ...(backend !== undefined && { backend }) }
}

/**
 * The actions a draft names as its nodes' `uses:` (TEA's node kinds lowered to them), for a registry that loads
 * actions on first use (Registry.load); undefined (every action) when `run:` code may reach one through `ctx`.
 */
function actionsNamed(draft: AgentDraft): string[] | undefined {
  const names = new Set<string>()
  const nodes = draft.failed || !Array.isArray(draft.parsed.data.nodes) ? [] : draft.parsed.data.nodes
  for (const n of nodes) {
    if (!isPlainObject(n)) continue
    for (const k of ['uses', 'action']) if (typeof n[k] === 'string') names.add(n[k] as string)
    if (typeof n.run === 'string' && /\bctx\b/.test(n.run)) return undefined
  }
  return [...names]
}

/** The rest of loadAgentText: structure, then cross-references, which need the registry's actions. */
function loadAgentDraft(draft: AgentDraft, registry: Registry): LoadResult {
  if (draft.failed) return draft.failed
  const { file, hash, parsed, expanded, backend } = draft
  let structure = v.safeParse(AgentSchema, parsed.data, { abortEarly: false })
  const warnings: Problem[] = []
  if (!structure.success) {
    // TEA keys tea does not provide are warnings: set aside (a node that needs one is kept as a node that fails
    // when it runs), and the file is checked again without them.
    const tea = structuralProblems(structure.issues, parsed).filter((p) => p.code === 'TEA_UNSUPPORTED' && p.path)
    if (tea.length) {
      for (const p of tea) if (setAside(parsed.data, p)) warnings.push(p)
      structure = v.safeParse(AgentSchema, parsed.data, { abortEarly: false })
    }
  }
  // A `${VAR}` inside what was set aside is not needed (TEA's hierarchical LTM reads its database URL so).
  const asideKeys = warnings.map((w) => w.path!.join('.'))
  // TEA's LTM backends that need a service: the settings stay (unused), their `${VAR}`s are not needed either.
  const ltm = isPlainObject(parsed.data.settings) && isPlainObject(parsed.data.settings.ltm) ? parsed.data.settings.ltm : undefined
  const ltmMessage = ltmBackendUnsupported(ltm?.backend)
  if (ltmMessage) asideKeys.push('settings.ltm')
  const needed = expanded.filter((p) => !asideKeys.some((k) => p.message.startsWith(`${k}.`) || p.message.startsWith(`${k}:`)))
  const problems = structure.success ? needed : [...needed, ...structuralProblems(structure.issues, parsed)]
  const references = checkReferences(parsed.data, parsed, registry)
  for (const p of references.problems) (p.code === 'TEA_UNSUPPORTED' ? warnings : problems).push(p)
  warnings.push(...references.warnings)
  if (ltmMessage) warnings.push({ code: 'TEA_UNSUPPORTED', message: ltmMessage, where: parsed.locate(['settings', 'ltm', 'backend']) })
  warnings.push(...shellWarnings(parsed), ...(draft.aside ?? []))
  paramsAside(problems, warnings, parsed.data, references.unsupported)
  const byPlace = (a: Problem, b: Problem) => a.where.line - b.where.line || a.where.col - b.where.col
  problems.sort(byPlace)
  warnings.sort(byPlace)
  for (const w of warnings) {
    delete w.path
    delete w.expected
  }
  if (problems.length || !structure.success) return { problems, warnings }
  const spec = normalise(structure.output, parsed, file, hash, references)
  if (draft.languages.length) spec.runLanguages = draft.languages
  parsed.keep?.()
  // TEA's `backend: local`: the GGUF model in the process (model_path, TEA_MODEL_PATH), unless the agent names another.
  if (backend !== undefined && spec.settings.llm.model === undefined && spec.settings.llm.provider === undefined)
    spec.settings.llm.provider = 'local'
  return { spec, problems, warnings }
}

/** TEA's in-process model (`settings.llm.backend: local`): a GGUF file run by llama.cpp in the process. */
function localBackend(data: Record<string, unknown>): string | undefined {
  const llm = isPlainObject(data.settings) ? data.settings.llm : undefined
  // `auto` falls back to the API model TEA is given, so only `local` means the bundled model.
  return isPlainObject(llm) && llm.backend === 'local' ? llm.backend : undefined
}

/**
 * A node whose parameters TEA's examples wrote under `params:` (set aside: no TEA runtime reads it) lacks them. TEA
 * loads such a file and fails at that node when it runs (its action gets no parameters), and so does tea: the
 * node's INVALID_PARAMS become warnings that say why, and the node fails with them when the run reaches it.
 */
function paramsAside(problems: Problem[], warnings: Problem[], data: Record<string, unknown>, unsupported: Map<number, string>): void {
  const nodes = Array.isArray(data.nodes) ? data.nodes : []
  const aside = new Map<unknown, number>()
  for (const w of warnings)
    if (w.path?.length === 3 && w.path[0] === 'nodes' && w.path[2] === 'params' && isPlainObject(nodes[w.path[1] as number]))
      aside.set((nodes[w.path[1] as number] as { name?: unknown }).name, w.path[1] as number)
  for (let i = problems.length - 1; i >= 0; i--) {
    const p = problems[i]!
    const at = aside.get(p.where.node)
    if (p.code !== 'INVALID_PARAMS' || at === undefined) continue
    p.message +=
      "; its parameters are under params:, which no TEA runtime reads (TEA's action gets none either, and fails when it runs): write them under with:"
    problems.splice(i, 1)
    warnings.push(p)
    const missing = p.message.slice(0, p.message.indexOf('; its parameters are under params:'))
    if (!unsupported.has(at))
      unsupported.set(
        at,
        `'nodes.${at}.params' is a TEA feature that no TEA runtime reads, so the action gets no parameters (${p.where.field ? `${p.where.field}: ` : ''}${missing}): write them under with:`,
      )
  }
}

/** Marks (as Problem.expected, while loading) a TEA key that TEA's runtime ignores too: set aside, the node kept. */
const IGNORED = 'ignored by TEA'

/**
 * Removes a TEA key tea does not provide from the data. A node's own key (`streams:`, `type: dynamic_parallel`
 * with `subgraph:`) replaces the node with one that keeps its name and routing and fails when it runs.
 */
function setAside(data: Record<string, unknown>, { path, message, expected }: Problem): boolean {
  if (!path) return false
  if (path[0] === 'nodes' && expected !== IGNORED && typeof path[1] === 'number' && path.length === 3 && Array.isArray(data.nodes)) {
    const node = data.nodes[path[1]]
    // One warning a node: the first of its TEA keys stands for the rest.
    if (!isPlainObject(node) || (node as Record<symbol, unknown>)[UNSUPPORTED] !== undefined) return false
    const kept: Record<string | symbol, unknown> = { [UNSUPPORTED]: message }
    for (const k of ['name', 'description', 'goto', 'next', 'interrupt', 'on_error']) if (node[k] !== undefined) kept[k] = node[k]
    data.nodes[path[1]] = kept
    return true
  }
  let parent: unknown = data
  for (const p of path.slice(0, -1))
    parent = isPlainObject(parent) || Array.isArray(parent) ? (parent as Record<string, unknown>)[p] : undefined
  if (isPlainObject(parent)) delete parent[path.at(-1) as string]
  return true
}

function structuralProblems(issues: readonly v.BaseIssue<unknown>[], parsed: Parsed): Problem[] {
  const problems: Problem[] = []
  const mappingsDone = new Set<string>()
  for (const issue of issues) {
    const path = (issue.path ?? []).map((p) => p.key as string | number)
    const dot = path.join('.')
    if (issue.type === 'strict_object' && issue.expected === 'never') {
      // valibot reports the first unknown key of a mapping; every one of them is reported, once.
      const parent = path.slice(0, -1)
      if (mappingsDone.has(parent.join('.'))) continue
      mappingsDone.add(parent.join('.'))
      problems.push(...unknownKeys(parent, parsed))
    } else if (issue.received === 'undefined') {
      problems.push({ code: 'MISSING_KEY', message: `missing required key '${dot}'`, where: parsed.locate(path) })
    } else {
      problems.push({ code: 'AGENT_INVALID', message: `${dot || '(top level)'}: ${issue.message}`, where: parsed.locate(path) })
    }
  }
  return problems
}

/**
 * Every key of the mapping at `parent` that the format does not take: a TEA feature tea lacks is named as such
 * (tea-dialect.ts), anything else is UNKNOWN_KEY with a suggestion drawn from the keys valid at that place.
 */
function unknownKeys(parent: Array<string | number>, parsed: Parsed): Problem[] {
  const valid = keysAt(parent) ?? []
  let mapping: unknown = parsed.data
  for (const p of parent) mapping = isPlainObject(mapping) || Array.isArray(mapping) ? (mapping as Record<string, unknown>)[p] : undefined
  if (!isPlainObject(mapping)) return []
  const problems: Problem[] = []
  const teaParts: Problem[] = []
  for (const key of Object.keys(mapping)) {
    if (valid.includes(key)) continue
    const path = [...parent, key]
    const where = parsed.locate(path, true)
    const tea = teaKey(path, mapping[key], mapping)
    if (tea && (tea.feature.status === 'planned' || tea.feature.status === 'not in tea' || tea.feature.status === 'ignored')) {
      problems.push({
        code: 'TEA_UNSUPPORTED',
        path,
        ...(tea.feature.status === 'ignored' && { expected: IGNORED }),
        message: teaMessage(
          tea.key.startsWith('type: ') ? `'${path.join('.')}: ${String(mapping[key])}'` : `'${path.join('.')}'`,
          tea.feature,
        ),
        where,
      })
      continue
    }
    // A key tea maps that is still here belongs to a TEA construct that was not lowered because of what the
    // TEA_UNSUPPORTED problems beside it name; saying it is unknown too would only add noise.
    if (tea?.feature.status === 'mapped') {
      teaParts.push({ code: 'UNKNOWN_KEY', message: `unknown key '${path.join('.')}'`, where })
      continue
    }
    const near = closest(key, valid).filter((k) => k !== key)
    const hint = near.length ? ` (did you mean '${near[0]}'?)` : ''
    problems.push({ code: 'UNKNOWN_KEY', message: `unknown key '${path.join('.')}'${hint}`, where })
  }
  return problems.some((p) => p.code === 'TEA_UNSUPPORTED') ? problems : [...problems, ...teaParts]
}

/**
 * A node's on_error, each field falling back to TEA's run-wide `settings.error_handling` (error_handling/settings.py
 * merges them so), then to tea's defaults; TEA's `graceful` is `continue`.
 */
function onErrorOf(own: OnError | undefined, run: OnError | undefined): NodeSpec['onError'] {
  const raw = own?.mode ?? run?.mode ?? 'raise'
  const mode = raw === 'graceful' ? 'continue' : raw
  return {
    mode,
    maxRetries: own?.max_retries ?? run?.max_retries ?? (mode === 'retry' ? 2 : 0),
    retryDelay: own?.retry_delay ?? run?.retry_delay ?? 0.5,
    ...(own?.fallback !== undefined && { fallback: own.fallback }),
  }
}

type OnError = Omit<v.InferOutput<typeof OnErrorSchema>, 'fallback'> & { fallback?: string }

function normalise(agent: AgentFile, parsed: Parsed, file: string, hash: string, references: References): AgentSpec {
  const { compiled, routes } = references
  const settings = agent.settings ?? {}
  const stood = isPlainObject(parsed.data) && Array.isArray(parsed.data.nodes) ? (parsed.data.nodes as unknown[]) : []
  const unsupportedAt = (i: number): string | undefined => {
    const n = stood[i]
    const marked = isPlainObject(n) ? (n as Record<symbol, unknown>)[UNSUPPORTED] : undefined
    return references.unsupported.get(i) ?? (typeof marked === 'string' ? marked : undefined)
  }
  const nodes: NodeSpec[] = agent.nodes.map((n, index) => ({
    name: n.name,
    index,
    ...(unsupportedAt(index) !== undefined && { unsupported: unsupportedAt(index)! }),
    ...(n.description !== undefined && { description: n.description }),
    ...((n.uses ?? n.action) !== undefined && { uses: (n.uses ?? n.action)! }),
    // On a run: node both are set aside with a warning (references.ts), as TEA's runtime ignores them.
    ...(n.with !== undefined && n.run === undefined && { with: n.with }),
    ...(n.output !== undefined && n.run === undefined && { output: n.output }),
    ...(n.run !== undefined && { run: n.run }),
    ...((n.goto ?? nextAsGoto(n.next) ?? routes.get(n.name)) !== undefined && {
      goto: (n.goto ?? nextAsGoto(n.next) ?? routes.get(n.name))!,
    }),
    ...(n.goto === undefined && n.next === undefined && routes.has(n.name) && { routedByEdges: true }),
    onError: onErrorOf(n.on_error, settings.error_handling),
    ...(n.interrupt !== undefined && { interrupt: n.interrupt }),
    ...(n.timeout !== undefined && { timeout: n.timeout }),
    line: parsed.locate(['nodes', index]).line,
    compiled: compiled[index] ?? {},
  }))
  const edges = new Map<string, string>()
  const parallel = new Map<string, { from: string; to: string[]; fanIn: string }>()
  let entry = nodes[0]!.name
  for (const e of agent.edges ?? []) {
    if (e.when !== undefined || e.condition !== undefined) continue // lowered onto goto rules (references.ts)
    if (e.type === 'parallel' && typeof e.to === 'string') {
      // TEA's parallel spelling, one edge per branch, gathered into one fan-out.
      const fan = parallel.get(e.from)
      if (fan) fan.to.push(e.to)
      else parallel.set(e.from, { from: e.from, to: [e.to], fanIn: e.fan_in! })
      continue
    }
    if (routes.has(e.from) && !Array.isArray(e.to)) continue // the fallback after conditional edges: a goto rule too
    if (Array.isArray(e.to)) parallel.set(e.from, { from: e.from, to: e.to, fanIn: e.fan_in! })
    else if (e.from === START) entry = e.to
    else edges.set(e.from, e.to)
  }
  const workspace = settings.workspace ? resolve(dirname(file), settings.workspace) : dirname(file)
  return {
    file,
    hash,
    name: agent.name ?? basename(file).replace(/\.ya?ml$/i, ''),
    ...(agent.description !== undefined && { description: agent.description }),
    ...(agent.state_schema !== undefined && { stateSchema: agent.state_schema }),
    initialState: agent.initial_state ?? {},
    variables: guided(agent.variables ?? {}, agent.extraction_schema),
    settings: {
      llm: { ...llmSettings(settings.llm, settings.shell_providers), model_dir: dirname(file) },
      max_steps: settings.max_steps ?? 1000,
      workspace,
      allow_inline_code: settings.allow_inline_code ?? true,
      run_timeout: settings.run_timeout ?? 10,
      run_memory_mb: settings.run_memory_mb ?? DEFAULT_RUN_MEMORY_MB,
      http_allow: settings.http?.allow ?? [],
      checkpoint_keep: settings.checkpoint?.keep ?? 3,
      max_template_bytes: settings.max_template_bytes ?? DEFAULT_MAX_TEMPLATE_BYTES,
      ...(agent.state_schema !== undefined && { missing_is_none: true as const }),
      sections: {
        ...(settings.planner && { planner: settings.planner }),
        ...(settings.rate_limiters && { rate_limiters: settings.rate_limiters }),
        ...(settings.ltm && { ltm: settings.ltm }),
        ...(settings.agents && { agents: settings.agents }),
        ...(settings.session && { session: settings.session }),
        ...(settings.mqtt && { mqtt: settings.mqtt }),
        ...(settings.mcp && { mcp: settings.mcp }),
        ...(agent.extraction_schema && { extraction_schema: agent.extraction_schema }),
        ...(agent.semantic_probes && {
          semantic_probes: Array.isArray(agent.semantic_probes) ? { probes: agent.semantic_probes } : agent.semantic_probes,
        }),
        ...(agent.validation_constraints !== undefined && {
          validation_constraints:
            typeof agent.validation_constraints === 'string' ? { rules: agent.validation_constraints } : agent.validation_constraints,
        }),
      },
    },
    nodes,
    entry,
    edges,
    parallel,
    interruptBefore: new Set([
      ...(agent.config?.interrupt_before ?? []),
      ...nodes.filter((n) => n.interrupt === 'before').map((n) => n.name),
    ]),
    interruptAfter: new Set([...(agent.config?.interrupt_after ?? []), ...nodes.filter((n) => n.interrupt === 'after').map((n) => n.name)]),
    ...(agent.config?.max_execution_time !== undefined && { maxExecutionMs: agent.config.max_execution_time }),
    ...(settings.auto_trace === true &&
      settings.trace_exporter === 'file' && {
        traceFile: resolve(dirname(file), settings.trace_file ?? `${agent.name ?? basename(file).replace(/\.ya?ml$/i, '')}.trace.jsonl`),
      }),
  }
}

/**
 * settings.llm with TEA's `api_base` as tea's `base_url` (an explicit `base_url` wins) and `settings.shell_providers`
 * merged under `settings.llm.shell_providers` (TEA reads both places).
 */
function llmSettings(
  llm: v.InferOutput<typeof LlmSettingsSchema> | undefined,
  shell: Record<string, v.InferOutput<typeof ShellProviderSchema>> | undefined,
): AgentSettingsView['llm'] {
  const { api_base, default_model, default_provider, backend: _backend, n_threads, ...rest } = llm ?? {}
  const out: AgentSettingsView['llm'] = api_base !== undefined && rest.base_url === undefined ? { ...rest, base_url: api_base } : rest
  if (n_threads !== undefined && out.threads === undefined) out.threads = n_threads
  if (default_model !== undefined && out.model === undefined) out.model = default_model
  if (default_provider !== undefined && out.provider === undefined) out.provider = default_provider
  if (shell || rest.shell_providers) out.shell_providers = { ...shell, ...rest.shell_providers }
  return out
}

/** TEA's `next:` as goto: the same routing, `condition` for `if`. */
function nextAsGoto(next: AgentFile['nodes'][number]['next']): NodeSpec['goto'] {
  if (next === undefined || typeof next === 'string') return next
  return next.map((r) => (r.condition === undefined ? { to: r.to } : { if: r.condition, to: r.to }))
}

/** TEA's `extraction_schema.guide_extraction: true`: the schema's extraction prompt as `variables.extraction_prompt`. */
function guided(variables: Record<string, unknown>, schema: Record<string, unknown> | undefined): Record<string, unknown> {
  const parsed = schema?.guide_extraction === true ? parseExtractionSchema(schema) : undefined
  return parsed && variables.extraction_prompt === undefined ? { ...variables, extraction_prompt: extractionPrompt(parsed) } : variables
}

/**
 * An agent's own shell provider that passes a flag switching its CLI's permission checks off runs as written (the
 * author asked for it in so many words; TEA's own files do), and the loader says so each time the file loads.
 */
function shellWarnings(parsed: Parsed): Problem[] {
  const data = isPlainObject(parsed.data) ? parsed.data : {}
  const settings = isPlainObject(data.settings) ? data.settings : {}
  const llm = isPlainObject(settings.llm) ? settings.llm : {}
  const skip = llm.shell_skip_permissions === true
  return (
    [
      ['settings', 'shell_providers'],
      ['settings', 'llm', 'shell_providers'],
    ] as const
  ).flatMap((path) => {
    const providers = path.length === 2 ? settings.shell_providers : llm.shell_providers
    if (!isPlainObject(providers)) return []
    return shellPermissionWarnings(providers as Record<string, ShellProviderConfig>, skip).map(({ provider, flag }) => ({
      code: 'SHELL_PERMISSIONS_OFF' as const,
      message: `shell provider '${provider}' passes ${flag}: the command runs with its permission checks off, so any text that reaches its prompt (a run's input, a fetched page, a model's reply) can make it run commands as this user (docs/security.md)`,
      where: parsed.locate([...path, provider, 'args']),
    }))
  })
}
