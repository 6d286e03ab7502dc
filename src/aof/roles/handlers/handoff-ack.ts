/**
 * `handoff.accepted` / `handoff.rejected` from the delegate. Accepted: logged, nothing moves. Rejected: the child
 * goes to `blocked` when the table allows it; `task.transitioned` is logged only when it did move (the reference
 * logged a phantom transition for a task that could not move).
 */

import { authorizeRun } from '../../protocol/authorize.ts'
import { type RouteOutcome, rejectOn } from '../../protocol/route-outcome.ts'
import type { HandoffAckEnvelope } from '../../protocol/schemas/envelope.ts'
import { isValidTransition } from '../../protocol/status.ts'
import type { TaskStore, TaskUnit } from '../../store/port.ts'

export async function handleHandoffAck(
  store: TaskStore,
  unit: TaskUnit,
  env: HandoffAckEnvelope,
  accepted: boolean,
): Promise<RouteOutcome> {
  const task = unit.task
  const auth = authorizeRun(task, await store.readRun(task.id), env.fromAgent)
  if (!auth.ok) return rejectOn(store, env, auth.reason, { sender: env.fromAgent, expected: auth.expected })
  if (accepted) {
    await store.appendEvents([{ type: 'delegation.accepted', actor: env.fromAgent, taskId: task.id, payload: {} }])
    return { outcome: 'accepted', taskId: task.id, type: env.type, transitions: [] }
  }
  const reason = env.payload.reason ?? 'handoff_rejected'
  const transitions: NonNullable<RouteOutcome['transitions']> = []
  if (task.status !== 'blocked' && isValidTransition(task.status, 'blocked')) {
    await unit.move('blocked', { actor: env.fromAgent, reason })
    transitions.push({ from: task.status, to: 'blocked' })
  }
  await store.appendEvents([{ type: 'delegation.rejected', actor: env.fromAgent, taskId: task.id, payload: { reason } }])
  return { outcome: 'accepted', taskId: task.id, type: env.type, transitions }
}
