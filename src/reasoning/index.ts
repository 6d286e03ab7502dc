/**
 * The reasoning feature (SPEC §1; docs/reasoning.md): `reason.cot`, `reason.react`, `reason.self_correct`,
 * `reason.decompose` and TEA's `reflection.loop`. Only src/feature-list.ts imports this (its entry there, behind
 * the build flag), so a build without it carries none of it.
 */

import type { Action } from '../actions/types.ts'
import { cotAction } from './cot.ts'
import { decomposeAction } from './decompose.ts'
import { reactAction } from './react.ts'
import { reflectionLoop } from './reflection.ts'
import { selfCorrectAction } from './self-correct.ts'

export function actions(): Action[] {
  return [cotAction, reactAction, selfCorrectAction, decomposeAction, reflectionLoop] as Action[]
}
