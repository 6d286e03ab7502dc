import * as v from 'valibot'
import { MAX_AGENTS } from '../tea-sections.ts'

const MAX_TASK = 1_000_000

export const agentName = v.pipe(v.string(), v.minLength(1, 'must name an agent'), v.description('An agent of settings.agents.'))

export const agentNames = v.pipe(
  v.array(agentName),
  v.minLength(1, 'must name at least one agent'),
  v.maxLength(MAX_AGENTS, `must name at most ${MAX_AGENTS} agents`),
  v.description('Agents of settings.agents.'),
)

/** A task as the agent receives it: a template the engine has rendered, or text. */
export const taskText = v.pipe(
  v.unknown(),
  v.check((x) => x !== undefined && x !== null, 'task is required'),
  // A template that is one expression gives its value as it is: an object goes to the model as JSON.
  v.transform((x) => (typeof x === 'string' ? x : (JSON.stringify(x) ?? String(x)))),
  v.maxLength(MAX_TASK, `must be at most ${MAX_TASK} characters`),
  v.description('The task, a template over the state.'),
)

/** A call's time limit in seconds, instead of the agent's own `timeout`. */
export const timeoutSeconds = (description: string) =>
  v.optional(v.pipe(v.number(), v.gtValue(0, 'must be > 0'), v.maxValue(3600, 'must be ≤ 3600'), v.description(description)))
