/**
 * Applying a run's outcome inside a unit of work on any task store (protocol/outcome.ts has the rule): one
 * `task.transitioned` per step, steps the table does not allow skipped.
 */

import { type OutcomeSteps, outcomeSteps } from '../protocol/outcome.ts'
import type { Outcome } from '../protocol/schemas/payloads.ts'
import { taskMetadata } from '../protocol/task-file.ts'
import type { TaskUnit } from '../store/port.ts'

/** `ids`, when given, names each move's event (`to-<status>`): see worker-report.ts. */
export async function applyOutcome(
  unit: TaskUnit,
  outcome: Outcome,
  actor: string,
  reason: string | undefined,
  ids?: (what: string) => string,
): Promise<OutcomeSteps> {
  const steps = outcomeSteps({ status: unit.task.status, metadata: taskMetadata(unit.task) }, outcome)
  for (const { to } of steps.applied)
    await unit.move(to, { actor, ...(reason ? { reason } : {}), ...(ids ? { eventId: ids(`to-${to}`) } : {}) })
  return steps
}
