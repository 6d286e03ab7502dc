import type { Action } from '../types.ts'
import { jsonParse } from './parse.ts'
import { jsonTransform } from './transform.ts'

/** `json.parse` (tolerant JSON from model text) and `json.transform` (reshape data without code). */
export const jsonActions: Action[] = [jsonParse, jsonTransform]
