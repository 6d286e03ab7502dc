import * as v from 'valibot'
import { defineAction, type Action } from '../types.ts'
import { jsonSchemaOf } from '../json-schema.ts'
import { toolsMcp } from './mcp/action.ts'
import { isMcpToolName, mcpTools } from './mcp/named-tools.ts'

const params = v.object({
  names: v.optional(v.pipe(v.array(v.string()), v.description('Only these actions (default: all)'))),
  format: v.optional(v.pipe(v.picklist(['simple', 'openai']), v.description("'openai' gives the function-calling tool shape"))),
})

/**
 * Lists actions as tools a model can be offered: name, description and the JSON Schema of the parameters; with
 * `settings.mcp`, its servers' tools too (`mcp.<server>.<tool>`, their own input schemas), which starts them.
 */
export const toolsList = defineAction({
  name: 'tools.list',
  description:
    "List the registered actions, and the tools of the agent's MCP servers, as tools: name, description and JSON Schema of their parameters.",
  params,
  async run({ names, format = 'simple' }, ctx) {
    const wanted = names ? new Set(names) : undefined
    const tools = ctx
      .listActions()
      .filter((a) => !wanted || wanted.has(a.name))
      .map((a) => ({ name: a.name, description: a.description, parameters: jsonSchemaOf(a.params) }))
    const mcpNames = names?.filter(isMcpToolName)
    if (ctx.settings.sections.mcp && (!names || mcpNames?.length))
      for (const t of await mcpTools(ctx.settings, mcpNames, ctx.signal))
        tools.push({ name: t.name, description: t.description, parameters: t.parameters })
    if (format === 'openai') return { tools: tools.map((t) => ({ type: 'function', function: t })) }
    return { tools }
  },
})

export const toolsActions: Action[] = [toolsList, toolsMcp]
