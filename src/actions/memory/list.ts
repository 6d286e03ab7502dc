import * as v from 'valibot'
import { defineAction } from '../types.ts'
import { namespaceParam } from './params.ts'

const params = v.object({
  namespace: namespaceParam,
  prefix: v.optional(v.pipe(v.string(), v.description('Only keys starting with this.')), ''),
})

export const memoryList = defineAction({
  name: 'memory.list',
  description: 'Lists the live keys of a memory namespace, sorted, optionally by prefix; returns {keys}.',
  params,
  async run(p, ctx) {
    return { keys: await ctx.store.memoryList(p.namespace, p.prefix) }
  },
})
