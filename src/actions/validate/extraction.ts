/**
 * `validate.extraction` (TEA-YAML-004): checks entities and relationships an agent extracted, in layers, stopping
 * at the first that fails; returns `{valid, errors, warnings, validated_at}` (the shape retry.loop reads).
 *
 * 1. Structural, against `extraction_schema`: `entities: {required_fields, optional_fields, type_field}` and
 *    `relationships: {types, required_fields, optional_fields, type_requirements: {type: [fields]}}` — errors
 *    `missing_required_field`, `invalid_relationship_type`, `missing_type_specific_field`, each with its `path`.
 * 2. Prolog constraints (`validation_constraints: {rules}`, or the rules as a string): the items become facts —
 *    `entity(Name, Type[, Confidence])`, `relationship(Type, Subject, Object[, Start, End][, Confidence])`, the
 *    confidence only with `extraction_schema.confidence_tracking` — built as data through `prolog.query` (the
 *    prolog feature), never spliced into Prolog text as TEA did, so a name like `'), halt.` is a name; each
 *    solution of the user's `validation_error(Type, Context)` is a `prolog_constraint_violation`. A rule that does
 *    not read is a CODE_ERROR naming its line (TEA returned it as one more validation error, which a retry loop
 *    would then try to correct); a build without the prolog feature says so.
 * 3. Semantic probes (`semantic_probes`: `{for_each: entity|relationship, where, probe, on_fail: reject|warn}`):
 *    the probe (a template over the item's fields, `state` and `text`) is put to the model of `settings.llm` —
 *    TEA's ignored it and always asked `gemma3:4b` — and the answer read by its first word: yes / true / correct /
 *    affirmative / indeed is yes, anything else no (TEA matched substrings, so "Yes, I know" read as no). A `reject`
 *    probe that fails stops the validation; a `warn` probe goes on and lands in `warnings` (TEA counted it as an
 *    error all the same).
 * Each parameter defaults as TEA's does: the items from `state.entities` / `state.relationships` / `state.text`,
 * the configuration from the agent file's top-level sections of the same names.
 */

import * as v from 'valibot'
import { errorMessage, isTeaError, TeaError } from '../../core/errors.ts'
import { isPlainObject } from '../../core/util.ts'
import { compileCondition } from '../../template/index.ts'
import { defineAction, type ActionContext } from '../types.ts'

const schemaShape = v.object({
  entities: v.optional(
    v.object({
      required_fields: v.optional(v.array(v.string()), []),
      optional_fields: v.optional(v.array(v.string())),
      type_field: v.optional(v.string()),
    }),
  ),
  relationships: v.optional(
    v.object({
      types: v.optional(v.array(v.string())),
      required_fields: v.optional(v.array(v.string()), []),
      optional_fields: v.optional(v.array(v.string())),
      type_requirements: v.optional(v.record(v.string(), v.array(v.string())), {}),
    }),
  ),
  guide_extraction: v.optional(v.boolean()),
  confidence_tracking: v.optional(v.boolean()),
})

const probeShape = v.object({
  for_each: v.picklist(['entity', 'relationship']),
  where: v.optional(v.string()),
  probe: v.string(),
  on_fail: v.optional(v.picklist(['reject', 'warn']), 'reject'),
})

const params = v.object({
  entities: v.optional(v.pipe(v.array(v.record(v.string(), v.unknown())), v.description('Default state.entities.'))),
  relationships: v.optional(v.pipe(v.array(v.record(v.string(), v.unknown())), v.description('Default state.relationships.'))),
  source_text: v.optional(v.pipe(v.string(), v.description('The text the items came from (probes see it as text); default state.text.'))),
  schema: v.optional(v.pipe(schemaShape, v.description("Default the agent file's extraction_schema."))),
  constraints: v.optional(v.pipe(v.unknown(), v.description("Prolog rules; default the agent file's validation_constraints."))),
  probes: v.optional(v.pipe(v.array(probeShape), v.description("Default the agent file's semantic_probes."))),
  agent_name: v.optional(v.string()),
})

type Params = v.InferOutput<typeof params>
type Item = Record<string, unknown>
export interface ExtractionError {
  type: string
  message: string
  path?: string
  [k: string]: unknown
}

export const validateExtraction = defineAction({
  name: 'validate.extraction',
  description:
    'Checks extracted entities and relationships: structure against extraction_schema, Prolog constraint rules (the prolog feature), then semantic probes put to the model; returns {valid, errors, warnings, validated_at}.',
  params,
  run: (p, ctx) => validateAll(p, ctx),
  async verify(params, ctx) {
    const rules = constraintRules(params.constraints ?? ctx.settings.sections.validation_constraints, '')
    if (!rules) return []
    const prolog = ctx.action('prolog.query')
    if (!prolog)
      return ["validation_constraints: Prolog rules need the 'prolog' feature, which this build lacks (use linux-x64 or linux-arm64)"]
    // The same first line as at run time (prologViolations), so the line numbers agree.
    const found = (await prolog.verify?.({ program: `${FACT_DECLARATIONS} ${rules}` }, ctx)) ?? []
    return found.map((m) => `validation_constraints: ${m.replace(/^Prolog, /, 'rules, ')}`)
  },
})

async function validateAll(p: Params, ctx: ActionContext): Promise<Record<string, unknown>> {
  const sections = ctx.settings.sections
  const entities = p.entities ?? list(ctx.state.entities)
  const relationships = p.relationships ?? list(ctx.state.relationships)
  const schema = p.schema ?? (sections.extraction_schema ? v.parse(schemaShape, sections.extraction_schema) : undefined)
  const constraints = p.constraints ?? sections.validation_constraints
  const probes =
    p.probes ??
    (sections.semantic_probes
      ? v.parse(v.array(probeShape), (sections.semantic_probes as { probes?: unknown }).probes ?? sections.semantic_probes)
      : [])
  const done = (errors: ExtractionError[], warnings: ExtractionError[] = []) => ({
    valid: errors.length === 0,
    errors,
    warnings,
    validated_at: new Date().toISOString(),
  })

  const structural = schema ? structure(schema, entities, relationships) : []
  if (structural.length) return done(structural)
  const rules = constraintRules(constraints, ctx.node)
  if (rules) {
    const violations = await prologViolations(rules, entities, relationships, schema?.confidence_tracking === true, ctx)
    if (violations.length) return done(violations)
  }
  const warnings: ExtractionError[] = []
  const text = p.source_text ?? (typeof ctx.state.text === 'string' ? ctx.state.text : '')
  for (const probe of probes) {
    for (const [i, item] of (probe.for_each === 'entity' ? entities : relationships).entries()) {
      if (probe.where && !matches(probe.where, item, ctx)) continue
      const failure = await ask(probe, item, i, text, ctx)
      if (!failure) continue
      if (probe.on_fail === 'warn') warnings.push(failure)
      else return done([failure], warnings)
    }
  }
  return done([], warnings)
}

/** The Prolog rules of `validation_constraints` (`{language: prolog, rules}` or the rules themselves), or none. */
export function constraintRules(constraints: unknown, node: string): string | undefined {
  if (constraints === undefined || constraints === null) return undefined
  if (typeof constraints === 'string') return constraints.trim() ? constraints : undefined
  if (!isPlainObject(constraints))
    throw new TeaError('INVALID_PARAMS', 'validation_constraints must be {rules: <Prolog>} or the rules as text', { where: { node } })
  const language = constraints.language ?? 'prolog'
  if (language !== 'prolog') {
    throw new TeaError('INVALID_PARAMS', `validation_constraints language must be 'prolog', got '${String(language)}'`, { where: { node } })
  }
  const rules = constraints.rules
  if (rules === undefined || rules === null) return undefined
  if (typeof rules !== 'string')
    throw new TeaError('INVALID_PARAMS', 'validation_constraints.rules must be Prolog text', { where: { node } })
  return rules.trim() ? rules : undefined
}

/** The arities the facts come in: declared so that a rule naming one no item has fails instead of raising. */
const FACT_DECLARATIONS =
  ':- dynamic(entity/2), dynamic(entity/3), dynamic(relationship/3), dynamic(relationship/4), dynamic(relationship/5), dynamic(relationship/6).'

async function prologViolations(
  rules: string,
  entities: Item[],
  relationships: Item[],
  confidence: boolean,
  ctx: ActionContext,
): Promise<ExtractionError[]> {
  const facts = [...entities.map((e) => entityFact(e, confidence)), ...relationships.map((r) => relationshipFact(r, confidence))]
  let found: { solutions: Array<{ Type: unknown; Context: unknown }> }
  try {
    found = (await ctx.invoke('prolog.query', {
      // The declarations share the first line with the rules' first line, so a reported line is the rules' own.
      program: `${FACT_DECLARATIONS} ${rules}`,
      facts,
      query: 'validation_error(Type, Context)',
    })) as typeof found
  } catch (e) {
    if (isTeaError(e, 'CODE_ERROR')) {
      throw new TeaError('CODE_ERROR', `validation_constraints: ${e.message.replace(/^Prolog program, /, 'rules, ')}`, {
        where: { node: ctx.node, field: 'validation_constraints' },
        cause: e,
      })
    }
    throw e
  }
  return found.solutions.map(({ Type, Context }) => ({
    type: 'prolog_constraint_violation',
    error_type: Type,
    context: Context,
    message: `Constraint violation: ${String(Type)}(${typeof Context === 'string' ? Context : JSON.stringify(Context)})`,
  }))
}

const text = (v: unknown): string => (v === undefined || v === null ? 'unknown' : String(v))
const score = (v: unknown): number | undefined => (v === undefined || v === null || !Number.isFinite(Number(v)) ? undefined : Number(v))

function entityFact(e: Item, confidence: boolean): unknown[] {
  const conf = confidence ? score(e.confidence) : undefined
  return ['entity', text(e.name), text(e.type), ...(conf === undefined ? [] : [conf])]
}

function relationshipFact(r: Item, confidence: boolean): unknown[] {
  const conf = confidence ? score(r.confidence) : undefined
  const dated = r.start_date !== undefined && r.start_date !== null && r.end_date !== undefined && r.end_date !== null
  return [
    'relationship',
    text(r.type),
    text(r.subject),
    text(r.object),
    ...(dated ? [String(r.start_date), String(r.end_date)] : []),
    ...(conf === undefined ? [] : [conf]),
  ]
}

export function structure(schema: v.InferOutput<typeof schemaShape>, entities: Item[], relationships: Item[]): ExtractionError[] {
  const errors: ExtractionError[] = []
  const missing = (o: Item, f: string): boolean => o[f] === undefined || o[f] === null
  entities.forEach((e, i) => {
    for (const f of schema.entities?.required_fields ?? []) {
      if (missing(e, f))
        errors.push({
          type: 'missing_required_field',
          path: `entities[${i}].${f}`,
          expected: f,
          message: `Entity missing required field '${f}'`,
        })
    }
  })
  const rel = schema.relationships
  relationships.forEach((r, i) => {
    for (const f of rel?.required_fields ?? []) {
      if (missing(r, f))
        errors.push({
          type: 'missing_required_field',
          path: `relationships[${i}].${f}`,
          expected: f,
          message: `Relationship missing required field '${f}'`,
        })
    }
    const type = r.type
    if (rel?.types?.length && !rel.types.includes(String(type))) {
      errors.push({
        type: 'invalid_relationship_type',
        path: `relationships[${i}].type`,
        expected: rel.types,
        actual: type ?? null,
        message: `Invalid relationship type '${String(type)}', expected one of ${rel.types.join(', ')}`,
      })
    }
    for (const f of typeof type === 'string' ? (rel?.type_requirements?.[type] ?? []) : []) {
      if (missing(r, f))
        errors.push({
          type: 'missing_type_specific_field',
          path: `relationships[${i}].${f}`,
          expected: f,
          message: `Relationship type '${type}' requires field '${f}'`,
        })
    }
  })
  return errors
}

/** `where` over the item's fields (`type == 'mother'`); a field the item lacks makes it false. */
function matches(where: string, item: Item, ctx: ActionContext): boolean {
  const scope: Record<string, unknown> = { ...item, item, state: ctx.state }
  try {
    return compileCondition(where, { node: ctx.node, field: 'probes.where' })(scope)
  } catch (e) {
    if (/is undefined/.test(errorMessage(e))) return false
    throw e
  }
}

async function ask(
  probe: v.InferOutput<typeof probeShape>,
  item: Item,
  index: number,
  text: string,
  ctx: ActionContext,
): Promise<ExtractionError | undefined> {
  const path = `${probe.for_each === 'entity' ? 'entities' : 'relationships'}[${index}]`
  const question = String(ctx.render(probe.probe, { ...item, item, text }, 'probes.probe'))
  const reply = await ctx.llm.call({
    messages: [
      { role: 'system', content: "You are a fact-checker. Answer with ONLY 'yes' or 'no'." },
      { role: 'user', content: question },
    ],
    max_tokens: 10,
    signal: ctx.signal,
  })
  if (answersYes(reply.content)) return undefined
  return { type: 'semantic_probe_failed', path, question, response: reply.content, message: `the model did not confirm: ${question}` }
}

/** Yes only when the reply's first word says so (`Yes.`, `TRUE`, `Correct, …`); empty, prose or "no" is no. */
export function answersYes(reply: string): boolean {
  const first = /[a-z]+/.exec(reply.trim().toLowerCase())?.[0]
  return first !== undefined && ['yes', 'true', 'correct', 'affirmative', 'indeed'].includes(first)
}

/**
 * The extraction prompt a schema implies (TEA's `validate.generate_prompt`, and `variables.extraction_prompt` when
 * `guide_extraction: true`): the ontology — entity fields, relationship types and fields, type-specific fields —
 * the `%` comments of Prolog rules as constraints to satisfy, and, when asked, confidence scores.
 */
export function extractionPrompt(schema: v.InferOutput<typeof schemaShape>, constraints?: string, confidence = false): string {
  const lines = ['You are extracting entities and relationships from text.', '', 'ONTOLOGY:']
  const fields = (required: string[] = [], optional: string[] = []) => [
    ...required.map((f) => `${f} (required)`),
    ...optional.map((f) => `${f} (optional)`),
  ]
  const entityFields = fields(schema.entities?.required_fields, schema.entities?.optional_fields)
  if (entityFields.length) lines.push(`- Entities must have: ${entityFields.join(', ')}`)
  const rel = schema.relationships
  if (rel?.types?.length) lines.push(`- Valid relationship types: ${rel.types.join(', ')}`)
  const relFields = fields(rel?.required_fields)
  if (relFields.length) lines.push(`- Relationships must have: ${relFields.join(', ')}`)
  for (const [type, needed] of Object.entries(rel?.type_requirements ?? {}))
    lines.push(`- ${type} relationships require: ${needed.join(', ')}`)
  const described = (constraints ?? '')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('%'))
    .map((l) => l.replace(/^%+\s*/, ''))
    .filter(Boolean)
  if (described.length) lines.push('', 'CONSTRAINTS TO SATISFY:', ...described.map((d) => `- ${d}`))
  if (confidence || schema.confidence_tracking)
    lines.push('', "Include confidence scores (0.0-1.0) for each extraction: a 'confidence' field on each entity and relationship.")
  lines.push('', 'Extract according to this schema.')
  return lines.join('\n')
}

/** `validate.generate_prompt`: the extraction prompt for a schema (default the file's `extraction_schema`). */
export const generatePrompt = defineAction({
  name: 'validate.generate_prompt',
  description: 'Builds an extraction prompt from extraction_schema (and the % comments of Prolog rules); returns {extraction_prompt}.',
  params: v.object({
    schema: v.optional(v.pipe(schemaShape, v.description("Default the agent file's extraction_schema."))),
    constraints: v.optional(
      v.pipe(
        v.union([v.string(), v.object({ rules: v.optional(v.string()) })]),
        v.description('Prolog rules whose % comments describe constraints.'),
      ),
    ),
    confidence_tracking: v.optional(v.boolean(), false),
  }),
  run(p, ctx) {
    const raw = p.schema ?? ctx.settings.sections.extraction_schema
    if (!raw) return { extraction_prompt: '' }
    const rules = typeof p.constraints === 'string' ? p.constraints : p.constraints?.rules
    return { extraction_prompt: extractionPrompt(v.parse(schemaShape, raw), rules, p.confidence_tracking) }
  },
})

/** The schema shape, for the loader's `guide_extraction`. */
export function parseExtractionSchema(raw: unknown): v.InferOutput<typeof schemaShape> | undefined {
  const r = v.safeParse(schemaShape, raw)
  return r.success ? r.output : undefined
}

function list(v: unknown): Item[] {
  return Array.isArray(v) ? (v.filter((x) => isPlainObject(x)) as Item[]) : []
}
