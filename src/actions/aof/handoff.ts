import * as v from 'valibot'
import { defineAction } from '../types.ts'
import { commonParams, resolveCommon, sendMessage } from './send.ts'

const params = v.object({
  ...commonParams,
  childTaskId: v.pipe(v.string(), v.description('The task to hand off.')),
  to: v.pipe(v.string(), v.description('The agent receiving the child task.')),
  acceptanceCriteria: v.optional(v.array(v.string()), []),
  expectedOutputs: v.optional(v.array(v.string()), []),
  contextRefs: v.optional(v.array(v.string()), []),
  constraints: v.optional(v.array(v.string()), []),
  dueBy: v.optional(v.pipe(v.string(), v.description('ISO 8601 deadline (default: 24 hours from now).'))),
})

/**
 * `aof.handoff`: the agent working on `taskId` (the parent) delegates `childTaskId` to `to` with a
 * `handoff.request`; the child receives `inputs/handoff.json` and `inputs/handoff.md`.
 */
export const aofHandoff = defineAction({
  name: 'aof.handoff',
  description: 'Delegates a child task to another agent with an AOF/1 handoff.request (acceptance criteria, outputs, context).',
  params,
  run(p, ctx) {
    const parent = resolveCommon('aof.handoff', p, ctx)
    const dueBy = p.dueBy ?? new Date(Date.now() + 86_400_000).toISOString()
    return sendMessage('aof.handoff', ctx, p, { taskId: p.childTaskId, agent: parent.agent }, 'handoff.request', {
      taskId: p.childTaskId,
      parentTaskId: parent.taskId,
      fromAgent: parent.agent,
      toAgent: p.to,
      acceptanceCriteria: p.acceptanceCriteria,
      expectedOutputs: p.expectedOutputs,
      contextRefs: p.contextRefs,
      constraints: p.constraints,
      dueBy,
    })
  },
})
