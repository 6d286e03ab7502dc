/**
 * What the model is asked to reply, as valibot schemas. Each has two uses: its JSON Schema is sent as the call's
 * `format` so a structured-output decoder is constrained to it, and a *lenient* twin validates what came back
 * (small models send numeric ids, `depends_on` instead of `dependencies`, or a bare array), because a reply that
 * carries a usable plan should not fail on spelling.
 */

import * as v from 'valibot'
import { toJsonSchema } from '@valibot/to-json-schema'
import type { JsonSchema } from '../llm/types.ts'

// --- strict shapes, for the JSON Schema sent to the model ---

const strictSubtask = v.object({
  id: v.string(),
  description: v.string(),
  dependencies: v.array(v.string()),
})

/** Nested levels are spelled out to `depth` rather than through `lazy`, so the decoder cannot go deeper. */
function strictNested(depth: number): v.GenericSchema {
  if (depth <= 1) return strictSubtask
  return v.object({ ...strictSubtask.entries, subtasks: v.optional(v.array(strictNested(depth - 1))) })
}

export function flatReplySchema(): JsonSchema {
  return toJsonSchema(v.object({ subtasks: v.array(strictSubtask) })) as JsonSchema
}

export function hierarchicalReplySchema(maxDepth: number): JsonSchema {
  return toJsonSchema(v.object({ subtasks: v.array(strictNested(Math.max(1, maxDepth))) })) as JsonSchema
}

export function iterativeReplySchema(): JsonSchema {
  return toJsonSchema(v.object({ subtasks: v.array(strictSubtask), planning_complete: v.boolean() })) as JsonSchema
}

export function replanReplySchema(): JsonSchema {
  return toJsonSchema(v.object({ subtasks: v.array(strictSubtask), rationale: v.string() })) as JsonSchema
}

// --- lenient shapes, for parsing ---

const idLike = v.pipe(
  v.union([v.string(), v.number()]),
  v.transform((x) => String(x).trim()),
)

export interface LooseSubtask {
  id?: string
  description: string
  dependencies?: string[]
  timeout?: number
  subtasks?: LooseSubtask[]
}

export const looseSubtask: v.GenericSchema<unknown, LooseSubtask> = v.pipe(
  v.looseObject({
    id: v.optional(idLike),
    description: v.optional(v.string()),
    task: v.optional(v.string()),
    title: v.optional(v.string()),
    name: v.optional(v.string()),
    dependencies: v.optional(v.nullable(v.array(idLike))),
    depends_on: v.optional(v.nullable(v.array(idLike))),
    timeout: v.optional(v.number()),
    subtasks: v.optional(v.array(v.lazy(() => looseSubtask))),
    children: v.optional(v.array(v.lazy(() => looseSubtask))),
  }),
  v.check(
    (s) => [s.description, s.task, s.title, s.name].some((d) => typeof d === 'string' && d.trim() !== ''),
    'a subtask needs a description',
  ),
  v.transform((s) => {
    const out: LooseSubtask = { description: (s.description ?? s.task ?? s.title ?? s.name ?? '').trim() }
    if (s.id !== undefined && s.id !== '') out.id = s.id
    const deps = s.dependencies ?? s.depends_on
    if (deps) out.dependencies = deps
    if (s.timeout !== undefined) out.timeout = s.timeout
    const children = s.subtasks ?? s.children
    if (children && children.length > 0) out.subtasks = children
    return out
  }),
)

export interface LooseReply {
  subtasks: LooseSubtask[]
  planning_complete?: boolean
  rationale?: string
}

/** A bare array of subtasks. */
export const looseArrayReply: v.GenericSchema<unknown, LooseReply> = v.pipe(
  v.array(looseSubtask),
  v.transform((subtasks) => ({ subtasks })),
)

/** `{subtasks: […]}` (or `steps`/`tasks`/`plan`). */
export const looseObjectReply: v.GenericSchema<unknown, LooseReply> = v.pipe(
  v.looseObject({
    subtasks: v.optional(v.array(looseSubtask)),
    steps: v.optional(v.array(looseSubtask)),
    tasks: v.optional(v.array(looseSubtask)),
    plan: v.optional(v.array(looseSubtask)),
    planning_complete: v.optional(v.boolean()),
    complete: v.optional(v.boolean()),
    rationale: v.optional(v.string()),
    adjustment_rationale: v.optional(v.string()),
  }),
  v.check((r) => [r.subtasks, r.steps, r.tasks, r.plan].some(Array.isArray), 'expected a "subtasks" array'),
  v.transform((r) => {
    const out: LooseReply = { subtasks: r.subtasks ?? r.steps ?? r.tasks ?? r.plan ?? [] }
    const done = r.planning_complete ?? r.complete
    if (done !== undefined) out.planning_complete = done
    const why = r.rationale ?? r.adjustment_rationale
    if (why !== undefined) out.rationale = why
    return out
  }),
)
