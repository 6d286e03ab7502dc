/**
 * Who may speak for a task: its lease holder while it has a lease; otherwise its routed agent or the agent of its
 * last run (the lease is cleared when a task leaves in-progress, and a re-delivered completion report from that
 * run's agent must still be accepted). The reference checked `lease.agent ?? routing.agent`, and not for
 * status updates at all; we check every message type.
 */

import type { RunArtifact } from './schemas/run.ts'
import { type Task, routedAgent, taskLease } from './task-file.ts'

export type AuthResult = { ok: true } | { ok: false; reason: 'unassigned_task' | 'unauthorized_agent'; expected: string[] }

function authorizedAgents(task: Task, run: RunArtifact | undefined): string[] {
  const lease = taskLease(task)
  if (lease) return [lease.agent]
  const out = new Set<string>()
  const routed = routedAgent(task)
  if (routed) out.add(routed)
  if (run) out.add(run.agentId)
  return [...out]
}

/** Whether `sender` may speak for `task`, its current run read from whichever store holds it. */
export function authorizeRun(task: Task, run: RunArtifact | undefined, sender: string): AuthResult {
  const expected = authorizedAgents(task, run)
  if (expected.length === 0) return { ok: false, reason: 'unassigned_task', expected }
  return expected.includes(sender) ? { ok: true } : { ok: false, reason: 'unauthorized_agent', expected }
}
