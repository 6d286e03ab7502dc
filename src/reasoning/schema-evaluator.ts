/**
 * `reflection.loop`'s schema evaluator: JSON Schema (draft 7, as TEA's), after TEA's coercion of strings to the
 * numbers, integers and booleans the schema asks for (a small model writes `"age": "42"`). Errors name the path
 * (`address.city`) and say what is wrong; the container errors a validator adds above a failing property ("property
 * x does not match") are dropped, since the property's own error says it better. A schema that is not a valid
 * schema is an evaluation error, not a crash. The validator is @cfworker/json-schema: complete drafts, no code
 * generation, small.
 */

import { Validator, type Schema } from '@cfworker/json-schema'
import { errorMessage } from '../core/errors.ts'
import { isPlainObject } from '../core/util.ts'

/** What an evaluator of `reflection.loop` concludes about one output. */
export interface Evaluation {
  valid: boolean
  score: number
  errors: Array<Record<string, unknown>>
  suggestions: string[]
}

const validators = new WeakMap<object, Validator>()

export function schemaVerdict(schema: Record<string, unknown>, output: unknown): Evaluation {
  let validator = validators.get(schema)
  try {
    if (!validator) validators.set(schema, (validator = new Validator(schema as Schema, '7', false)))
    const result = validator.validate(coerce(output, schema))
    if (result.valid) return { valid: true, score: 1, errors: [], suggestions: [] }
    const leaves = result.errors.filter(
      (e) => !['properties', 'items', 'allOf', 'anyOf', '$ref'].includes(e.keyword) || result.errors.length === 1,
    )
    const errors = (leaves.length ? leaves : result.errors).map((e) => {
      const path = e.instanceLocation.replace(/^#\/?/, '').split('/').filter(Boolean).join('.')
      return { path, message: e.error, keyword: e.keyword }
    })
    const suggestions = errors.map((e) =>
      e.keyword === 'required' ? `add the missing field at ${e.path || 'the top level'}` : `fix ${e.path || 'the output'}: ${e.message}`,
    )
    return { valid: false, score: 0, errors, suggestions }
  } catch (e) {
    return {
      valid: false,
      score: 0,
      errors: [{ message: `the schema cannot be used: ${errorMessage(e)}`, type: 'schema_error' }],
      suggestions: [],
    }
  }
}

/** Strings turned into the number, integer or boolean the schema wants at their place (TEA's coercion). */
export function coerce(value: unknown, schema: unknown): unknown {
  if (!isPlainObject(schema)) return value
  const type = schema.type
  if (typeof value === 'string') {
    const t = value.trim()
    if ((type === 'integer' || type === 'number') && t !== '' && Number.isFinite(Number(t))) {
      const n = Number(t)
      if (type === 'number' || Number.isInteger(n)) return n
    }
    if (type === 'boolean' && /^(true|false)$/i.test(t)) return t.toLowerCase() === 'true'
    return value
  }
  if (Array.isArray(value) && isPlainObject(schema.items)) return value.map((x) => coerce(x, schema.items))
  if (isPlainObject(value) && isPlainObject(schema.properties)) {
    const props = schema.properties
    const out: Record<string, unknown> = {}
    for (const [k, x] of Object.entries(value)) out[k] = Object.hasOwn(props, k) ? coerce(x, props[k]) : x
    return out
  }
  return value
}
