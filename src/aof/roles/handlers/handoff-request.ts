/**
 * `handoff.request`: the holder of a parent task delegates the child task (the envelope's `taskId`) to `toAgent`.
 * Checks in order: child exists, parent exists, the sender speaks for the parent or the child, the depth guard
 * (`parentDepth + 1 > 1` is refused: only root tasks delegate). Then the child gets `delegationDepth`, is routed to
 * `toAgent` (so the receiver may acknowledge), and receives `inputs/handoff.json` and `inputs/handoff.md`. Sending
 * the same request again rewrites the same artifacts and depth.
 */

import { authorizeRun } from '../../protocol/authorize.ts'
import { type RouteOutcome, rejectOn } from '../../protocol/route-outcome.ts'
import type { HandoffRequestEnvelope } from '../../protocol/schemas/envelope.ts'
import type { HandoffRequest } from '../../protocol/schemas/payloads.ts'
import type { TaskStore, TaskUnit } from '../../store/port.ts'
import { taskMetadata } from '../../protocol/task-file.ts'

export const MAX_DELEGATION_DEPTH = 1

const enc = new TextEncoder()

export async function rejectDelegation(
  store: TaskStore,
  env: HandoffRequestEnvelope,
  reason: string,
  extra: Record<string, unknown> = {},
): Promise<RouteOutcome> {
  await store.appendEvents([
    {
      type: 'delegation.rejected',
      actor: env.fromAgent,
      taskId: env.taskId,
      payload: { reason, parentTaskId: env.payload.parentTaskId, ...extra },
    },
  ])
  return rejectOn(store, env, reason, extra)
}

export async function handleHandoffRequest(store: TaskStore, unit: TaskUnit, env: HandoffRequestEnvelope): Promise<RouteOutcome> {
  const p = env.payload
  const child = unit.task
  // The parent is read without its lock: only its depth and holder are needed, and both are stable while it is
  // in progress; taking a second lock here could deadlock against a handoff in the other direction.
  const parent = p.parentTaskId === child.id ? undefined : await unit.peek(p.parentTaskId)
  if (!parent) return rejectDelegation(store, env, 'parent_not_found')
  const onParent = authorizeRun(parent, await store.readRun(parent.id), env.fromAgent)
  const onChild = authorizeRun(child, await store.readRun(child.id), env.fromAgent)
  if (!onParent.ok && !onChild.ok) {
    return rejectDelegation(store, env, onParent.reason, { sender: env.fromAgent, expected: [...onParent.expected, ...onChild.expected] })
  }
  const rawDepth = taskMetadata(parent).delegationDepth
  const parentDepth = typeof rawDepth === 'number' ? rawDepth : 0
  if (parentDepth + 1 > MAX_DELEGATION_DEPTH) {
    return rejectDelegation(store, env, 'nested_delegation', { parentDepth, maxDepth: MAX_DELEGATION_DEPTH })
  }
  const updated = await unit.update((t) => {
    t.data.metadata = { ...taskMetadata(t), delegationDepth: parentDepth + 1 }
    const routing = typeof t.data.routing === 'object' && t.data.routing !== null ? t.data.routing : {}
    t.data.routing = { ...routing, agent: p.toAgent }
  })
  await store.writeFile(updated.id, 'inputs/handoff.json', enc.encode(JSON.stringify(p, null, 2)))
  await store.writeFile(updated.id, 'inputs/handoff.md', enc.encode(renderHandoff(p)))
  await store.appendEvents([
    {
      type: 'delegation.requested',
      actor: env.fromAgent,
      taskId: child.id,
      payload: { parentTaskId: p.parentTaskId, toAgent: p.toAgent },
    },
  ])
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
