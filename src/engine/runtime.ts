import type { RunEvent } from '../actions/types.ts'
import type { Registry } from '../actions/registry.ts'
import type { AgentSpec } from '../agent/types.ts'
import type { LlmClient } from '../llm/types.ts'
import type { Store } from '../store/types.ts'
import type { CompiledAgent } from './compile.ts'

/** Everything one run needs, assembled by the caller (the CLI, a worker, a test). */
export interface Runtime {
  spec: AgentSpec
  agent: CompiledAgent
  registry: Registry
  llm: LlmClient
  store: Store
  runId: string
  /** Data dir of the store, for actions that keep files (AOF). */
  dataDir?: string
  emit(event: RunEvent): void
  /** Aborted by SIGINT/SIGTERM: the run stops after the current checkpoint. */
  signal: AbortSignal
}
