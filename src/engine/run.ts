/**
 * The run loop: prepare → run node → apply update → checkpoint → route, one small function each. A node counts
 * as done only once its checkpoint has committed, so after a crash the node that was in flight runs again and
 * every recorded node is never re-executed (SPEC §3.6).
 */

import { errorMessage, isTeaError, TeaError } from '../core/errors.ts'
import { isControlSignal } from '../core/signals.ts'
import type { State } from '../core/util.ts'
import { END } from '../agent/types.ts'
import type { Cursor, RunStatus } from '../store/types.ts'
import { Checkpointer } from './checkpointer.ts'
import { FAN_OUT, type CompiledNode } from './compile.ts'
import { executeNode, type NodeOutcome } from './execute.ts'
import type { Runtime } from './runtime.ts'

/** A node this slow waits for its own checkpoint before the next node starts (see checkpointer.ts). */
const SLOW_NODE_MS = 2

export interface RunStart {
  state: State
  cursor: Cursor
  step: number
  resumed: boolean
  /** The run's record (status running) and its first snapshot were written when it was created (createRun). */
  recorded?: boolean
}

export interface RunOutcome {
  status: Exclude<RunStatus, 'running'>
  state: State
  step: number
  /** The node the run stopped at (interrupt, failure, cancel). */
  node?: string
  interrupt?: 'before' | 'after'
  error?: TeaError
}

/**
 * Runs from `start` to an outcome. A failure of the store itself (a full disk, a damaged file) ends the run
 * `failed` with that error like any node failure, recorded when the store can still take the write, so no run is
 * left marked `running` by a process that has finished with it.
 */
export async function runAgent(rt: Runtime, start: RunStart): Promise<RunOutcome> {
  const at: Position = { state: start.state, step: start.step, node: undefined }
  try {
    return await runLoop(rt, start, at)
  } catch (e) {
    if (isControlSignal(e)) throw e
    const error = isTeaError(e) ? e : new TeaError('INTERNAL', `run ${rt.runId}: ${String(e)}`, { cause: e })
    const record = { code: error.code, message: errorMessage(error), ...(at.node && { node: at.node }) }
    await rt.store.updateRun(rt.runId, { status: 'failed', step: at.step, updatedAt: Date.now(), error: record }).catch(() => {})
    rt.emit({ type: 'error', ...(at.node && { node: at.node }), error: error.toJSON() })
    return { status: 'failed', state: at.state, step: at.step, ...(at.node && { node: at.node }), error }
  }
}

/** Where the run has got to, for reporting a failure that escapes the loop. */
interface Position {
  state: State
  step: number
  node: string | undefined
}

async function runLoop(rt: Runtime, start: RunStart, at: Position): Promise<RunOutcome> {
  const { spec, store, runId } = rt
  const checkpoints = new Checkpointer(store, runId, spec.settings.checkpoint_keep)
  let { state, cursor, step } = start
  let last: string | null = null
  // The step budget counts from here, so a run stopped by MAX_STEPS_EXCEEDED can be resumed for as many again.
  const limit = start.step + spec.settings.max_steps
  const progress = throttledProgress(rt)
  rt.emit({ type: 'start', runId, agent: spec.name, resumed: start.resumed })
  // A snapshot and the run record's status, written in one event turn, commit in one transaction (one fsync; on an
  // SD card each costs milliseconds): here the first snapshot (unless the run's creation wrote it with the record),
  // and in `stop` the last one (at the end or an interrupt).
  if (!start.recorded) {
    const running = store.updateRun(runId, { status: 'running', updatedAt: Date.now() })
    await Promise.all([start.resumed ? undefined : checkpoints.snapshot(step, null, state, cursor), running])
  }

  const stop = async (status: RunOutcome['status'], extra: Partial<RunOutcome> = {}, snapshot?: Cursor): Promise<RunOutcome> => {
    // Without a last snapshot (a failure, a cancel) the records in flight commit first, so their nodes are told
    // before the status; a last snapshot is queued behind them and drains them itself, so it and the status may
    // share their commit (lmdb commits in the order writes are issued: never the status before a node's record).
    if (!snapshot) await checkpoints.drain()
    // The record is a summary for `tea runs`: its message is the whole text, place included.
    const error = extra.error && { code: extra.error.code, message: errorMessage(extra.error), ...(extra.node && { node: extra.node }) }
    await Promise.all([
      snapshot && checkpoints.snapshot(step, last, state, snapshot),
      store.updateRun(runId, { status, step, node: extra.node ?? last, updatedAt: Date.now(), ...(error && { error }) }),
    ])
    return { status, state, step, ...extra }
  }

  // Stopped from outside: cancelled (resumable as it is), or failed when it was the run's own time limit.
  const halted = (node: string): Promise<RunOutcome> => {
    if (!rt.deadline?.signal.aborted) return stop('cancelled', { node })
    const error = new TeaError('RUN_TIMEOUT', `the run reached its time limit of ${rt.deadline.ms / 1000} s (config.max_execution_time)`, {
      where: { node },
      hint: `raise config.max_execution_time (ms), or resume the run: tea resume ${runId}`,
    })
    rt.emit({ type: 'error', node, error: error.toJSON() })
    return stop('failed', { node, error })
  }

  while (cursor.next !== END) {
    const name = cursor.next
    at.node = name
    if (rt.signal.aborted) return halted(name)
    const node = rt.agent.nodes.get(name)!
    if (spec.interruptBefore.has(name) && !cursor.skipInterruptBefore) {
      const stopped = await stop('interrupted', { node: name, interrupt: 'before' }, { next: name, skipInterruptBefore: true })
      rt.emit({ type: 'interrupt', node: name, when: 'before', runId })
      return stopped
    }
    let outcome
    try {
      if (step >= limit) throw maxSteps(spec.settings.max_steps, name)
      outcome = await runOne(rt, node, state, step + 1, rt.signal)
      if (outcome.next === FAN_OUT) {
        const fan = spec.parallel.get(name)!
        const results = await runBranches(rt, fan.to, fan.fanIn, { ...state, ...outcome.update }, step + 1, limit)
        outcome = { ...outcome, update: { ...outcome.update, parallel_results: results.states }, next: fan.fanIn }
        step = results.step - 1
      }
    } catch (e) {
      if (isControlSignal(e) || rt.signal.aborted) return halted(name)
      const error = isTeaError(e) ? e : new TeaError('NODE_FAILED', String(e), { cause: e, where: { node: name } })
      await checkpoints.drain() // the nodes before it finish (node_end) before the error is told
      rt.emit({ type: 'error', node: name, error: error.toJSON() })
      return stop('failed', { node: name, error })
    }
    state = { ...state, ...outcome.update }
    step++
    at.state = state
    at.step = step
    last = name
    cursor = { next: outcome.next }
    const ended = { type: 'node_end', node: name, step, ms: outcome.ms, update: outcome.update } as const
    await checkpoints.step(step, name, outcome.update, state, cursor, () => rt.emit(ended), outcome.ms >= SLOW_NODE_MS)
    progress(name, step)
    if (spec.interruptAfter.has(name) && cursor.next !== END) {
      const stopped = await stop('interrupted', { node: name, interrupt: 'after' }, cursor)
      rt.emit({ type: 'interrupt', node: name, when: 'after', runId })
      return stopped
    }
  }
  const completed = await stop('completed', {}, cursor)
  rt.emit({ type: 'complete', state })
  return completed
}

/** Runs one node as step `step`: `node_start`, the node under its on_error policy, and its duration. */
async function runOne(
  rt: Runtime,
  node: CompiledNode,
  state: State,
  step: number,
  signal: AbortSignal,
): Promise<NodeOutcome & { ms: number }> {
  rt.emit({ type: 'node_start', node: node.name, step })
  // process.hrtime, not performance.now(): the `performance` global loads ten of Node's modules on first use,
  // ~1.5 ms of every run's start (issue 14).
  const t0 = process.hrtime.bigint()
  const outcome = (await executeNode(rt, node, state, signal)) as NodeOutcome & { ms: number }
  outcome.ms = Number((process.hrtime.bigint() - t0) / 1000n) / 1000
  return outcome
}

/**
 * Parallel fan-out: each branch starts at its node with its own copy of the state and follows the normal routing
 * until it reaches the fan-in node (or the end). Branches are not checkpointed one by one; the fan-out counts as
 * done when all have finished, so a crash mid-branch re-runs the branches (at-least-once for in-flight work).
 */
async function runBranches(
  rt: Runtime,
  starts: string[],
  join: string,
  state: State,
  firstStep: number,
  limit: number,
): Promise<{ states: State[]; step: number }> {
  let step = firstStep
  const controller = new AbortController()
  const onAbort = (): void => controller.abort(rt.signal.reason)
  rt.signal.addEventListener('abort', onAbort, { once: true })
  const branch = async (start: string): Promise<State> => {
    let local = structuredClone(state)
    let next = start
    while (next !== join && next !== END) {
      if (controller.signal.aborted) throw controller.signal.reason
      if (step >= limit) throw maxSteps(rt.spec.settings.max_steps, next)
      const mine = ++step
      const outcome = await runOne(rt, rt.agent.nodes.get(next)!, local, mine, controller.signal)
      if (outcome.next === FAN_OUT) {
        throw new TeaError('AGENT_INVALID', 'a parallel fan-out inside a parallel branch is not supported', { where: { node: next } })
      }
      local = { ...local, ...outcome.update }
      rt.emit({ type: 'node_end', node: next, step: mine, ms: outcome.ms, update: outcome.update })
      next = outcome.next
    }
    return local
  }
  try {
    const states = await Promise.all(
      starts.map((s) =>
        branch(s).catch((e) => {
          controller.abort(e)
          throw e
        }),
      ),
    )
    return { states, step }
  } finally {
    rt.signal.removeEventListener('abort', onAbort)
  }
}

function maxSteps(max: number, node: string): TeaError {
  return new TeaError('MAX_STEPS_EXCEEDED', `the run reached settings.max_steps (${max})`, {
    where: { node },
    details: { max_steps: max },
    hint: 'a goto loop may never end; bound it with a goto rule on a counter, or raise settings.max_steps',
  })
}

/** Keeps the run record's node/step roughly current for `tea runs` without a write per node. */
function throttledProgress(rt: Runtime): (node: string, step: number) => void {
  let lastWrite = Date.now()
  return (node, step) => {
    const now = Date.now()
    if (now - lastWrite < 1000) return
    lastWrite = now
    void rt.store.updateRun(rt.runId, { node, step, updatedAt: now })
  }
}
