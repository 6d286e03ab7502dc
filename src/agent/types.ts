import type { AgentSettingsView } from '../actions/types.ts'
import type { CompiledCode } from '../code/compile.ts'
import type { CompiledValue, Condition } from '../template/index.ts'
import type { GotoRule } from './schema.ts'
import type { RunLanguage } from './run-language.ts'

/** A node's templates and code, compiled once while loading (the same pass that validates them). */
export interface CompiledParts {
  /** `with:` without the params its action renders itself (Action.raw). */
  with?: CompiledValue
  /** `output:` when it is a mapping. */
  output?: CompiledValue
  /** `goto` rules' `if:`, by rule index (undefined: a fallback rule). */
  goto?: Array<Condition | undefined>
  code?: CompiledCode
}

export interface NodeSpec {
  name: string
  index: number
  description?: string
  /** The action name (`uses:` or its alias `action:`), for action nodes. */
  uses?: string
  with?: Record<string, unknown>
  output?: string | Record<string, unknown>
  /** JavaScript function body, for code nodes. */
  run?: string
  /** The TEA feature tea does not provide that this node needs: running it fails with TEA_UNSUPPORTED and this. */
  unsupported?: string
  goto?: string | GotoRule[]
  /** The goto rules are TEA's conditional edges from this node (`when:`, `condition:`), for messages. */
  routedByEdges?: true
  onError: { mode: 'raise' | 'continue' | 'retry'; maxRetries: number; retryDelay: number; fallback?: string }
  interrupt?: 'before' | 'after'
  /** Seconds. */
  timeout?: number
  /** 1-based line of the node in the agent file, for messages. */
  line: number
  compiled: CompiledParts
}

export interface ParallelEdge {
  from: string
  to: string[]
  fanIn: string
}

export interface AgentSpec {
  /** Absolute path of the agent file (or '<inline>'). */
  file: string
  /** sha256 of the file's text, to notice edits between a run and its resume. */
  hash: string
  name: string
  description?: string
  /** TEA's `state_schema` as written (key → type name): `tea mcp` offers the agent with it as the input schema. */
  stateSchema?: Readonly<Record<string, unknown>>
  initialState: Record<string, unknown>
  variables: Record<string, unknown>
  settings: AgentSettingsView
  nodes: NodeSpec[]
  /** The entry node (first node, or the target of an edge from `__start__`). */
  entry: string
  /** Plain edges from → to (used when a node has no goto). */
  edges: Map<string, string>
  /** Parallel fan-outs by source node. */
  parallel: Map<string, ParallelEdge>
  interruptBefore: Set<string>
  interruptAfter: Set<string>
  /** `config.max_execution_time`: the run's time limit, ms. */
  maxExecutionMs?: number
  /** TEA's `settings.auto_trace` with `trace_exporter: file`: every run event is appended here as NDJSON. */
  traceFile?: string
  /** The language each `run:` body runs in and why (agent/run-language.ts); recorded with a run for its resume. */
  runLanguages?: RunLanguage[]
}

export const END = '__end__'
export const START = '__start__'
