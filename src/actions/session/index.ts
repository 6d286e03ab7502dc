import type { Action } from '../types.ts'
import { sessionDelete, sessionExists, sessionLoad, sessionSave } from './actions.ts'

/** TEA's session persistence on tea's store (actions.ts). */
export const sessionActions: Action[] = [sessionLoad, sessionSave, sessionDelete, sessionExists]
