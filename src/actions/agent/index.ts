import type { Action } from '../types.ts'
import { agentCoordinate } from './coordinate.ts'
import { agentCrewaiDelegate } from './crewai-delegate.ts'
import { agentDispatch } from './dispatch.ts'
import { agentParallel } from './parallel.ts'
import { agentSequential } from './sequential.ts'

/**
 * TEA's multi-agent actions over `settings.agents`: each sub-agent is a model call through the run's model client,
 * and the calls of a node that have answered are kept until the node ends (journal.ts), so a resumed run does not
 * make them again.
 */
export const agentActions: Action[] = [agentDispatch, agentParallel, agentSequential, agentCoordinate, agentCrewaiDelegate]
