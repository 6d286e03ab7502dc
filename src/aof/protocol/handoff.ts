/**
 * Handoff inputs: what a `handoff.request` leaves for the delegate, as `inputs/handoff.json` in the task's companion
 * files, and what a worker hands its agent from it (`state.task.inputs`).
 */

import { parseJsonOrUndefined } from '../../core/json.ts'
import { isPlainObject } from '../../core/util.ts'

/** The inputs in the text of a task's `inputs/handoff.json` (either store): its object, or `{}` when absent or not one. */
export function handoffInputsOf(raw: string | undefined): Record<string, unknown> {
  if (raw === undefined) return {}
  const parsed = parseJsonOrUndefined(raw)
  return isPlainObject(parsed) ? parsed : {}
}
