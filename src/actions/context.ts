/**
 * The one ActionContext. The engine builds it for a node on the main thread; a worker thread builds it for an
 * action or `run:` code it runs (actions/remote.ts). Both hand in `ContextServices` — the run's model client,
 * store, event sink and registry, local on the main thread and forwarded over the task's port in a worker — so
 * `render`, `invoke`, `listActions`, `signal` and `runNode` behave the same on both sides, and one contract suite
 * (test/actions/context-contract.ts) holds them to it.
 *
 * One is made per node execution, so it is a class: one allocation, methods on the prototype (call them as
 * methods: `ctx.render(…)`, not a detached `render`).
 */

import { TeaError } from '../core/errors.ts'
import type { RunEvent } from '../core/events.ts'
import type { State } from '../core/util.ts'
import type { LlmClient } from '../llm/types.ts'
import { compileTemplate, compileValue, type CompiledValue, type OutputHook } from '../template/index.ts'
import { validateParams, type Registry } from './registry.ts'
import { ACTION_STORE_METHODS, type Action, type ActionContext, type ActionStore, type AgentSettingsView, type AofRouter } from './types.ts'

/** What every context of one run shares. */
export interface ContextServices {
  runId: string
  variables: Readonly<Record<string, unknown>>
  settings: AgentSettingsView
  llm: LlmClient
  store: ActionStore
  dataDir?: string
  aof?: AofRouter
  emit(event: RunEvent): void
  registry: Pick<Registry, 'get' | 'require' | 'list' | 'load'>
  /**
   * Runs another node of the same agent (the engine provides it). Where there is no agent to run — a plan
   * subtask in a worker — it is absent and `ctx.runNode` fails with UNKNOWN_NODE saying so.
   */
  runNode?(name: string, state: State, signal: AbortSignal, from: string): Promise<State>
}

export class RunContext implements ActionContext {
  readonly runId: string
  readonly variables: Readonly<Record<string, unknown>>
  readonly settings: AgentSettingsView
  readonly llm: LlmClient
  readonly store: ActionStore
  readonly dataDir?: string
  readonly aof?: AofRouter
  readonly emit: (event: RunEvent) => void

  constructor(
    private readonly services: ContextServices,
    readonly node: string,
    readonly state: State,
    readonly signal: AbortSignal,
  ) {
    this.runId = services.runId
    this.variables = services.variables
    this.settings = services.settings
    this.llm = services.llm
    this.store = services.store
    if (services.dataDir !== undefined) this.dataDir = services.dataDir
    if (services.aof !== undefined) this.aof = services.aof
    this.emit = services.emit
  }

  runNode(name: string, onState: State): Promise<State> {
    const run = this.services.runNode
    if (!run) {
      const message = `runNode('${name}'): there is no agent to run nodes of here (a plan subtask in a worker)`
      return Promise.reject(new TeaError('UNKNOWN_NODE', message, { where: { node: this.node } }))
    }
    return run(name, onState, this.signal, this.node)
  }

  render(value: unknown, extra?: Record<string, unknown>, field = 'value'): unknown {
    return compiled(this.services, value, this.node, field).render({
      state: this.state,
      variables: this.variables,
      settings: this.settings,
      ...extra,
    })
  }

  renderCode(source: string, outputFor: (source: string) => OutputHook, field = 'run'): string {
    return String(
      compiledCode(this.services, source, outputFor, this.node, field).render({
        state: this.state,
        variables: this.variables,
        settings: this.settings,
      }),
    )
  }

  listActions(): Action[] {
    return this.services.registry.list()
  }

  async invoke(name: string, params: unknown, onState: State = this.state, options: { timeoutMs?: number } = {}): Promise<State> {
    const registry = this.services.registry
    // A registry that loads actions on first use (src/catalog.ts) may not have this one yet.
    if (!registry.get(name)) await registry.load([name])
    const action = registry.require(name)
    const valid = validateParams(action, params, { node: this.node })
    const timeoutMs = options.timeoutMs
    if (timeoutMs === undefined) return asUpdate(await action.run(valid, new RunContext(this.services, this.node, onState, this.signal)))
    // The run's signal or the limit stops the action. Linked by hand and unlinked when it ends: AbortSignal.any
    // and AbortSignal.timeout cost far more per call (a ReAct step makes one) and hold weak references.
    const limited = new AbortController()
    const fromRun = (): void => limited.abort(this.signal.reason)
    if (this.signal.aborted) fromRun()
    else this.signal.addEventListener('abort', fromRun, { once: true })
    let timer: NodeJS.Timeout | undefined
    const overtime = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const e = new TeaError('NODE_TIMEOUT', `${name} ran over its time limit of ${timeoutMs / 1000} s and was stopped`, {
          where: { node: this.node, action: name },
        })
        limited.abort(e)
        reject(e)
      }, timeoutMs)
    })
    try {
      const run = Promise.resolve(action.run(valid, new RunContext(this.services, this.node, onState, limited.signal)))
      run.catch(() => {}) // an action that fails after its limit has nobody left to tell
      return asUpdate(await Promise.race([run, overtime]))
    } finally {
      clearTimeout(timer)
      this.signal.removeEventListener('abort', fromRun)
    }
  }
}

/** Exactly the store port's methods of `store`, so an action cannot reach runs or checkpoints through it. */
export function actionStore(store: ActionStore): ActionStore {
  const port = {} as Record<string, unknown>
  for (const method of ACTION_STORE_METHODS) port[method] = store[method].bind(store)
  return port as unknown as ActionStore
}

/** Actions return objects; anything else is kept under `result` (TEA's rule). */
export function asUpdate(result: unknown): State {
  if (result === undefined || result === null) return {}
  if (typeof result === 'object' && !Array.isArray(result)) return result as State
  return { result }
}

// Templates handed to `render` are compiled once per run and place: a plan of N subtasks whose executor renders
// one `with:` block compiles it once, not N times. Objects are keyed by identity, strings by their text.
const byServices = new WeakMap<
  ContextServices,
  { objects: WeakMap<object, Map<string, CompiledValue>>; strings: Map<string, CompiledValue> }
>()
const MAX_CACHED_STRINGS = 1024

function compiled(services: ContextServices, value: unknown, node: string, field: string): CompiledValue {
  let cache = byServices.get(services)
  if (!cache) byServices.set(services, (cache = { objects: new WeakMap(), strings: new Map() }))
  const site = `${node}\u0000${field}`
  const limits = { maxBytes: services.settings.max_template_bytes, missingIsNone: services.settings.missing_is_none === true }
  if (typeof value === 'object' && value !== null) {
    let sites = cache.objects.get(value)
    if (!sites) cache.objects.set(value, (sites = new Map()))
    let c = sites.get(site)
    if (!c) sites.set(site, (c = compileValue(value, { node, field }, limits)))
    return c
  }
  if (typeof value !== 'string') return compileValue(value, { node, field }, limits)
  const key = `${site}\u0000${value}`
  let c = cache.strings.get(key)
  if (!c) {
    if (cache.strings.size >= MAX_CACHED_STRINGS) cache.strings.clear()
    cache.strings.set(key, (c = compileValue(value, { node, field }, limits)))
  }
  return c
}

type CompiledCode = ReturnType<typeof compileTemplate>
const codeByServices = new WeakMap<ContextServices, WeakMap<object, Map<string, CompiledCode>>>()

/** Code templates, compiled once per run, language (its `outputFor`), place and text, as `compiled` does. */
function compiledCode(
  services: ContextServices,
  source: string,
  outputFor: (source: string) => OutputHook,
  node: string,
  field: string,
): CompiledCode {
  let byLanguage = codeByServices.get(services)
  if (!byLanguage) codeByServices.set(services, (byLanguage = new WeakMap()))
  let cache = byLanguage.get(outputFor)
  if (!cache) byLanguage.set(outputFor, (cache = new Map()))
  const key = `${node}\u0000${field}\u0000${source}`
  let c = cache.get(key)
  if (!c) {
    if (cache.size >= MAX_CACHED_STRINGS) cache.clear()
    const limits = {
      maxBytes: services.settings.max_template_bytes,
      output: outputFor(source),
      missingIsNone: services.settings.missing_is_none === true,
    }
    cache.set(key, (c = compileTemplate(source, { node, field }, limits)))
  }
  return c
}
