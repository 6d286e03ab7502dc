import * as v from 'valibot'
import { defineAction, type Action } from '../types.ts'
import { jsonSchemaOf } from '../json-schema.ts'

const params = v.object({
  names: v.optional(v.pipe(v.array(v.string()), v.description('Only these actions (default: all)'))),
  format: v.optional(v.pipe(v.picklist(['simple', 'openai']), v.description("'openai' gives the function-calling tool shape"))),
})

/** Lists actions as tools a model can be offered: name, description and the JSON Schema of the parameters. */
export const toolsList = defineAction({
  name: 'tools.list',
  description: 'List the registered actions as tools: name, description and JSON Schema of their parameters.',
  params,
  run({ names, format = 'simple' }, ctx) {
    const wanted = names ? new Set(names) : undefined
    const tools = ctx
      .listActions()
      .filter((a) => !wanted || wanted.has(a.name))
      .map((a) => ({ name: a.name, description: a.description, parameters: jsonSchemaOf(a.params) }))
    if (format === 'openai') return { tools: tools.map((t) => ({ type: 'function', function: t })) }
    return { tools }
  },
})

export const toolsActions: Action[] = [toolsList]
