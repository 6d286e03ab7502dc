/**
 * What the three `aof.*` actions share: common parameters, and sending one AOF/1 message through the router
 * against the run's task store: `ctx.aof` when the run has one (`tea run --nats`, a worker on NATS), else the
 * run's data dir. The task id and the sending agent may come from the state a `tea worker` seeds
 * (`task.id`, `agent_id`) so agents need not repeat them; an explicit parameter wins.
 */

import * as v from 'valibot'
import { TeaError } from '../../core/errors.ts'
import { isPlainObject } from '../../core/util.ts'
import { type RouteOutcome, aofContext, isTaskId, routeMessage } from '../../aof/index.ts'
import type { ActionContext } from '../types.ts'

export const commonParams = {
  taskId: v.optional(v.pipe(v.string(), v.description('The task the message is about (default: state.task.id, then state.taskId).'))),
  agent: v.optional(v.pipe(v.string(), v.description('The sending agent (default: state.agent_id, then variables.agent_id).'))),
  to: v.optional(v.pipe(v.string(), v.description('The receiving agent (default "orchestrator").')), 'orchestrator'),
  dataDir: v.optional(v.pipe(v.string(), v.description("The AOF data dir (default: the run's --data-dir)."))),
}

export interface CommonParams {
  taskId?: string | undefined
  agent?: string | undefined
  to: string
  dataDir?: string | undefined
}

export interface Resolved {
  taskId: string
  agent: string
}

export function resolveCommon(action: string, p: CommonParams, ctx: ActionContext): Resolved {
  const task = ctx.state.task
  const taskId = p.taskId ?? (isPlainObject(task) && typeof task.id === 'string' ? task.id : undefined) ?? str(ctx.state.taskId)
  const agent = p.agent ?? str(ctx.state.agent_id) ?? str(ctx.variables.agent_id)
  if (taskId === undefined || !isTaskId(taskId)) {
    throw new TeaError(
      'INVALID_PARAMS',
      `${action}: expected taskId to be a task id (TASK-YYYY-MM-DD-…), received ${JSON.stringify(taskId)}`,
      {
        hint: 'pass taskId, or run the agent under `tea worker`, which puts the task in state.task',
      },
    )
  }
  if (!agent)
    throw new TeaError(
      'INVALID_PARAMS',
      `${action}: expected agent (the sender), found none in params, state.agent_id or variables.agent_id`,
    )
  return { taskId, agent }
}

export async function sendMessage(
  action: string,
  ctx: ActionContext,
  p: CommonParams,
  r: Resolved,
  type: string,
  payload: Record<string, unknown>,
): Promise<{ aof: RouteOutcome }> {
  // An explicit dataDir is a folder project, whatever store the run has.
  const router = p.dataDir === undefined ? ctx.aof : undefined
  const dataDir = p.dataDir ?? ctx.dataDir
  if (!router && !dataDir) throw new TeaError('INVALID_PARAMS', `${action}: no AOF data dir: pass dataDir or run with --data-dir`)
  const envelope = {
    protocol: 'aof',
    version: 1,
    type,
    taskId: r.taskId,
    fromAgent: r.agent,
    toAgent: p.to,
    sentAt: new Date().toISOString(),
    payload,
  }
  const outcome = router ? await router.route(envelope) : await routeMessage(aofContext(dataDir!), envelope)
  ctx.emit({
    type: 'log',
    node: ctx.node,
    message: `${action} ${r.taskId}: ${outcome.outcome}${outcome.reason ? ` (${outcome.reason})` : ''}`,
  })
  return { aof: outcome }
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined
}
