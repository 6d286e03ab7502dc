import type { Action } from '../types.ts'
import { codeExecute } from './execute.ts'

/** TEA's code.execute on tea's Python sandbox (it runs python.run by name). */
export const codeActions: Action[] = [codeExecute]
