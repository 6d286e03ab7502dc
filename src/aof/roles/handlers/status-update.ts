/**
 * `status.update`: an optional transition plus a Work Log entry. The transition happens when `status` differs from
 * the current one and the table allows it (otherwise a `protocol.message.warning` says why nothing moved); the
 * entry (progress, notes, blockers) is appended whenever there is text, transition or not, so no report is lost.
 */

import { authorizeRun } from '../../protocol/authorize.ts'
import { type RouteOutcome, rejectOn, warnOn } from '../../protocol/route-outcome.ts'
import type { StatusUpdateEnvelope } from '../../protocol/schemas/envelope.ts'
import { isValidTransition } from '../../protocol/status.ts'
import type { TaskStore, TaskUnit } from '../../store/port.ts'
import { contentHash } from '../../protocol/task-file.ts'
import { appendWorkLog, workLogEntry } from '../../protocol/work-log.ts'

export async function handleStatusUpdate(store: TaskStore, unit: TaskUnit, env: StatusUpdateEnvelope): Promise<RouteOutcome> {
  const task = unit.task
  const auth = authorizeRun(task, await store.readRun(task.id), env.fromAgent)
  if (!auth.ok) return rejectOn(store, env, auth.reason, { sender: env.fromAgent, expected: auth.expected })
  const p = env.payload
  // An empty agentId (the reference accepts one) is recorded under the sender.
  const actor = p.agentId || env.fromAgent
  const warnings: string[] = []
  const transitions: NonNullable<RouteOutcome['transitions']> = []
  let current = task
  if (p.status !== undefined && p.status !== current.status) {
    if (isValidTransition(current.status, p.status)) {
      const reason = (p.blockers && p.blockers.length > 0 ? p.blockers.join('; ') : undefined) ?? p.notes ?? p.progress
      const from = current.status
      current = await unit.move(p.status, { actor, ...(reason ? { reason } : {}) })
      transitions.push({ from, to: p.status })
    } else {
      warnings.push(await warnOn(store, env, 'invalid_transition', { from: current.status, to: p.status }))
    }
  }
  const entry = workLogEntry(new Date(env.sentAt).toISOString(), {
    ...(p.progress !== undefined ? { progress: p.progress } : {}),
    ...(p.notes !== undefined ? { notes: p.notes } : {}),
    ...(p.blockers !== undefined ? { blockers: p.blockers } : {}),
  })
  if (entry) {
    const body = appendWorkLog(current.body, entry)
    if (body !== current.body) {
      await unit.update((t) => {
        t.body = body
        t.data.contentHash = contentHash(body)
      })
    }
  }
  return { outcome: 'accepted', taskId: task.id, type: env.type, transitions, ...(warnings.length ? { warnings } : {}) }
}
