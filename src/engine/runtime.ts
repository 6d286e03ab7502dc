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
  /** Aborted by SIGINT/SIGTERM, a caller or the time limit: the run stops after the current checkpoint. */
  signal: AbortSignal
  /** Fires when the run's time limit (`config.max_execution_time`) is reached: the run then fails with RUN_TIMEOUT. */
  deadline?: { signal: AbortSignal; ms: number }
}
