/**
 * TEA's `settings.session` (its session/settings.py): where sessions live, how long they last and which state keys
 * `session.save` keeps. tea keeps every session in its own store (the data dir's LMDB file), whatever `backend`
 * names: TEA's `memory` backend forgets them when the process ends, tea's store does not; `firestore` is a
 * cloud service tea does not call.
 */

import * as v from 'valibot'
import type { ActionContext } from '../types.ts'

export const sessionSettingsSchema = v.looseObject({
  backend: v.optional(
    v.picklist(['memory', 'firestore'], "backend must be 'memory' or 'firestore' (tea keeps sessions in its store either way)"),
  ),
  collection: v.optional(v.string()),
  auto_save: v.optional(v.boolean()),
  ttl: v.optional(v.pipe(v.number(), v.integer('must be a whole number of seconds'), v.minValue(0, 'must be ≥ 0 (0: never expires)'))),
  persist_fields: v.optional(v.union([v.string(), v.array(v.string())])),
})

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
