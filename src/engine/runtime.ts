import type { ContextServices } from '../actions/context.ts'
import type { AgentSpec } from '../agent/types.ts'
import type { RunEvent } from '../core/events.ts'
import type { Store } from '../store/types.ts'
import type { CompiledAgent } from './compile.ts'

/** Everything one run needs, assembled by the run lifecycle (lifecycle.ts). */
export interface Runtime {
  spec: AgentSpec
  agent: CompiledAgent
  /** What every action context of the run shares (actions/context.ts). */
  services: ContextServices
  store: Store
  runId: string
  emit(event: RunEvent): void
  /** Aborted by SIGINT/SIGTERM or a caller: the run stops after the current checkpoint. */
  signal: AbortSignal
}
