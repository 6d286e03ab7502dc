/**
 * What `tea worker` hands an agent: the task as initial state, and the id of the agent run that works on it.
 *
 * The state is `{task: {id, title, body, inputs, metadata}, agent_id}`, merged over the agent's `initial_state`
 * (so an agent can give defaults for keys the task does not set, but never shadows the task). `inputs` is the
 * parsed `inputs/handoff.json` a `handoff.request` left in the task folder, or `{}` when there is none (or it is
 * unreadable: a broken handoff file must not stop the work; `tea aof lint` is where it gets reported).
 *
 * The agent run id is `aof-<TASK-ID>-<AOF run id>`. The AOF run id is minted when a lease starts a new run and
 * kept while the same run continues, so a worker restarted on its own in-progress task finds the checkpoint of that
 * run and resumes it, while a task the scheduler reclaimed (and someone leased again: a new AOF run) starts fresh.
 */

import type { State } from '../../core/util.ts'
import { type Task, taskMetadata, taskTitle } from '../protocol/task-file.ts'

export interface WorkerTaskState {
  id: string
  title: string
  body: string
  /** `inputs/handoff.json`, or `{}`. */
  inputs: Record<string, unknown>
  metadata: Record<string, unknown>
}

/** The keys a worker sets in the agent's initial state; `inputs` from the store's `handoffInputs`. */
export function workerTaskState(task: Task, agentId: string, inputs: Record<string, unknown>): State {
  const state: WorkerTaskState = {
    id: task.id,
    title: taskTitle(task),
    body: task.body.trim(),
    inputs,
    metadata: taskMetadata(task),
  }
  return { task: state, agent_id: agentId }
}

/** The agent's initial state with the task over it. */
export function workerInitialState(initialState: State, taskState: State): State {
  return { ...initialState, ...taskState }
}

export function workerRunId(taskId: string, aofRunId: string): string {
  return `aof-${taskId}-${aofRunId}`
}
