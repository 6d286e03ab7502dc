import * as v from 'valibot'
import { parseDocument } from 'yaml'
import { errorMessage, TeaError } from '../../core/errors.ts'
import { parseJson } from '../../core/json.ts'
import { fileRead } from '../file/read.ts'
import { defineAction, type ActionContext } from '../types.ts'
import { mergeAll } from './deep-merge.ts'
import { schemaProblems } from './schema-check.ts'

/** Most schemas one merge takes, and most bytes one schema file may have: bounds on what a file can ask for. */
const MAX_SCHEMAS = 100
const MAX_FILE_BYTES = 1024 * 1024

const params = v.object({
  schemas: v.pipe(
    v.array(v.unknown()),
    v.maxLength(MAX_SCHEMAS),
    v.description(
      "The schemas, first lowest: each {path: file in the workspace, JSON or .yaml/.yml} or {inline: schema}. ({uses: git ref or URI} is TEA's and fails here.)",
    ),
  ),
  validate: v.optional(v.pipe(v.boolean(), v.description('Check the merged schema as a JSON Schema.')), false),
  output_key: v.optional(v.pipe(v.string(), v.minLength(1), v.description('The result key of the merged schema.')), 'merged_schema'),
})

/**
 * TEA's schema.merge (schema_actions.py): its result shapes, failures included — a schema that cannot be loaded
 * is `{success: false, error, errors}`, not a failed node, as in TEA. `path:` is read as file.read reads (inside
 * the workspace, TEA reads from its working directory).
 */
export const schemaMerge = defineAction({
  name: 'schema.merge',
  description:
    "Deep-merges JSON schemas (TEA's kubectl-style merge: objects merge, later values win, lists are replaced) and returns {success, <output_key>: schema}.",
  params,
  async run(p, ctx) {
    const loaded: unknown[] = []
    const errors: string[] = []
    for (const [i, spec] of p.schemas.entries()) {
      try {
        loaded.push(await load(spec, ctx))
      } catch (e) {
        errors.push(`Schema ${i}: ${errorMessage(e)}`)
      }
    }
    if (errors.length) return { success: false, error: 'Failed to load schemas', errors }
    const present = loaded.filter((s) => s !== null && s !== undefined)
    if (present.length === 0) return { success: false, error: 'No schemas provided' }
    let merged: unknown
    try {
      merged = mergeAll(present)
    } catch (e) {
      throw new TeaError('INVALID_PARAMS', `schema.merge: ${errorMessage(e)}`)
    }
    const result: Record<string, unknown> = { success: true, [p.output_key]: merged }
    if (p.validate) {
      const problems = schemaProblems(merged)
      result.validation = { valid: problems.length === 0, errors: problems, schema: problems.length ? null : merged }
      if (problems.length) Object.assign(result, { success: false, error: 'Merged schema is not valid JSON Schema' })
    }
    return result
  },
})

async function load(spec: unknown, ctx: ActionContext): Promise<unknown> {
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec))
    throw new Error(`Invalid schema spec: expected a mapping with 'path', 'uses' or 'inline', got ${JSON.stringify(spec)}`)
  const s = spec as Record<string, unknown>
  if ('inline' in s) return s.inline
  if ('path' in s) {
    if (typeof s.path !== 'string') throw new Error(`path: expected a string, got ${JSON.stringify(s.path)}`)
    const { content } = (await fileRead.run({ path: s.path, encoding: 'utf8', max_bytes: MAX_FILE_BYTES }, ctx)) as { content: string }
    if (/\.ya?ml$/i.test(s.path)) {
      const doc = parseDocument(content, { prettyErrors: false, logLevel: 'error' })
      if (doc.errors.length) throw new Error(`${s.path}: ${doc.errors[0]!.message.split('\n')[0]}`)
      return doc.toJS({ maxAliasCount: 100 })
    }
    return parseJson(content, s.path)
  }
  if ('uses' in s)
    throw new Error(
      `uses: ${JSON.stringify(s.uses)} is a Git reference or remote URI, which tea does not fetch schemas from; copy the schema into the workspace and give path:, or give it inline:`,
    )
  throw new Error(`Invalid schema spec: must have 'path', 'uses', or 'inline' key. Got: ${JSON.stringify(Object.keys(s))}`)
}
