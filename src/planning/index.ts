/**
 * The planning feature (SPEC §1, §3.7): `plan.decompose`, `plan.execute`, `plan.replan`, `plan.status`. Only
 * src/features.ts imports this, behind the FEATURE_PLANNING build flag, so a build without it carries none of it.
 */

import type { Action } from '../actions/types.ts'
import { decomposeAction } from './decompose.ts'
import { executeAction } from './execute.ts'
import { replanAction } from './replan.ts'
import { statusAction } from './status.ts'

export function planningActions(): Action[] {
  return [decomposeAction, executeAction, replanAction, statusAction] as Action[]
}
