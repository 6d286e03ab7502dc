import * as v from 'valibot'
import { defineAction } from '../types.ts'
import { keyParam, namespaceParam } from './params.ts'

const params = v.object({ key: keyParam, namespace: namespaceParam })

export const memoryDelete = defineAction({
  name: 'memory.delete',
  description: 'Deletes a key from memory; returns {deleted} (false when it did not exist).',
  params,
  async run(p, ctx) {
    return { deleted: await ctx.store.memoryDelete(p.namespace, p.key) }
  },
})
