import * as v from 'valibot'
import { defineAction } from '../types.ts'
import { keyParam, namespaceParam } from './params.ts'

const params = v.object({
  key: keyParam,
  value: v.pipe(
    v.unknown(),
    v.check((x) => x !== undefined, 'value is required'),
    v.description('Any JSON value to store.'),
  ),
  namespace: namespaceParam,
  ttl: v.optional(v.pipe(v.number(), v.gtValue(0, 'ttl must be more than 0 seconds'), v.description('Seconds until the entry expires.'))),
})

export const memoryStore = defineAction({
  name: 'memory.store',
  description: 'Stores a value under a key in the run-independent memory (kept across restarts); returns {stored, key}.',
  params,
  async run(p, ctx) {
    await ctx.store.memoryPut(p.namespace, p.key, p.value, p.ttl === undefined ? undefined : p.ttl * 1000)
    return { stored: true, key: p.key }
  },
})
