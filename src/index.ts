/**
 * tea as a library: the deliberate public surface (STYLE 4). Load an agent, run or resume it through the engine's
 * run lifecycle, register actions of your own, and read what happened. Everything else under src/ is internal and
 * may change between versions.
 *
 *   const registry = buildRegistry([myAction])
 *   const agent = requireAgent('agent.yaml', registry)
 *   const store = createMemoryStore()               // or openLmdbStore('.tea') to survive restarts
 *   const llm = createLlmClient({ env: process.env, defaults: agent.settings.llm })
 *   const result = await startRun(agent, { store, registry, llm }, { runId: 'r1', input: { topic: 'pumps' } })
 *   result.status, result.state
 */

export { buildRegistry } from './features.ts'
export { createRegistry, type Registry } from './actions/registry.ts'
export { defineAction, type Action, type ActionContext, type ActionStore, type AgentSettingsView } from './actions/types.ts'
export { loadAgentFile, loadAgentText, requireAgent, type LoadResult } from './agent/load.ts'
export type { AgentSpec } from './agent/types.ts'
export type { Problem } from './agent/problems.ts'
export { continueRun, resumeRun, startRun, type ResumeOptions, type RunResult, type RunServices } from './engine/lifecycle.ts'
export type { RunOutcome } from './engine/run.ts'
export { createLlmClient, type LlmClientOptions } from './llm/client.ts'
export type { LlmClient, LlmRequest, LlmResult, LlmSettings } from './llm/types.ts'
export { createMemoryStore } from './store/memory-store.ts'
export { openLmdbStore } from './store/lmdb-store.ts'
export type { RunRecord, RunStatus, Store, StoreOptions } from './store/types.ts'
export { ERROR_CODES, errorMessage, exitKind, isTeaError, TeaError, type ErrorCode } from './core/errors.ts'
export { formatIssue, formatWhere, type Issue, type Where } from './core/issues.ts'
export { cancelled, isControlSignal } from './core/signals.ts'
export type { RunEvent } from './core/events.ts'
export { buildInfo } from './core/build-info.ts'
