/**
 * The composition root of the actions: the core built-ins plus the optional features this build has (SPEC §2). It
 * is the one place optional features join the core. Each feature is guarded by a build flag that esbuild replaces
 * with a literal, so a target built with the flag off drops the branch and every module only it imported. Nothing
 * else in src/ imports planning/, reasoning/, prolog/, lua/ or python/; the CLI and the pool's worker entry (src/worker.ts) build their
 * registries here.
 */

import { builtinActions } from './actions/builtins.ts'
import { createRegistry, type Registry } from './actions/registry.ts'
import type { Action } from './actions/types.ts'
import { planningActions } from './planning/index.ts'
import type { TaskHandler } from './pool/protocol.ts'
import { luaActions, luaTaskHandlers } from './lua/index.ts'
import { prologActions, prologTaskHandlers } from './prolog/index.ts'
import { pythonActions, pythonTaskHandlers } from './python/index.ts'
import { reasoningActions } from './reasoning/index.ts'

/** The registry of this build: core built-ins plus the enabled features' actions, and any `extra` (library use, tests). */
export function buildRegistry(extra: readonly Action[] = []): Registry {
  return createRegistry([...builtinActions(), ...featureActions(), ...extra])
}

/** Actions contributed by the features this build has. */
function featureActions(): Action[] {
  const actions: Action[] = []
  if (typeof __FEATURE_PLANNING__ === 'undefined' || __FEATURE_PLANNING__) actions.push(...planningActions())
  if (typeof __FEATURE_REASONING__ === 'undefined' || __FEATURE_REASONING__) actions.push(...reasoningActions())
  if (typeof __FEATURE_PROLOG__ === 'undefined' || __FEATURE_PROLOG__) actions.push(...prologActions())
  if (typeof __FEATURE_LUA__ === 'undefined' || __FEATURE_LUA__) actions.push(...luaActions())
  if (typeof __FEATURE_PYTHON__ === 'undefined' || __FEATURE_PYTHON__) actions.push(...pythonActions())
  return actions
}

/** Pool task handlers contributed by the features this build has (src/worker.ts adds them to the core's). */
export function featureTaskHandlers(): Record<string, TaskHandler> {
  const handlers: Record<string, TaskHandler> = {}
  if (typeof __FEATURE_PROLOG__ === 'undefined' || __FEATURE_PROLOG__) Object.assign(handlers, prologTaskHandlers)
  if (typeof __FEATURE_LUA__ === 'undefined' || __FEATURE_LUA__) Object.assign(handlers, luaTaskHandlers)
  if (typeof __FEATURE_PYTHON__ === 'undefined' || __FEATURE_PYTHON__) Object.assign(handlers, pythonTaskHandlers)
  return handlers
}
