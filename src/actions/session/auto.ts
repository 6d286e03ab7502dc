/**
 * What TEA's runtime does with a session around a whole run (stategraph.py, TEA-BUILTIN-015.1), when the agent has
 * `settings.session`: a run whose starting state has a `session_id` starts from that session's saved data with the
 * starting state over it, and with `auto_save: true` a completed run's state is saved back. The engine calls these
 * (src/engine/lifecycle.ts) only for an agent with `settings.session`, loading this module then.
 */

import { isPlainObject, type State } from '../../core/util.ts'
import type { ActionStore, AgentSettingsView } from '../types.ts'
import { SESSION_NAMESPACE, sessionData, sessionSettingsOf } from './settings.ts'

const idOf = (state: State): string | undefined =>
  typeof state.session_id === 'string' || typeof state.session_id === 'number' ? String(state.session_id) : undefined

/** The starting state over the saved data of its `session_id`, if there is one. */
export async function injectSession(settings: AgentSettingsView, store: ActionStore, state: State): Promise<State> {
  const id = idOf(state)
  if (!sessionSettingsOf(settings) || !id) return state
  const saved = await store.memoryGet(SESSION_NAMESPACE, id)
  return saved.found && isPlainObject(saved.value) ? { ...saved.value, ...state } : state
}

/** With `auto_save: true`, saves the final state of a completed run under its `session_id`, as session.save does. */
export async function autoSaveSession(settings: AgentSettingsView, store: ActionStore, state: State): Promise<void> {
  const s = sessionSettingsOf(settings)
  const id = idOf(state)
  if (!s?.auto_save || !id) return
  await store.memoryPut(SESSION_NAMESPACE, id, sessionData(state, s.persist_fields), s.ttl > 0 ? s.ttl * 1000 : undefined)
}
