/**
 * `handoff.accepted` / `handoff.rejected` from the delegate. Accepted: logged, nothing moves. Rejected: the child
 * goes to `blocked` when the table allows it; `task.transitioned` is logged only when it did move (the reference
 * logged a phantom transition for a task that could not move).
 */

import { authorize } from '../authorize.ts'
import type { AofContext } from '../context.ts'
import { appendEvent } from '../events.ts'
import { type RouteOutcome, rejectMessage } from '../route-outcome.ts'
import type { HandoffAckEnvelope } from '../schemas/envelope.ts'
import { isValidTransition } from '../status.ts'
import type { Task } from '../task-file.ts'
import { moveTaskLocked } from '../task-transition.ts'

export function handleHandoffAck(ctx: AofContext, env: HandoffAckEnvelope, task: Task, accepted: boolean): RouteOutcome {
  const auth = authorize(ctx, task, env.fromAgent)
  if (!auth.ok) return rejectMessage(ctx, env, auth.reason, { sender: env.fromAgent, expected: auth.expected })
  if (accepted) {
    appendEvent(ctx, { type: 'delegation.accepted', actor: env.fromAgent, taskId: task.id, payload: {} })
    return { outcome: 'accepted', taskId: task.id, type: env.type, transitions: [] }
  }
  const reason = env.payload.reason ?? 'handoff_rejected'
  const transitions: NonNullable<RouteOutcome['transitions']> = []
  if (task.status !== 'blocked' && isValidTransition(task.status, 'blocked')) {
    moveTaskLocked(ctx, task, 'blocked', { actor: env.fromAgent, reason })
    transitions.push({ from: task.status, to: 'blocked' })
  }
  appendEvent(ctx, { type: 'delegation.rejected', actor: env.fromAgent, taskId: task.id, payload: { reason } })
  return { outcome: 'accepted', taskId: task.id, type: env.type, transitions }
}
