/**
 * Run artifacts under `runs/<TASK-ID>/`. Field names and types follow the reference (`run.json`,
 * `run_heartbeat.json`, `run_result.json`); we add `runId` to all three so a result or heartbeat can be tied to the
 * run that produced it (the reference applied an earlier run's result to a later run). Loose objects: keys written
 * by another implementation survive our rewrites.
 */

import * as v from 'valibot'
import { Datetime, NonEmpty, TaskIdSchema, textList, text } from './common.ts'
import { OUTCOMES, TestReport } from './payloads.ts'

export const RUN_STATUSES = ['running', 'completed', 'failed', 'abandoned'] as const

export const RunArtifactSchema = v.looseObject({
  taskId: TaskIdSchema,
  agentId: NonEmpty,
  runId: v.optional(NonEmpty),
  startedAt: Datetime,
  status: v.optional(v.picklist(RUN_STATUSES), 'running'),
  // Each path optional, as the reference defaults each one: a run.json it accepts must not be unreadable here.
  artifactPaths: v.optional(
    v.looseObject({ inputs: v.optional(v.string()), work: v.optional(v.string()), output: v.optional(v.string()) }),
    () => ({
      inputs: 'inputs/',
      work: 'work/',
      output: 'outputs/',
    }),
  ),
  metadata: v.optional(v.record(v.string(), v.unknown()), () => ({})),
})

export const RunHeartbeatSchema = v.looseObject({
  taskId: TaskIdSchema,
  agentId: NonEmpty,
  runId: v.optional(NonEmpty),
  lastHeartbeat: Datetime,
  beatCount: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), 0),
  expiresAt: v.optional(Datetime),
})

export const RunResultSchema = v.looseObject({
  taskId: TaskIdSchema,
  agentId: NonEmpty,
  runId: v.optional(NonEmpty),
  completedAt: Datetime,
  outcome: v.picklist(OUTCOMES),
  summaryRef: v.optional(text(256)),
  handoffRef: v.optional(v.string()),
  deliverables: v.optional(textList(50, 256), () => []),
  tests: v.optional(TestReport),
  blockers: v.optional(textList(20, 256), () => []),
  notes: v.optional(text(10_000)),
})

export type RunArtifact = v.InferOutput<typeof RunArtifactSchema>
export type RunHeartbeat = v.InferOutput<typeof RunHeartbeatSchema>
export type RunResult = v.InferOutput<typeof RunResultSchema>
