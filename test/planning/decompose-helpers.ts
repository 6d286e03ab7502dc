import * as v from 'valibot'
import { decompose, decomposeParams } from '../../src/planning/decompose.ts'
import type { Plan } from '../../src/planning/types.ts'
import { planningContext, scriptedLlm } from './helpers.ts'

export async function runDecompose(params: Record<string, unknown>, replies: string[]): Promise<{ plan: Plan }> {
  const ctx = planningContext(scriptedLlm(replies))
  try {
    const out = await decompose(v.parse(decomposeParams, params), ctx)
    return { plan: out.plan as Plan }
  } finally {
    ctx.cleanup()
  }
}
