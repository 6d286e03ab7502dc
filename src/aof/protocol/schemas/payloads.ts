/**
 * The four AOF/1 payload kinds with the reference implementation's limits and defaults (research/aof.md §3.2).
 */

import * as v from 'valibot'
import { Datetime, StatusSchema, TaskIdSchema, text, textList } from './common.ts'

export const OUTCOMES = ['done', 'blocked', 'needs_review', 'partial'] as const
export type Outcome = (typeof OUTCOMES)[number]

const Count = v.pipe(v.number('expected a number'), v.integer('expected an integer'), v.minValue(0, 'counts must be non-negative'))

export const TestReport = v.pipe(
  v.object({ total: Count, passed: Count, failed: Count }),
  v.check((t) => t.passed + t.failed <= t.total, 'passed + failed must not exceed total'),
)

export const CompletionReportPayload = v.object({
  outcome: v.picklist(OUTCOMES, (i) => `outcome must be one of: ${OUTCOMES.join(', ')}; received ${JSON.stringify(i.input)}`),
  summaryRef: text(256),
  deliverables: v.optional(textList(50, 256), () => []),
  tests: TestReport,
  blockers: v.optional(textList(20, 256), () => []),
  notes: text(10_000),
})

export const StatusUpdatePayload = v.pipe(
  v.object({
    taskId: TaskIdSchema,
    agentId: v.string(),
    status: v.optional(StatusSchema),
    progress: v.optional(text(1_000)),
    blockers: v.optional(textList(20, 256)),
    notes: v.optional(text(10_000)),
  }),
  v.check(
    (p) => p.status !== undefined || p.progress !== undefined || p.blockers !== undefined || p.notes !== undefined,
    'at least one update field is required: status, progress, blockers or notes',
  ),
)

export const HandoffRequestPayload = v.object({
  taskId: TaskIdSchema,
  parentTaskId: TaskIdSchema,
  fromAgent: v.string(),
  toAgent: v.string(),
  acceptanceCriteria: v.optional(textList(50, 256), () => []),
  expectedOutputs: v.optional(textList(50, 256), () => []),
  contextRefs: v.optional(textList(50, 256), () => []),
  constraints: v.optional(textList(50, 256), () => []),
  dueBy: Datetime,
})

export const HandoffAckPayload = v.object({
  taskId: TaskIdSchema,
  accepted: v.boolean('expected accepted to be true or false'),
  reason: v.optional(text(512)),
})

export type HandoffRequest = v.InferOutput<typeof HandoffRequestPayload>
