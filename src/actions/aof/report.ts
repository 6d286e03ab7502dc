import * as v from 'valibot'
import { defineAction } from '../types.ts'
import { commonParams, resolveCommon, sendMessage } from './send.ts'

const params = v.object({
  ...commonParams,
  outcome: v.pipe(v.picklist(['done', 'blocked', 'needs_review', 'partial']), v.description('How the run ended.')),
  summaryRef: v.optional(
    v.pipe(v.string(), v.maxLength(256), v.description('Summary file, relative to the task folder.')),
    'outputs/summary.md',
  ),
  deliverables: v.optional(v.array(v.string()), []),
  tests: v.optional(v.object({ total: v.number(), passed: v.number(), failed: v.number() }), { total: 0, passed: 0, failed: 0 }),
  blockers: v.optional(v.array(v.string()), []),
  notes: v.optional(v.string(), ''),
})

/** `aof.report`: sends a `completion.report`; the result `{aof: {outcome, reason?, transitions?}}` says what happened. */
export const aofReport = defineAction({
  name: 'aof.report',
  description: 'Reports a task outcome (done, blocked, needs_review, partial) as an AOF/1 completion.report; returns {aof: outcome}.',
  params,
  run(p, ctx) {
    const r = resolveCommon('aof.report', p, ctx)
    return sendMessage('aof.report', ctx, p, r, 'completion.report', {
      outcome: p.outcome,
      summaryRef: p.summaryRef,
      deliverables: p.deliverables,
      tests: p.tests,
      blockers: p.blockers,
      notes: p.notes,
    })
  },
})
