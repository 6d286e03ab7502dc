/**
 * A structural check of a JSON Schema (schema.merge's `validate: true`): what TEA asks of jsonschema's Draft
 * 2020-12 `check_schema`, for the keywords a merged schema is made of. Each keyword is checked for the kind of value
 * the draft requires (`type` a type name or a list of them, `properties` a mapping of schemas, `required` a list of
 * strings …), recursively through every subschema. Returns the problems, each with its JSON path; empty is valid.
 */

const TYPES = new Set(['null', 'boolean', 'object', 'array', 'number', 'string', 'integer'])
const SCHEMA = ['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames']
const SCHEMA_MAP = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']
const SCHEMA_LIST = ['allOf', 'anyOf', 'oneOf', 'prefixItems']
const COUNTS = ['minLength', 'maxLength', 'minItems', 'maxItems', 'minProperties', 'maxProperties', 'minContains', 'maxContains']
const NUMBERS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf']
const STRINGS = ['$schema', '$id', '$ref', 'pattern', 'format', 'title', 'description', '$comment']
/** Deeper than any schema a person writes; a deeper one is refused rather than walked (hostile input). */
const MAX_DEPTH = 64

const isMapping = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x)

export function schemaProblems(schema: unknown): string[] {
  const problems: string[] = []
  check(schema, '$', 0, problems)
  return problems
}

function check(s: unknown, path: string, depth: number, out: string[]): void {
  if (typeof s === 'boolean') return
  if (!isMapping(s)) return void out.push(`${path}: a schema is an object or a boolean, not ${kind(s)}`)
  if (depth > MAX_DEPTH) return void out.push(`${path}: nested deeper than ${MAX_DEPTH} levels`)
  const at = (k: string): string => `${path}.${k}`
  if ('type' in s) {
    const t = s.type
    const names = Array.isArray(t) ? t : [t]
    if (names.length === 0 || !names.every((n) => typeof n === 'string' && TYPES.has(n)))
      out.push(`${at('type')}: expected one of ${[...TYPES].join(', ')} (or a list of them), got ${JSON.stringify(t)}`)
  }
  for (const k of SCHEMA) if (k in s) check(s[k], at(k), depth + 1, out)
  for (const k of SCHEMA_MAP) {
    if (!(k in s)) continue
    const m = s[k]
    if (!isMapping(m)) out.push(`${at(k)}: expected an object of schemas, got ${kind(m)}`)
    else for (const [name, sub] of Object.entries(m)) check(sub, `${at(k)}.${name}`, depth + 1, out)
  }
  for (const k of SCHEMA_LIST) {
    if (!(k in s)) continue
    const l = s[k]
    if (!Array.isArray(l) || l.length === 0) out.push(`${at(k)}: expected a non-empty array of schemas, got ${kind(l)}`)
    else l.forEach((sub, i) => check(sub, `${at(k)}[${i}]`, depth + 1, out))
  }
  if ('required' in s) {
    const r = s.required
    if (!Array.isArray(r) || !r.every((x) => typeof x === 'string') || new Set(r).size !== r.length)
      out.push(`${at('required')}: expected an array of distinct strings, got ${JSON.stringify(r)}`)
  }
  if ('enum' in s && !Array.isArray(s.enum)) out.push(`${at('enum')}: expected an array, got ${kind(s.enum)}`)
  for (const k of COUNTS)
    if (k in s && !(Number.isInteger(s[k]) && (s[k] as number) >= 0))
      out.push(`${at(k)}: expected a non-negative integer, got ${JSON.stringify(s[k])}`)
  for (const k of NUMBERS) if (k in s && typeof s[k] !== 'number') out.push(`${at(k)}: expected a number, got ${JSON.stringify(s[k])}`)
  if (typeof s.multipleOf === 'number' && s.multipleOf <= 0) out.push(`${at('multipleOf')}: expected a number above 0`)
  for (const k of STRINGS) if (k in s && typeof s[k] !== 'string') out.push(`${at(k)}: expected a string, got ${kind(s[k])}`)
  if (typeof s.pattern === 'string') {
    try {
      new RegExp(s.pattern, 'u')
    } catch {
      out.push(`${at('pattern')}: not a regular expression: ${JSON.stringify(s.pattern)}`)
    }
  }
}

function kind(x: unknown): string {
  return x === null ? 'null' : Array.isArray(x) ? 'an array' : typeof x === 'object' ? 'an object' : `${typeof x} ${JSON.stringify(x)}`
}
