/**
 * TEA's `settings.session` (its session/settings.py): where sessions live, how long they last and which state keys
 * `session.save` keeps. tea keeps every session in its own store (the data dir's LMDB file), whatever `backend`
 * names: TEA's `memory` backend forgets them when the process ends, tea's store does not; `firestore` is a
 * cloud service tea does not call.
 */

import * as v from 'valibot'
import { sessionSettingsSchema } from '../tea-sections.ts'
import type { ActionContext } from '../types.ts'

export interface SessionSettings {
  ttl: number
  persist_fields?: string[]
}

/** The file's `settings.session`, or undefined when it has none (TEA then has no session backend). */
export function sessionSettings(ctx: ActionContext): SessionSettings | undefined {
  const raw = ctx.settings.sections.session
  if (raw === undefined) return undefined
  const s = v.parse(sessionSettingsSchema, raw)
  const fields = typeof s.persist_fields === 'string' ? [s.persist_fields] : s.persist_fields
  return { ttl: s.ttl ?? 0, ...(fields && { persist_fields: fields }) }
}

/** The store namespace of TEA's sessions: one for every agent of the data dir, as TEA's backend is one per engine. */
export const SESSION_NAMESPACE = 'tea.session'

/** TEA's warning when an agent uses sessions without `settings.session`. */
export const NO_BACKEND = 'No session backend configured'
