/**
 * The arguments of a tool call as the two APIs send them: Ollama gives an object, OpenAI a JSON string. Either
 * way the result is an object; a string that is not a JSON object is a malformed reply (LLM_BAD_RESPONSE),
 * carrying what came.
 */

import { parseJsonOrUndefined } from '../core/json.ts'
import { isPlainObject } from '../core/util.ts'
import { badResponse, type ServerRef } from './failure.ts'

export function toolArguments(value: unknown, server: ServerRef, raw: string): Record<string, unknown> {
  if (value === undefined || value === null || value === '') return {}
  if (isPlainObject(value)) return value
  if (typeof value === 'string') {
    const parsed = parseJsonOrUndefined(value)
    if (isPlainObject(parsed)) return parsed
  }
  throw badResponse(server, `tool call arguments that are not a JSON object: ${JSON.stringify(value).slice(0, 200)}`, raw)
}
