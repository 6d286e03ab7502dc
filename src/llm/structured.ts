/**
 * Structured output: when a call gives `format`, its reply must contain JSON. Parsing is tolerant (code fences,
 * prose around the object — small models do both even under a constrained decoder), but a reply with no JSON in
 * it is an `LLM_BAD_RESPONSE` carrying the raw reply, for both `json` and a JSON Schema: a caller that asked for
 * structure never gets a result without `parsed`. The schema itself is not validated here; the action that owns
 * it validates `parsed` with its own valibot schema.
 */

import { TeaError } from '../core/errors.ts'
import { extractJson } from '../core/json-extract.ts'
import type { JsonSchema } from './types.ts'

export const RAW_REPLY_LIMIT = 500

export function parseStructured(content: string, format: 'json' | JsonSchema, where: { model: string; attempts: number }): unknown {
  const r = extractJson(content)
  if (r.ok) return r.value
  const raw = content.length > RAW_REPLY_LIMIT ? `${content.slice(0, RAW_REPLY_LIMIT)}…` : content
  const asked = format === 'json' ? 'JSON' : 'JSON matching the requested schema'
  return fail(where, asked, r.reason, raw, content)
}

function fail(where: { model: string; attempts: number }, asked: string, reason: string, raw: string, content: string): never {
  throw new TeaError(
    'LLM_BAD_RESPONSE',
    `${where.model} was asked for ${asked} but replied with text that holds none (${reason}): ${JSON.stringify(raw)}`,
    {
      details: { model: where.model, attempts: where.attempts, content },
      hint: 'use a model that supports structured output, lower the temperature, or add an example of the JSON to the prompt',
    },
  )
}
