import * as v from 'valibot'
import { defineAction } from '../types.ts'
import { keyParam, namespaceParam } from './params.ts'

const params = v.object({
  key: keyParam,
  namespace: namespaceParam,
  default: v.optional(v.pipe(v.unknown(), v.description('The value to return when the key is absent or expired.'))),
})

export const memoryGet = defineAction({
  name: 'memory.get',
  description: 'Reads a value from memory; returns {value, found} (value is `default`, or null, when not found).',
  params,
  async run(p, ctx) {
    const got = await ctx.store.memoryGet(p.namespace, p.key)
    return got.found ? { value: got.value, found: true } : { value: p.default ?? null, found: false }
  },
})

/** TEA's `memory.retrieve`: memory.get with TEA's result shape, `{value, found, key}`. */
export const memoryRetrieve = defineAction({
  name: 'memory.retrieve',
  description: "TEA's name for memory.get: returns {value, found, key} (value is `default`, or null, when not found).",
  params,
  async run(p, ctx) {
    return { ...(await memoryGet.run(p, ctx)), key: p.key }
  },
})
