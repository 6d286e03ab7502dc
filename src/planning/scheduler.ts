/**
 * The execution loop of `plan.execute`, free of threads and storage: it decides what runs when and what a failure
 * does, and leaves the running, recording and replanning to hooks. Subtasks start as soon as their dependencies
 * have completed, in topological order, at most `concurrency` at a time. A subtask's input state is deterministic:
 * the base state plus the updates of the subtasks it depends on (transitively), applied in topological order —
 * and with `concurrency` 1 (`parallel: false`), the updates of every subtask completed before it.
 */

import { isControlSignal } from '../core/signals.ts'
import { errorMessage, isTeaError } from '../core/errors.ts'
import { topologicalOrder, transitiveDependents } from './dag.ts'
import type { FailureStrategy, Plan, Subtask } from './types.ts'

export interface SubtaskInput {
  state: Record<string, unknown>
  dependency_results: Record<string, unknown>
}

export interface SubtaskOutput {
  value: unknown
  stateUpdate?: Record<string, unknown>
  removed?: string[]
}

export interface SchedulerHooks {
  run(subtask: Subtask, input: SubtaskInput, attempt: number): Promise<SubtaskOutput>
  /** A subtask changed status; for terminal statuses the change counts once this resolves (checkpoint). */
  changed(subtask: Subtask, plan: Plan, extra?: Record<string, unknown>): Promise<void> | void
  /** Called with the plan and the failure; returns the revised plan (or throws MAX_REPLANS_EXCEEDED). */
  replan(plan: Plan, failure: { id: string; error: string }): Promise<Plan>
  sleep(ms: number): Promise<void>
}

export interface SchedulerOptions {
  concurrency: number
  onFailure: FailureStrategy
  maxRetries: number
  retryDelayMs: number
  backoffFactor: number
  onRetriesExhausted: Exclude<FailureStrategy, 'retry'>
  baseState: Record<string, unknown>
  /** Updates already recorded for completed subtasks (a resumed run). */
  recordedUpdates?: Map<string, SubtaskOutput>
}

export interface ScheduleOutcome {
  plan: Plan
  /** Per completed subtask, what its code changed in state. */
  updates: Map<string, SubtaskOutput>
  /** Set when the run stopped early: which subtask and why. */
  stopped?: { id: string; error: string; code?: string }
}

type Done =
  | { id: string; ok: true; out: SubtaskOutput; attempts: number }
  | { id: string; ok: false; error: unknown; attempts: number }
  | { id: string; signal: unknown }

export async function schedule(initial: Plan, opts: SchedulerOptions, hooks: SchedulerHooks): Promise<ScheduleOutcome> {
  let plan = initial
  let order = topologicalOrder(plan.subtasks)
  const updates = new Map<string, SubtaskOutput>(opts.recordedUpdates ?? [])
  const running = new Map<string, Promise<Done>>()
  let stopped: ScheduleOutcome['stopped']
  let replanFor: { id: string; error: string } | undefined
  let signal: unknown
  const byId = () => new Map(plan.subtasks.map((s) => [s.id, s]))
  let index = byId()
  // Records of finished subtasks commit in the background, in order, and are batched by the store; the loop waits
  // for all of them before it returns (or replans), so nothing is reported done before its record is durable.
  let recording: Array<Promise<void>> = []
  const record = (p: Promise<void> | void): void => {
    if (!p) return
    p.catch(() => {})
    recording.push(p)
  }
  const settle = async (): Promise<void> => {
    const all = recording
    recording = []
    await Promise.all(all)
  }

  const attempt = async (s: Subtask, input: SubtaskInput): Promise<Done> => {
    for (let a = 0; ; a++) {
      try {
        return { id: s.id, ok: true, out: await hooks.run(s, input, a + 1), attempts: a + 1 }
      } catch (e) {
        if (isControlSignal(e)) return { id: s.id, signal: e }
        if (opts.onFailure !== 'retry' || a >= opts.maxRetries) return { id: s.id, ok: false, error: e, attempts: a + 1 }
        record(hooks.changed(s, plan, { retrying: true, attempt: a + 1, error: errorMessage(e) }))
        await hooks.sleep(opts.retryDelayMs * opts.backoffFactor ** a)
      }
    }
  }

  const launch = (): void => {
    for (const id of order) {
      if (running.size >= opts.concurrency) return
      const s = index.get(id)!
      if (s.status !== 'pending' || running.has(id)) continue
      if (!s.dependencies.every((d) => index.get(d)?.status === 'completed')) continue
      s.status = 'in_progress'
      const input = inputFor(s)
      // Starting is announced, not recorded: an in-flight subtask has no record and simply runs again on resume.
      Promise.resolve(hooks.changed(s, plan)).catch(() => {})
      running.set(id, attempt(s, input))
    }
  }

  const inputFor = (s: Subtask): SubtaskInput => {
    const dependency_results: Record<string, unknown> = {}
    for (const d of s.dependencies) dependency_results[d] = index.get(d)!.result
    const state = { ...opts.baseState }
    if (updates.size > 0) {
      const ancestors = opts.concurrency === 1 ? undefined : ancestorsOf(s.id)
      for (const id of order) {
        const u = updates.get(id)
        if (!u || (ancestors && !ancestors.has(id))) continue
        Object.assign(state, u.stateUpdate)
        for (const k of u.removed ?? []) delete state[k]
      }
    }
    return { state, dependency_results }
  }

  const ancestorsOf = (id: string): Set<string> => {
    const seen = new Set<string>()
    const stack = [...index.get(id)!.dependencies]
    for (let d = stack.pop(); d !== undefined; d = stack.pop()) {
      if (seen.has(d)) continue
      seen.add(d)
      stack.push(...(index.get(d)?.dependencies ?? []))
    }
    return seen
  }

  const fail = async (s: Subtask, error: unknown, strategy: Exclude<FailureStrategy, 'retry'>): Promise<void> => {
    const message = errorMessage(error)
    s.error = message
    if (strategy === 'skip') {
      s.status = 'skipped'
      record(hooks.changed(s, plan))
      for (const d of transitiveDependents(plan.subtasks, s.id)) {
        const dep = index.get(d)!
        if (dep.status !== 'pending') continue
        dep.status = 'skipped'
        dep.error = `skipped: depends on ${s.id}, which failed`
        record(hooks.changed(dep, plan))
      }
      return
    }
    s.status = 'failed'
    record(hooks.changed(s, plan))
    if (strategy === 'replan') replanFor ??= { id: s.id, error: message }
    else stopped ??= { id: s.id, error: message, ...(isTeaError(error) ? { code: error.code } : {}) }
  }

  for (;;) {
    if (!stopped && !replanFor && signal === undefined) launch()
    if (running.size === 0) {
      await settle()
      if (signal !== undefined) throw signal
      if (!replanFor || stopped) break
      const failure = replanFor
      replanFor = undefined
      try {
        plan = await hooks.replan(plan, failure)
      } catch (e) {
        if (isControlSignal(e)) throw e
        stopped = { id: failure.id, error: `${failure.error}; replanning failed: ${errorMessage(e)}`, ...(isTeaError(e) ? { code: e.code } : {}) }
        break
      }
      order = topologicalOrder(plan.subtasks)
      index = byId()
      continue
    }
    const done = await Promise.race(running.values())
    running.delete(done.id)
    const s = index.get(done.id)!
    if ('signal' in done) {
      signal ??= done.signal
      s.status = 'pending'
      continue
    }
    s.attempts = (s.attempts ?? 0) + done.attempts
    if (done.ok) {
      s.status = 'completed'
      s.result = done.out.value
      delete s.error
      const changedState = done.out.stateUpdate !== undefined || done.out.removed !== undefined
      if (changedState) updates.set(s.id, done.out)
      record(hooks.changed(s, plan, changedState ? { update: done.out } : undefined))
    } else {
      const strategy = opts.onFailure === 'retry' ? opts.onRetriesExhausted : opts.onFailure
      await fail(s, done.error, strategy)
    }
  }
  const outcome: ScheduleOutcome = { plan, updates }
  if (stopped) outcome.stopped = stopped
  return outcome
}
