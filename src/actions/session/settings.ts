/**
 * TEA's `settings.session` (its session/settings.py): where sessions live, how long they last and which state keys
 * `session.save` keeps. tea keeps every session in its own store (the data dir's LMDB file), whatever `backend`
 * names: TEA's `memory` backend forgets them when the process ends, tea's store does not; `firestore` is a
 * cloud service tea does not call.
 */

import * as v from 'valibot'
import { TeaError } from '../../core/errors.ts'
import type { State } from '../../core/util.ts'
import { sessionSettingsSchema } from '../tea-sections.ts'
import type { ActionContext, AgentSettingsView } from '../types.ts'

export interface SessionSettings {
  ttl: number
  auto_save: boolean
  persist_fields?: string[]
}

/** The file's `settings.session`, or undefined when it has none (TEA then has no session backend). */
export function sessionSettingsOf(settings: AgentSettingsView): SessionSettings | undefined {
  const raw = settings.sections.session
  if (raw === undefined) return undefined
  // Checked when the file loaded; a spec built by hand may still hold anything.
  const parsed = v.safeParse(sessionSettingsSchema, raw)
  if (!parsed.success) throw new TeaError('AGENT_INVALID', `settings.session: ${parsed.issues[0].message}`)
  const s = parsed.output
  const fields = typeof s.persist_fields === 'string' ? [s.persist_fields] : s.persist_fields
  return { ttl: s.ttl ?? 0, auto_save: s.auto_save ?? false, ...(fields && { persist_fields: fields }) }
}

export const sessionSettings = (ctx: ActionContext): SessionSettings | undefined => sessionSettingsOf(ctx.settings)

/** What a session keeps of `state`: `fields`, or every key but those starting with `_` (TEA's rule). */
export function sessionData(state: State, fields: readonly string[] | undefined): State {
  return fields
    ? Object.fromEntries(fields.filter((k) => Object.hasOwn(state, k)).map((k) => [k, state[k]]))
    : Object.fromEntries(Object.entries(state).filter(([k]) => !k.startsWith('_')))
}

/** The store namespace of TEA's sessions: one for every agent of the data dir, as TEA's backend is one per engine. */
export const SESSION_NAMESPACE = 'tea.session'

/** TEA's warning when an agent uses sessions without `settings.session`. */
export const NO_BACKEND = 'No session backend configured'
