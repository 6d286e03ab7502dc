import * as v from 'valibot'
import { TASK_STATUSES } from '../../aof/index.ts'
import { defineAction } from '../types.ts'
import { commonParams, resolveCommon, sendMessage } from './send.ts'

const params = v.object({
  ...commonParams,
  status: v.optional(v.pipe(v.picklist(TASK_STATUSES), v.description('Move the task to this status (if the table allows).'))),
  progress: v.optional(v.string()),
  notes: v.optional(v.string()),
  blockers: v.optional(v.array(v.string())),
})

/** `aof.status`: sends a `status.update` (a transition and/or a Work Log entry). */
export const aofStatus = defineAction({
  name: 'aof.status',
  description: 'Sends an AOF/1 status.update: an optional status change plus progress/notes/blockers for the Work Log.',
  params,
  run(p, ctx) {
    const r = resolveCommon('aof.status', p, ctx)
    const payload: Record<string, unknown> = { taskId: r.taskId, agentId: r.agent }
    for (const k of ['status', 'progress', 'notes', 'blockers'] as const) if (p[k] !== undefined) payload[k] = p[k]
    return sendMessage('aof.status', ctx, p, r, 'status.update', payload)
  },
})
