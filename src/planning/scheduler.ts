/**
 * The execution loop of `plan.execute` as a state machine, free of threads and storage: it decides what runs when
 * and what a failure does, and leaves running a subtask, writing its record, telling events, waiting and
 * replanning to hooks, so tests drive it with fakes. Subtasks start as soon as their dependencies are done, in
 * topological order, at most `concurrency` at a time. A subtask's input state is deterministic: the base state
 * plus the updates of the subtasks it depends on (transitively), applied in topological order — and with
 * `concurrency` 1 (`parallel: false`), the updates of every subtask completed before it.
 *
 * Each subtask is in one phase (`Phase`); every change of phase is one named transition below:
 *
 *   pending ─ready─► ready ─start─► running ─succeeded─► committing ─committed─► done (its dependents: ready)
 *                                   running ─retry─► running (after the backoff; told, not recorded)
 *                                   running ─failed─► committing ─committed─► failed, or skipped (skip: with every
 *                                                                            pending dependent, transitively)
 *                                   running ─interrupted─► ready (cancelled: unrecorded, it runs again on resume)
 *
 * "Counts once committed" (SPEC §3.6): a subtask is done, and its dependents may start, only once its record has
 * committed (the CommitQueue, in group mode: records that finish while a batch commits go out in one transaction).
 *
 * The run as a whole is `running` (starting what is ready), `stopping` (a failure under abort, a failure to be
 * replanned, a cancellation, or a record that failed to write: nothing more starts, and what is in flight and its
 * records finish), `replanning` (everything settled; waiting for the revised plan, then `running` again) and at
 * last `finished`.
 */

import { errorMessage, isTeaError } from '../core/errors.ts'
import { cancelled, isControlSignal } from '../core/signals.ts'
import { CommitQueue } from '../store/commit-queue.ts'
import { transitiveDependents } from './dag.ts'
import { ancestorsOf, applyAll, graphOf, type Graph } from './schedule-graph.ts'
import type { FailureStrategy, Plan, PlanProgress, Subtask, SubtaskInput, SubtaskOutput } from './types.ts'
import { countStatuses } from './types.ts'

export type Phase = 'pending' | 'ready' | 'running' | 'committing' | 'done' | 'failed' | 'skipped'
export type RunState = 'running' | 'stopping' | 'replanning' | 'finished'

export interface SchedulerHooks {
  /** Runs one attempt of a subtask. A control signal (cancel) it throws interrupts the run. */
  run(subtask: Subtask, input: SubtaskInput, attempt: number): Promise<SubtaskOutput>
  /** Writes a finished subtask's record (its status, result and error are set); resolves once committed. */
  commit(subtask: Subtask, update: SubtaskOutput | undefined, code: string | undefined): Promise<void>
  /** Tells a change of status: starting and retrying at once, finishing once its record has committed. */
  emit(subtask: Subtask, plan: Plan, progress: PlanProgress, extra?: Record<string, unknown>): void
  /** Called with the plan and the failure once everything has settled; returns the revised plan. */
  replan(plan: Plan, failure: { id: string; error: string }): Promise<Plan>
  /** The retry backoff; throws a control signal when the run is stopped meanwhile. */
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

/** The phase a subtask starts in from the status it arrives with; pending ones are ready or pending by dependencies. */
const PHASE_OF: Partial<Record<Subtask['status'], Phase>> = { completed: 'done', failed: 'failed', skipped: 'skipped' }

type Attempt = { ok: true; out: SubtaskOutput; attempts: number } | { ok: false; error: unknown; attempts: number } | { signal: unknown }

export function schedule(plan: Plan, opts: SchedulerOptions, hooks: SchedulerHooks): Promise<ScheduleOutcome> {
  return new PlanRun(plan, opts, hooks).run()
}

export class PlanRun {
  private plan: Plan
  private g!: Graph
  private readonly phases = new Map<string, Phase>()
  private progress!: PlanProgress
  private readonly updates: Map<string, SubtaskOutput>
  /** Sequential runs thread state through every subtask in the order they ran (the topological order). */
  private accumulated: Record<string, unknown> | undefined
  private readonly queue = new CommitQueue({ group: true })
  private state: RunState = 'running'
  private running = 0
  private quiet: (() => void) | undefined
  private stopped: ScheduleOutcome['stopped']
  private replanFor: { id: string; error: string } | undefined
  private interruption: { signal: unknown } | undefined
  private readonly strategy: Exclude<FailureStrategy, 'retry'>

  constructor(
    plan: Plan,
    private readonly opts: SchedulerOptions,
    private readonly hooks: SchedulerHooks,
  ) {
    this.plan = plan
    this.updates = new Map(opts.recordedUpdates ?? [])
    this.strategy = opts.onFailure === 'retry' ? opts.onRetriesExhausted : opts.onFailure
    this.index()
  }

  /** The phase of a subtask of the current plan. */
  phase(id: string): Phase | undefined {
    return this.phases.get(id)
  }

  get runState(): RunState {
    return this.state
  }

  async run(): Promise<ScheduleOutcome> {
    this.recordedFailures()
    for (;;) {
      this.launch()
      await this.settle()
      if (this.interruption) throw this.interruption.signal
      if (!this.replanFor || this.stopped) break
      await this.replan(this.replanFor)
    }
    this.state = 'finished'
    const outcome: ScheduleOutcome = { plan: this.plan, updates: this.updates }
    if (this.stopped) outcome.stopped = this.stopped
    return outcome
  }

  // --- transitions of a subtask ---

  /** pending → ready: its last dependency is done. */
  private ready(id: string): void {
    this.phases.set(id, 'ready')
    this.g.ready.push(this.g.position.get(id)!, id)
  }

  /** ready → running. Starting is told, not recorded: an in-flight subtask has no record and runs again on resume. */
  private start(s: Subtask): void {
    this.phases.set(s.id, 'running')
    this.setStatus(s, 'in_progress')
    this.running++
    const input = this.inputFor(s)
    this.hooks.emit(s, this.plan, { ...this.progress })
    this.attempt(s, input).then(
      (a) => this.attemptEnded(s, a),
      (error: unknown) => this.attemptEnded(s, { ok: false, error, attempts: 1 }),
    )
  }

  private attemptEnded(s: Subtask, a: Attempt): void {
    this.running--
    if ('signal' in a) this.interrupted(s, a.signal)
    else {
      s.attempts = (s.attempts ?? 0) + a.attempts
      if (a.ok) this.succeeded(s, a.out)
      else this.failed(s, a.error)
    }
    if (this.running === 0 && this.quiet) {
      const quiet = this.quiet
      this.quiet = undefined
      quiet()
    }
  }

  /**
   * running → committing, as completed. The freed slot is filled before the record is written: a worker then waits
   * for its next task no longer than it must (waking an idle thread costs more than the write).
   */
  private succeeded(s: Subtask, out: SubtaskOutput): void {
    this.setStatus(s, 'completed')
    s.result = out.value
    delete s.error
    const changedState = out.stateUpdate !== undefined || out.removed !== undefined
    if (changedState) {
      this.updates.set(s.id, out)
      if (this.accumulated) applyAll(this.accumulated, [s.id], this.updates)
    }
    // The event reports the progress as it was when this subtask completed.
    const progress = { ...this.progress }
    this.launch()
    this.commit(s, progress, changedState ? out : undefined, undefined)
  }

  /** running → committing, as failed or skipped, by the failure strategy; stops or asks for a replan. */
  private failed(s: Subtask, error: unknown): void {
    const message = errorMessage(error)
    s.error = message
    if (this.strategy === 'skip') {
      this.setStatus(s, 'skipped')
      this.commit(s, { ...this.progress })
      for (const id of transitiveDependents(this.plan.subtasks, s.id)) {
        const dep = this.g.byId.get(id)!
        if (dep.status !== 'pending') continue
        this.setStatus(dep, 'skipped')
        dep.error = `skipped: depends on ${s.id}, which failed`
        this.commit(dep, { ...this.progress })
      }
      this.launch()
      return
    }
    this.setStatus(s, 'failed')
    const code = isTeaError(error) ? error.code : undefined
    this.commit(s, { ...this.progress }, undefined, code)
    if (this.strategy === 'replan') this.replanFor ??= { id: s.id, error: message }
    else this.stopped ??= { id: s.id, error: message, ...(code ? { code } : {}) }
    this.stop()
  }

  /** running → ready: the run was cancelled while this subtask ran. */
  private interrupted(s: Subtask, signal: unknown): void {
    this.interruption ??= { signal }
    this.phases.set(s.id, 'ready')
    this.setStatus(s, 'pending')
    this.stop()
  }

  /** → committing: the record goes to the queue; the subtask counts (committed) once it has been written. */
  private commit(s: Subtask, progress: PlanProgress, update?: SubtaskOutput, code?: string): void {
    this.phases.set(s.id, 'committing')
    this.queue.add(
      () => this.hooks.commit(s, update, code),
      () => this.committed(s, progress, code),
    )
  }

  /** committing → done (its dependents may become ready), failed or skipped. */
  private committed(s: Subtask, progress: PlanProgress, code: string | undefined): void {
    this.phases.set(s.id, s.status === 'completed' ? 'done' : (s.status as 'failed' | 'skipped'))
    this.hooks.emit(s, this.plan, progress, code ? { code } : undefined)
    if (s.status !== 'completed') return
    for (const d of this.g.dependents.get(s.id) ?? []) {
      const waiting = this.g.waiting.get(d)
      if (waiting === undefined) continue // it arrived finished
      this.g.waiting.set(d, waiting - 1)
      if (waiting === 1 && this.phases.get(d) === 'pending') this.ready(d)
    }
    this.launch()
  }

  // --- the run as a whole ---

  /** Starts ready subtasks while slots are free and the run is not stopping. */
  private launch(): void {
    if (this.state !== 'running' || this.queue.failed) return
    while (this.running < this.opts.concurrency) {
      const id = this.g.ready.pop()
      if (id === undefined) return
      if (this.phases.get(id) === 'ready') this.start(this.g.byId.get(id)!)
    }
  }

  /** running → stopping: nothing more starts. */
  private stop(): void {
    if (this.state === 'running') this.state = 'stopping'
  }

  /**
   * Waits until nothing runs and every record has committed. A record that fails to write stops the run (nothing
   * more starts), and is thrown once what was in flight has finished.
   */
  private async settle(): Promise<void> {
    for (;;) {
      if (this.running > 0) await new Promise<void>((resolve) => (this.quiet = resolve))
      try {
        await this.queue.drain()
      } catch (e) {
        if (this.running > 0) continue
        throw e
      }
      if (this.running === 0) return
    }
  }

  /** stopping → replanning → running with the revised plan, or stopping for good when replanning fails. */
  private async replan(failure: { id: string; error: string }): Promise<void> {
    this.replanFor = undefined
    this.state = 'replanning'
    try {
      this.plan = await this.hooks.replan(this.plan, failure)
    } catch (e) {
      if (isControlSignal(e)) throw e
      this.stopped = {
        id: failure.id,
        error: `${failure.error}; replanning failed: ${errorMessage(e)}`,
        ...(isTeaError(e) ? { code: e.code } : {}),
      }
      this.state = 'stopping'
      return
    }
    this.state = 'running'
    this.index()
  }

  /**
   * A plan that arrives with a failed subtask (a resumed run whose failure was recorded, but not what followed it —
   * e.g. the process died waiting for the replan's model reply) gets the strategy it would have got then.
   */
  private recordedFailures(): void {
    if (this.strategy === 'skip') return
    for (const id of this.g.order) {
      const s = this.g.byId.get(id)!
      if (s.status !== 'failed') continue
      const error = s.error ?? 'failed earlier'
      const code = this.opts.recordedCodes?.get(id)
      if (this.strategy === 'replan') this.replanFor ??= { id, error }
      else this.stopped ??= { id, error, ...(code ? { code } : {}) }
      this.stop()
    }
  }

  // --- internal ---

  /** Indexes the (new) plan: its graph, each subtask's phase from its status, progress, sequential state. */
  private index(): void {
    this.g = graphOf(this.plan)
    this.phases.clear()
    for (const s of this.plan.subtasks) {
      const waiting = this.g.waiting.get(s.id)
      this.phases.set(s.id, PHASE_OF[s.status] ?? (waiting === 0 ? 'ready' : 'pending'))
    }
    this.progress = countStatuses(this.plan.subtasks)
    if (this.opts.concurrency === 1) this.accumulated = applyAll({ ...this.opts.baseState }, this.g.order, this.updates)
  }

  private setStatus(s: Subtask, status: Subtask['status']): void {
    this.progress[s.status]--
    this.progress[status]++
    s.status = status
  }

  private async attempt(s: Subtask, input: SubtaskInput): Promise<Attempt> {
    for (let a = 0; ; a++) {
      try {
        return { ok: true, out: await this.hooks.run(s, input, a + 1), attempts: a + 1 }
      } catch (e) {
        if (isControlSignal(e)) return { signal: e }
        if (this.opts.onFailure !== 'retry' || a >= this.opts.maxRetries) return { ok: false, error: e, attempts: a + 1 }
        this.hooks.emit(s, this.plan, { ...this.progress }, { retrying: true, attempt: a + 1, error: errorMessage(e) })
        try {
          await this.hooks.sleep(this.opts.retryDelayMs * this.opts.backoffFactor ** a)
        } catch (e) {
          // the run was stopped during the backoff: the subtask is in flight, unrecorded, and runs again on resume
          return { signal: isControlSignal(e) ? e : cancelled() }
        }
      }
    }
  }

  private inputFor(s: Subtask): SubtaskInput {
    const dependency_results: Record<string, unknown> = {}
    for (const d of s.dependencies) dependency_results[d] = this.g.byId.get(d)!.result
    if (this.accumulated) return { state: { ...this.accumulated }, dependency_results }
    if (this.updates.size === 0) return { state: { ...this.opts.baseState }, dependency_results }
    const ancestors = ancestorsOf(this.g, s.id)
    const position = this.g.position
    const mine = [...this.updates.keys()].filter((id) => ancestors.has(id)).sort((x, y) => position.get(x)! - position.get(y)!)
    return { state: applyAll({ ...this.opts.baseState }, mine, this.updates), dependency_results }
  }
}
