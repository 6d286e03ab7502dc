/**
 * Task frontmatter as the reference implementation defines it (research/aof.md §1.2). A loose object: keys we do
 * not know are kept verbatim and written back (the reference drops them on rewrite; we must not). Defaults are not
 * materialised on read, so a rewrite changes only what the operation changed.
 */

import * as v from 'valibot'
import { Datetime, NonEmpty, notArray, StatusSchema, TaskIdSchema } from './common.ts'

export const PRIORITIES = ['critical', 'high', 'normal', 'low'] as const

export const LeaseSchema = notArray(
  v.looseObject({
    // Any string, as in the reference: a lease held by "" is read (no real agent matches it until it expires).
    agent: v.string(),
    acquiredAt: Datetime,
    expiresAt: Datetime,
    renewCount: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  }),
)

export const TaskFrontmatterSchema = v.looseObject({
  schemaVersion: v.picklist([1, 2], (i) => `expected schemaVersion 1 or 2, received ${JSON.stringify(i.input)}`),
  id: TaskIdSchema,
  project: v.optional(NonEmpty),
  title: NonEmpty,
  status: StatusSchema,
  priority: v.optional(v.picklist(PRIORITIES)),
  routing: v.optional(
    notArray(
      v.looseObject({
        role: v.optional(v.string()),
        team: v.optional(v.string()),
        agent: v.optional(v.string()),
        tags: v.optional(v.array(v.string())),
        workflow: v.optional(v.string()),
      }),
    ),
  ),
  lease: v.optional(v.nullable(LeaseSchema)),
  createdAt: Datetime,
  updatedAt: Datetime,
  lastTransitionAt: Datetime,
  createdBy: v.string(),
  parentId: v.optional(TaskIdSchema),
  dependsOn: v.optional(v.array(TaskIdSchema)),
  contentHash: v.optional(v.string()),
  metadata: v.optional(v.record(v.string(), v.unknown())),
})

export type Lease = v.InferOutput<typeof LeaseSchema>
