/**
 * llm.tools's tool definitions as TEA writes them (llm_actions.py): `{name, description, parameters: {p: {type,
 * description, enum, required}}, action}`, or OpenAI's own `{type: function, function: {name, description,
 * parameters}}` with an optional `action`. Each becomes the `tools` entry tea's model clients send; `action` names
 * the tea action a call of that tool runs.
 */

import * as v from 'valibot'
import type { ToolDefinition } from '../../llm/types.ts'

/** A function name both APIs accept. */
const NAME = /^[A-Za-z0-9_-]{1,64}$/

const paramSpec = v.union([
  v.looseObject({
    type: v.optional(v.string()),
    description: v.optional(v.string()),
    enum: v.optional(v.array(v.unknown())),
    required: v.optional(v.boolean()),
  }),
  v.string(),
])

const teaTool = v.object({
  name: v.pipe(v.string(), v.regex(NAME, 'a tool name is 1–64 letters, digits, _ or -')),
  description: v.optional(v.string(), ''),
  parameters: v.optional(v.record(v.string(), paramSpec), {}),
  action: v.optional(v.string()),
})

const openAiTool = v.object({
  type: v.optional(v.literal('function')),
  function: v.object({
    name: v.pipe(v.string(), v.regex(NAME, 'a tool name is 1–64 letters, digits, _ or -')),
    description: v.optional(v.string(), ''),
    parameters: v.optional(v.record(v.string(), v.unknown()), { type: 'object', properties: {} }),
  }),
  action: v.optional(v.string()),
})

const toolDef = v.union([openAiTool, teaTool])

export type ToolDef = v.InferOutput<typeof toolDef>

export function toolName(t: ToolDef): string {
  return 'function' in t ? t.function.name : t.name
}

export const toolDefs = v.pipe(
  v.array(toolDef),
  v.maxLength(64),
  v.check((tools) => new Set(tools.map(toolName)).size === tools.length, 'two tools have the same name'),
  v.description(
    "The tools: {name, description, parameters: {param: {type, description, enum, required}}, action: the tea action a call runs}, or OpenAI's {type: function, function: {...}, action}.",
  ),
)

/** The tool as the model servers take it (TEA's convert_tool_to_openai_format). */
export function toolDefinition(t: ToolDef): ToolDefinition {
  if ('function' in t) return { type: 'function', function: { ...t.function } }
  const properties: Record<string, unknown> = {}
  const required: string[] = []
  for (const [name, spec] of Object.entries(t.parameters)) {
    if (typeof spec === 'string') {
      properties[name] = { type: spec }
      continue
    }
    properties[name] = { type: spec.type ?? 'string', description: spec.description ?? '', ...(spec.enum && { enum: spec.enum }) }
    if (spec.required) required.push(name)
  }
  return { type: 'function', function: { name: t.name, description: t.description, parameters: { type: 'object', properties, required } } }
}
