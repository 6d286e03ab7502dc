import * as v from 'valibot'
import { defineAction } from '../types.ts'
import { agentCoordinate } from './coordinate.ts'
import { verifyNames } from './agents.ts'
import { agentNames } from './params.ts'
import { agentSequential } from './sequential.ts'

/**
 * TEA's `agent.crewai_delegate` as TEA runs it without CrewAI (a Python library tea does not have): its native
 * path, `process: sequential` as agent.sequential over the agents, `hierarchical` as agent.coordinate with the first
 * agent leading the others. `backend: crewai` falls back to that too unless `fallback_to_native: false`, when
 * the result is TEA's failure for a missing CrewAI.
 */
export const agentCrewaiDelegate = defineAction({
  name: 'agent.crewai_delegate',
  description:
    "TEA's agent.crewai_delegate on TEA's native path (no CrewAI): process sequential runs agent.sequential, hierarchical runs agent.coordinate with the first agent leading.",
  params: v.object({
    agents: agentNames,
    task: v.pipe(v.string(), v.maxLength(1_000_000), v.description('The task, a template over the state.')),
    process: v.optional(
      v.pipe(v.picklist(['sequential', 'hierarchical']), v.description('sequential (default) or hierarchical.')),
      'sequential',
    ),
    backend: v.optional(v.pipe(v.picklist(['native', 'crewai']), v.description('native (default); crewai is not in tea.')), 'native'),
    fallback_to_native: v.optional(v.boolean(), true),
    verbose: v.optional(v.boolean()),
  }),
  // Rendered once, by the action it becomes (agent.sequential renders per agent).
  raw: ['task'],
  verify: verifyNames(['agents']),
  async run(p, ctx) {
    if (p.backend === 'crewai') {
      if (!p.fallback_to_native)
        return { error: 'CrewAI not installed. Install with: pip install crewai', backend_used: 'none', success: false }
      ctx.emit({
        type: 'log',
        node: ctx.node,
        message: 'agent.crewai_delegate: CrewAI is a Python library tea does not have; running the native path, as TEA does without it',
      })
    }
    if (p.process === 'hierarchical') {
      if (p.agents.length < 2) return { error: 'Hierarchical process requires at least 2 agents (leader + workers)', success: false }
      const task = String(ctx.render(p.task, undefined, 'task'))
      const [leader, ...workers] = p.agents
      return agentCoordinate.run(v.parse(agentCoordinate.params, { leader, workers, task }), ctx)
    }
    return agentSequential.run(v.parse(agentSequential.params, { agents: p.agents, task: p.task }), ctx)
  },
})
