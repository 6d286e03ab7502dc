/**
 * Detecting and validating an AOF/1 message (reference `parseProtocolMessage`, research/aof.md §3.3), in this
 * order:
 *   1. anything over 10 MiB → rejected `payload_too_large` (before any parsing);
 *   2. an object: itself when it has a `protocol` key (the reference wrongly looked inside a bare envelope's own
 *      `payload`), else its `payload` / `message` / `content` member, the way chat events wrap messages; an object
 *      whose `protocol` is not `"aof"` (another protocol's message) is ignored, as the reference ignores it;
 *   3. a string starting `AOF/1 ` → the rest must be a JSON envelope (`invalid_json` / `invalid_envelope`);
 *   4. a string starting `{` or `[` → JSON that must be an envelope: broken JSON is `invalid_json`, and any other
 *      JSON (an object without `protocol`, an array) is `invalid_envelope`, logged as the reference logs it;
 *   5. anything else (plain text, numbers…) → ignored, silently.
 * Validation reports every issue with its dot-path. An envelope whose `type` we do not know is returned as such, so
 * the router can report it as `unknown`.
 */

import { JSON_MAX_DEPTH, jsonDepth } from '../../core/json.ts'
import * as v from 'valibot'
import { isPlainObject } from '../../core/util.ts'
import {
  EnvelopeBase,
  MAX_ENVELOPE_BYTES,
  PAYLOAD_SCHEMAS,
  type ProtocolEnvelope,
  type UnknownEnvelope,
  isMessageType,
} from './schemas/envelope.ts'
import { type SchemaIssue, issuesOf } from './schemas/common.ts'

export type MessageSource = 'object' | 'aof-prefix' | 'json'

export type ParsedMessage =
  | { kind: 'envelope'; envelope: ProtocolEnvelope | UnknownEnvelope; source: MessageSource }
  | { kind: 'ignored' }
  | {
      kind: 'rejected'
      reason: 'payload_too_large' | 'invalid_json' | 'invalid_envelope'
      source?: MessageSource
      error?: string
      issues?: SchemaIssue[]
    }

export function parseProtocolMessage(input: unknown): ParsedMessage {
  return parseAt(input, 0)
}

function parseAt(input: unknown, depth: number): ParsedMessage {
  if (typeof input === 'string') return parseString(input)
  if (!isPlainObject(input)) return { kind: 'ignored' }
  if ('protocol' in input) {
    if (input.protocol !== 'aof') return { kind: 'ignored' }
    if (approxSize(input) > MAX_ENVELOPE_BYTES) return { kind: 'rejected', reason: 'payload_too_large', source: 'object' }
    return validateEnvelope(input, 'object')
  }
  if (depth > 0) return { kind: 'ignored' }
  for (const key of ['payload', 'message', 'content'] as const) {
    if (input[key] !== undefined) return parseAt(input[key], depth + 1)
  }
  return { kind: 'ignored' }
}

function parseString(raw: string): ParsedMessage {
  if (raw.length > MAX_ENVELOPE_BYTES || Buffer.byteLength(raw, 'utf8') > MAX_ENVELOPE_BYTES) {
    return { kind: 'rejected', reason: 'payload_too_large', error: `the message is larger than ${MAX_ENVELOPE_BYTES} bytes` }
  }
  const text = raw.trim()
  const prefixed = text.startsWith('AOF/1 ')
  if (!prefixed && !text.startsWith('{') && !text.startsWith('[')) return { kind: 'ignored' }
  const source: MessageSource = prefixed ? 'aof-prefix' : 'json'
  let value: unknown
  const json = prefixed ? text.slice(6) : text
  // Parsed, it would be walked (validated, logged, written) by code that recurses: too deep is not JSON we read.
  if (jsonDepth(json, JSON_MAX_DEPTH) > JSON_MAX_DEPTH) {
    return { kind: 'rejected', reason: 'invalid_json', source, error: `the message nests deeper than ${JSON_MAX_DEPTH} levels` }
  }
  try {
    value = JSON.parse(json)
  } catch (e) {
    return { kind: 'rejected', reason: 'invalid_json', source, error: (e as Error).message }
  }
  if (!isPlainObject(value)) {
    const found = Array.isArray(value) ? 'an array' : `${value === null ? 'null' : typeof value}`
    const message = `expected an AOF/1 envelope (a JSON object with protocol "aof"), found ${found}`
    return { kind: 'rejected', reason: 'invalid_envelope', source, issues: [{ path: '(root)', message }] }
  }
  return validateEnvelope(value, source)
}

function validateEnvelope(raw: Record<string, unknown>, source: MessageSource): ParsedMessage {
  // The reference accepts `project_id` as an alias of `projectId`.
  const input = raw.projectId === undefined && raw.project_id !== undefined ? { ...raw, projectId: raw.project_id } : raw
  const base = v.safeParse(EnvelopeBase, input)
  const issues = base.success ? [] : issuesOf(base.issues)
  const type = isPlainObject(input) && typeof input.type === 'string' ? input.type : undefined
  let payload: unknown
  if (type !== undefined && isMessageType(type) && input.payload !== undefined) {
    const p = v.safeParse(PAYLOAD_SCHEMAS[type], input.payload)
    if (p.success) payload = p.output
    else issues.push(...issuesOf(p.issues).map((i) => ({ ...i, path: i.path === '(root)' ? 'payload' : `payload.${i.path}` })))
  }
  if (!base.success || issues.length > 0) return { kind: 'rejected', reason: 'invalid_envelope', source, issues }
  if (!isMessageType(base.output.type)) {
    return { kind: 'envelope', source, envelope: { ...base.output, unknownType: true } as UnknownEnvelope }
  }
  return { kind: 'envelope', source, envelope: { ...base.output, payload } as ProtocolEnvelope }
}

function approxSize(value: unknown): number {
  try {
    return JSON.stringify(value)?.length ?? 0
  } catch {
    return Number.POSITIVE_INFINITY
  }
}
