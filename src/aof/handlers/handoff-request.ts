/**
 * `handoff.request`: the holder of a parent task delegates the child task (the envelope's `taskId`) to `toAgent`.
 * Checks in order: child exists, parent exists, the sender speaks for the parent or the child, the depth guard
 * (`parentDepth + 1 > 1` is refused: only root tasks delegate). Then the child gets `delegationDepth`, is routed to
 * `toAgent` (so the receiver may acknowledge), and receives `inputs/handoff.json` and `inputs/handoff.md`. Sending
 * the same request again rewrites the same artifacts and depth.
 */

import { join } from 'node:path'
import { authorize } from '../authorize.ts'
import type { AofContext } from '../context.ts'
import { appendEvent } from '../events.ts'
import { writeFileAtomic } from '../fs-atomic.ts'
import { type RouteOutcome, rejectMessage } from '../route-outcome.ts'
import type { HandoffRequestEnvelope } from '../schemas/envelope.ts'
import type { HandoffRequest } from '../schemas/payloads.ts'
import { type Task, taskMetadata } from '../task-file.ts'
import { ensureTaskDirs, peekTask } from '../task-store.ts'
import { updateTaskLocked } from '../task-transition.ts'

export const MAX_DELEGATION_DEPTH = 1

export function rejectDelegation(
  ctx: AofContext,
  env: HandoffRequestEnvelope,
  reason: string,
  extra: Record<string, unknown> = {},
): RouteOutcome {
  appendEvent(ctx, {
    type: 'delegation.rejected',
    actor: env.fromAgent,
    taskId: env.taskId,
    payload: { reason, parentTaskId: env.payload.parentTaskId, ...extra },
  })
  return rejectMessage(ctx, env, reason, extra)
}

export function handleHandoffRequest(ctx: AofContext, env: HandoffRequestEnvelope, child: Task): RouteOutcome {
  const p = env.payload
  // The parent is read without its lock: only its depth and holder are needed, and both are stable while it is
  // in progress; taking a second lock here could deadlock against a handoff in the other direction.
  const parent = p.parentTaskId === child.id ? undefined : peekTask(ctx, p.parentTaskId)
  if (!parent) return rejectDelegation(ctx, env, 'parent_not_found')
  const onParent = authorize(ctx, parent, env.fromAgent)
  const onChild = authorize(ctx, child, env.fromAgent)
  if (!onParent.ok && !onChild.ok) {
    return rejectDelegation(ctx, env, onParent.reason, { sender: env.fromAgent, expected: [...onParent.expected, ...onChild.expected] })
  }
  const rawDepth = taskMetadata(parent).delegationDepth
  const parentDepth = typeof rawDepth === 'number' ? rawDepth : 0
  if (parentDepth + 1 > MAX_DELEGATION_DEPTH) {
    return rejectDelegation(ctx, env, 'nested_delegation', { parentDepth, maxDepth: MAX_DELEGATION_DEPTH })
  }
  const updated = updateTaskLocked(ctx, child, (t) => {
    t.data.metadata = { ...taskMetadata(t), delegationDepth: parentDepth + 1 }
    const routing = typeof t.data.routing === 'object' && t.data.routing !== null ? t.data.routing : {}
    t.data.routing = { ...routing, agent: p.toAgent }
  })
  const dir = ensureTaskDirs(ctx, updated.status, updated.id)
  writeFileAtomic(join(dir, 'inputs', 'handoff.json'), JSON.stringify(p, null, 2))
  writeFileAtomic(join(dir, 'inputs', 'handoff.md'), renderHandoff(p))
  appendEvent(ctx, {
    type: 'delegation.requested',
    actor: env.fromAgent,
    taskId: child.id,
    payload: { parentTaskId: p.parentTaskId, toAgent: p.toAgent },
  })
  return { outcome: 'accepted', taskId: child.id, type: env.type }
}

export function renderHandoff(p: HandoffRequest): string {
  const list = (items: readonly string[]): string => (items.length === 0 ? 'None' : items.map((i) => `- ${i}`).join('\n'))
  return [
    `# Handoff: ${p.taskId}`,
    '',
    `**Parent Task:** ${p.parentTaskId}`,
    `**From:** ${p.fromAgent}`,
    `**To:** ${p.toAgent}`,
    `**Due By:** ${p.dueBy}`,
    '',
    '## Acceptance Criteria',
    list(p.acceptanceCriteria),
    '',
    '## Expected Outputs',
    list(p.expectedOutputs),
    '',
    '## Context References',
    list(p.contextRefs),
    '',
    '## Constraints',
    list(p.constraints),
    '',
  ].join('\n')
}
