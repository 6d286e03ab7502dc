/**
 * The execution loop of `plan.execute`, free of threads and storage: it decides what runs when and what a failure
 * does, and leaves the running, recording and replanning to hooks. Subtasks start as soon as their dependencies
 * have completed, in topological order, at most `concurrency` at a time. A subtask's input state is deterministic:
 * the base state plus the updates of the subtasks it depends on (transitively), applied in topological order —
 * and with `concurrency` 1 (`parallel: false`), the updates of every subtask completed before it.
 */

import { cancelled, isControlSignal } from '../core/signals.ts'
import { errorMessage, isTeaError } from '../core/errors.ts'
import { transitiveDependents } from './dag.ts'
import { ancestorsOf, applyAll, graphOf } from './schedule-graph.ts'
import type { FailureStrategy, Plan, PlanProgress, Subtask } from './types.ts'
import { countStatuses } from './types.ts'

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
  changed(subtask: Subtask, plan: Plan, progress: PlanProgress, extra?: Record<string, unknown>): Promise<void> | void
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
  /** Error codes of failures already recorded (a resumed run). */
  recordedCodes?: Map<string, string>
}

export interface ScheduleOutcome {
  plan: Plan
  /** Per completed subtask, what its code changed in state. */
  updates: Map<string, SubtaskOutput>
  /** Set when the run stopped early: which subtask and why. */
  stopped?: { id: string; error: string; code?: string }
}

type Released = { released: true }

type Done =
  | { id: string; ok: true; out: SubtaskOutput; attempts: number }
  | { id: string; ok: false; error: unknown; attempts: number }
  | { id: string; signal: unknown }

export async function schedule(initial: Plan, opts: SchedulerOptions, hooks: SchedulerHooks): Promise<ScheduleOutcome> {
  let plan = initial
  const updates = new Map<string, SubtaskOutput>(opts.recordedUpdates ?? [])
  const running = new Map<string, Promise<Done>>()
  let stopped: ScheduleOutcome['stopped']
  let replanFor: { id: string; error: string } | undefined
  let signal: unknown
  let g = graphOf(plan)
  let progress = countStatuses(plan.subtasks)
  // Sequential runs thread state through every subtask in the order they ran (which is the topological order).
  let accumulated: Record<string, unknown> | undefined = opts.concurrency === 1 ? applyAll({ ...opts.baseState }, g.order, updates) : undefined

  // Records of finished subtasks commit in the background and are batched by the store. A subtask counts as done
  // only once its record has committed (SPEC §3.6), so its dependents are released then, and the loop waits for
  // every record before it returns or replans. Independent subtasks keep running meanwhile.
  let recording: Array<Promise<unknown>> = []
  let releasing = 0
  let writeFailed = false
  // One wake-up promise for all pending releases (not one race entry per pending commit, which made the loop
  // quadratic when subtasks finish faster than records commit).
  let wake!: Promise<Released>
  let wakeUp!: () => void
  const rearm = (): void => {
    wake = new Promise((resolve) => {
      wakeUp = () => resolve({ released: true })
    })
  }
  rearm()
  const record = (p: Promise<void> | void): void => {
    if (!p) return
    p.catch(() => {})
    recording.push(p)
  }
  const releaseAfter = (p: Promise<void> | void, id: string): void => {
    releasing++
    recording.push(Promise.resolve(p))
    Promise.resolve(p).then(
      () => {
        releasing--
        release(id)
        wakeUp()
      },
      () => {
        releasing--
        writeFailed = true
        wakeUp()
      },
    )
  }
  const settle = async (): Promise<void> => {
    const all = recording
    recording = []
    await Promise.all(all)
  }
  const release = (id: string): void => {
    for (const d of g.dependents.get(id) ?? []) {
      const left = g.waiting.get(d)! - 1
      g.waiting.set(d, left)
      if (left === 0) g.ready.push(g.position.get(d)!, d)
    }
  }
  const setStatus = (s: Subtask, status: Subtask['status']): void => {
    progress[s.status]--
    progress[status]++
    s.status = status
  }
  const changed = (s: Subtask, extra?: Record<string, unknown>): Promise<void> | void => hooks.changed(s, plan, { ...progress }, extra)

  const attempt = async (s: Subtask, input: SubtaskInput): Promise<Done> => {
    for (let a = 0; ; a++) {
      try {
        return { id: s.id, ok: true, out: await hooks.run(s, input, a + 1), attempts: a + 1 }
      } catch (e) {
        if (isControlSignal(e)) return { id: s.id, signal: e }
        if (opts.onFailure !== 'retry' || a >= opts.maxRetries) return { id: s.id, ok: false, error: e, attempts: a + 1 }
        record(changed(s, { retrying: true, attempt: a + 1, error: errorMessage(e) }))
        try {
          await hooks.sleep(opts.retryDelayMs * opts.backoffFactor ** a)
        } catch (e) {
          // the run was stopped during the backoff: the subtask is in flight, unrecorded, and runs again on resume
          return { id: s.id, signal: isControlSignal(e) ? e : cancelled() }
        }
      }
    }
  }

  const launch = (): void => {
    while (running.size < opts.concurrency) {
      const id = g.ready.pop()
      if (id === undefined) return
      const s = g.byId.get(id)!
      if (s.status !== 'pending') continue
      setStatus(s, 'in_progress')
      const input = inputFor(s)
      // Starting is announced, not recorded: an in-flight subtask has no record and simply runs again on resume.
      Promise.resolve(changed(s)).catch(() => {})
      running.set(id, attempt(s, input))
    }
  }

  const canLaunch = (): boolean => !stopped && !replanFor && signal === undefined && !writeFailed

  const inputFor = (s: Subtask): SubtaskInput => {
    const dependency_results: Record<string, unknown> = {}
    for (const d of s.dependencies) dependency_results[d] = g.byId.get(d)!.result
    if (accumulated) return { state: { ...accumulated }, dependency_results }
    if (updates.size === 0) return { state: { ...opts.baseState }, dependency_results }
    const ancestors = ancestorsOf(g, s.id)
    const mine = [...updates.keys()].filter((id) => ancestors.has(id)).sort((x, y) => g.position.get(x)! - g.position.get(y)!)
    return { state: applyAll({ ...opts.baseState }, mine, updates), dependency_results }
  }

  const fail = (s: Subtask, error: unknown, strategy: Exclude<FailureStrategy, 'retry'>): void => {
    const message = errorMessage(error)
    s.error = message
    if (strategy === 'skip') {
      setStatus(s, 'skipped')
      record(changed(s))
      for (const d of transitiveDependents(plan.subtasks, s.id)) {
        const dep = g.byId.get(d)!
        if (dep.status !== 'pending') continue
        setStatus(dep, 'skipped')
        dep.error = `skipped: depends on ${s.id}, which failed`
        record(changed(dep))
      }
      return
    }
    setStatus(s, 'failed')
    const code = isTeaError(error) ? error.code : undefined
    record(changed(s, code ? { code } : undefined))
    if (strategy === 'replan') replanFor ??= { id: s.id, error: message }
    else stopped ??= { id: s.id, error: message, ...(code ? { code } : {}) }
  }

  // A plan that arrives with a failed subtask (a resumed run whose failure was recorded, but not what followed
  // it — e.g. the process died waiting for the replan's model reply) gets the strategy it would have got then.
  const strategy = opts.onFailure === 'retry' ? opts.onRetriesExhausted : opts.onFailure
  for (const id of g.order) {
    const s = g.byId.get(id)!
    if (s.status !== 'failed' || strategy === 'skip') continue
    const error = s.error ?? 'failed earlier'
    const code = opts.recordedCodes?.get(id)
    if (strategy === 'replan') replanFor ??= { id, error }
    else stopped ??= { id, error, ...(code ? { code } : {}) }
  }

  for (;;) {
    if (canLaunch()) launch()
    if (running.size === 0 && releasing === 0) {
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
      g = graphOf(plan)
      progress = countStatuses(plan.subtasks)
      if (accumulated) accumulated = applyAll({ ...opts.baseState }, g.order, updates)
      continue
    }
    const done = await Promise.race([...running.values(), wake])
    if ('released' in done) {
      rearm()
      continue
    }
    running.delete(done.id)
    const s = g.byId.get(done.id)!
    if ('signal' in done) {
      signal ??= done.signal
      setStatus(s, 'pending')
      continue
    }
    s.attempts = (s.attempts ?? 0) + done.attempts
    if (done.ok) {
      setStatus(s, 'completed')
      s.result = done.out.value
      delete s.error
      const changedState = done.out.stateUpdate !== undefined || done.out.removed !== undefined
      if (changedState) {
        updates.set(s.id, done.out)
        if (accumulated) applyAll(accumulated, [s.id], updates)
      }
      // The freed slot is filled before the record is written: a worker then waits for its next task no longer
      // than it must (waking an idle thread costs more than the write). The event still reports the progress as
      // it was when this subtask completed.
      const progressNow = { ...progress }
      if (canLaunch()) launch()
      releaseAfter(hooks.changed(s, plan, progressNow, changedState ? { update: done.out } : undefined), s.id)
    } else {
      fail(s, done.error, opts.onFailure === 'retry' ? opts.onRetriesExhausted : opts.onFailure)
    }
  }
  const outcome: ScheduleOutcome = { plan, updates }
  if (stopped) outcome.stopped = stopped
  return outcome
}
