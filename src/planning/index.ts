/**
 * The planning feature (SPEC §1, §3.7): `plan.decompose`, `plan.execute`, `plan.replan`, `plan.status`. Only
 * src/feature-list.ts imports this (its entry there, behind the build flag), so a build without it carries none of
 * it.
 */

import type { Action } from '../actions/types.ts'
import { decomposeAction } from './decompose.ts'
import { executeAction } from './execute.ts'
import { replanAction } from './replan.ts'
import { statusAction } from './status.ts'

export function actions(): Action[] {
  return [decomposeAction, executeAction, replanAction, statusAction] as Action[]
}
