import * as v from 'valibot'
import { parseJson } from '../../core/json.ts'
import { TeaError } from '../../core/errors.ts'
import { extractJson, type ExtractResult } from '../../core/json-extract.ts'
import { defineAction } from '../types.ts'

const EXCERPT = 200

const params = v.object({
  text: v.pipe(v.string(), v.description('The text holding JSON, e.g. a model reply with prose or code fences.')),
  strict: v.optional(
    v.pipe(v.boolean(), v.description('Accept only a text that is exactly JSON (no fences, no surrounding prose).')),
    false,
  ),
  default: v.optional(v.pipe(v.unknown(), v.description('Returned as data when the text holds no JSON, instead of failing.'))),
})

export const jsonParse = defineAction({
  name: 'json.parse',
  description:
    'Parses JSON from text, tolerating code fences and surrounding prose (the first balanced object or array), and returns {data}.',
  params,
  run(p) {
    const r: ExtractResult = p.strict ? strictParse(p.text) : extractJson(p.text)
    if (r.ok) return { data: r.value }
    if (p.default !== undefined) return { data: p.default }
    const excerpt = p.text.length > EXCERPT ? `${p.text.slice(0, EXCERPT)}…` : p.text
    throw new TeaError(
      'JSON_PARSE_ERROR',
      `json.parse: expected ${p.strict ? 'a JSON text' : 'JSON in the text'}, but ${r.reason}; the text begins: ${JSON.stringify(excerpt)}`,
      {
        details: { reason: r.reason, text: excerpt },
        hint: p.strict ? 'drop strict: true to accept fenced or embedded JSON' : 'give a default to continue without JSON',
      },
    )
  },
})

function strictParse(text: string): ExtractResult {
  try {
    return { ok: true, value: parseJson(text, 'the text') }
  } catch (e) {
    return { ok: false, reason: (e as Error).message }
  }
}
