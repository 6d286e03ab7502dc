/**
 * TEA's session persistence actions (session_persistence_actions.py): `session.load`, `session.save`,
 * `session.delete`, `session.exists`, on tea's store, with TEA's result shapes. Without `settings.session` TEA has
 * no backend, and so these answer as TEA does then (a load gives its default, a save fails with a reason). The
 * session id defaults to the state's `session_id`.
 */

import * as v from 'valibot'
import { isPlainObject, type State } from '../../core/util.ts'
import { defineAction, type ActionContext } from '../types.ts'
import { NO_BACKEND, SESSION_NAMESPACE, sessionData, sessionSettings } from './settings.ts'

const MAX_ID = 512

const sessionId = v.optional(
  v.pipe(
    v.union([v.string(), v.number()]),
    v.transform(String),
    v.maxLength(MAX_ID, `must be at most ${MAX_ID} characters`),
    v.description("The session's id (default: the state's session_id)."),
  ),
)

/** The id to use: the parameter, else the state's `session_id`; empty when there is none. */
function idOf(given: string | undefined, ctx: ActionContext): string {
  if (given !== undefined) return given
  const fromState = ctx.state.session_id
  return typeof fromState === 'string' || typeof fromState === 'number' ? String(fromState).slice(0, MAX_ID) : ''
}

const note = (ctx: ActionContext, message: string): void => ctx.emit({ type: 'log', node: ctx.node, message })

export const sessionLoad = defineAction({
  name: 'session.load',
  description: "TEA's session.load: the data saved under a session id (its keys become the update), or `default` when there is none.",
  params: v.object({
    session_id: sessionId,
    default: v.optional(
      v.pipe(v.record(v.string(), v.unknown()), v.description('What to return when the session is not found (default {}).')),
    ),
  }),
  async run(p, ctx) {
    const fallback = (): State => p.default ?? {}
    if (!sessionSettings(ctx)) {
      note(ctx, `session.load: ${NO_BACKEND}; add settings.session to the agent`)
      return fallback()
    }
    const id = idOf(p.session_id, ctx)
    if (!id) return fallback()
    const got = await ctx.store.memoryGet(SESSION_NAMESPACE, id)
    return got.found && isPlainObject(got.value) ? got.value : fallback()
  },
})

export const sessionSave = defineAction({
  name: 'session.save',
  description:
    "TEA's session.save: keeps the state (or `fields` of it, else settings.session.persist_fields) under a session id, for `ttl` seconds (else settings.session.ttl; 0 never expires); returns {success, session_id}.",
  params: v.object({
    session_id: sessionId,
    fields: v.optional(v.pipe(v.array(v.string()), v.description('The state keys to keep (default: all but those starting with _).'))),
    ttl: v.optional(
      v.pipe(v.number(), v.integer('must be a whole number of seconds'), v.minValue(0), v.description('Seconds the session lasts.')),
    ),
  }),
  async run(p, ctx) {
    const settings = sessionSettings(ctx)
    if (!settings) {
      note(ctx, `session.save: ${NO_BACKEND}; add settings.session to the agent`)
      return { success: false, error: NO_BACKEND }
    }
    const id = idOf(p.session_id, ctx)
    if (!id) return { success: false, error: 'session_id is required' }
    const data = sessionData(ctx.state, p.fields ?? settings.persist_fields)
    const ttl = p.ttl ?? (settings.ttl > 0 ? settings.ttl : undefined)
    await ctx.store.memoryPut(SESSION_NAMESPACE, id, data, ttl ? ttl * 1000 : undefined)
    return { success: true, session_id: id }
  },
})

export const sessionDelete = defineAction({
  name: 'session.delete',
  description: "TEA's session.delete: removes a session; returns {success} (false when there was none).",
  params: v.object({ session_id: sessionId }),
  async run(p, ctx) {
    if (!sessionSettings(ctx)) return { success: false, error: NO_BACKEND }
    const id = idOf(p.session_id, ctx)
    if (!id) return { success: false, error: 'session_id is required' }
    return { success: await ctx.store.memoryDelete(SESSION_NAMESPACE, id) }
  },
})

export const sessionExists = defineAction({
  name: 'session.exists',
  description: "TEA's session.exists: whether a session is kept (and not expired); returns {exists}.",
  params: v.object({ session_id: sessionId }),
  async run(p, ctx) {
    if (!sessionSettings(ctx)) return { exists: false, error: NO_BACKEND }
    const id = idOf(p.session_id, ctx)
    if (!id) return { exists: false }
    return { exists: (await ctx.store.memoryGet(SESSION_NAMESPACE, id)).found }
  },
})
