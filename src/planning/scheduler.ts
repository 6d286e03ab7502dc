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
 *                    ready ─batch─► queued ─start─► running (queued: handed to a worker in a batch, not started)
 *                                   queued ─requeue─► ready (taken back from its batch before it started)
 *                                   running ─retry─► running (after the backoff; told, not recorded)
 *                                   running ─failed─► committing ─committed─► failed, or skipped (skip: with every
 *                                                                            pending dependent, transitively)
 *                                   running ─interrupted─► ready (cancelled: unrecorded, it runs again on resume)
 *
 * "Counts once committed" (SPEC §3.6): a subtask is done, and its dependents may start, only once its record has
 * committed (the CommitQueue, in group mode: records that finish while earlier ones commit go out together, in one
 * transaction).
 *
 * A slot runs one subtask's attempts, or a batch: ready subtasks handed to one worker together, which starts each
 * in turn (batching.ts says when and how many). A batch changes when its members start, never what they do: each
 * is told, recorded, retried, timed and failed on its own, a failure ends its batch, and whatever of a batch has
 * not started when the run stops (or when another slot is idle) is taken back, unstarted.
 *
 * The run as a whole is `running` (starting what is ready), `stopping` (a failure under abort, a failure to be
 * replanned, a cancellation, or a record that failed to write: nothing more starts, and what is in flight and its
 * records finish), `replanning` (everything settled; waiting for the revised plan, then `running` again) and at
 * last `finished`.
 */

import { errorMessage, isTeaError } from '../core/errors.ts'
import { cancelled, isControlSignal } from '../core/signals.ts'
import { backoffDelay, monotonicMs } from '../core/util.ts'
import { CommitQueue } from '../store/commit-queue.ts'
import type { Attempt, SlotOwner } from './batch-slot.ts'
import { BatchSlot } from './batch-slot.ts'
import type { BatchEvents, BatchMember, BatchPolicy, FirstAttempt, SubtaskBatch } from './batching.ts'
import { BatchSizer } from './batching.ts'
import { transitiveDependents } from './dag.ts'
import { ancestorsOf, applyAll, graphOf, type Graph } from './schedule-graph.ts'
import type { FailureStrategy, Plan, PlanProgress, Subtask, SubtaskInput, SubtaskOutput } from './types.ts'
import { countStatuses } from './types.ts'

export type Phase = 'pending' | 'ready' | 'queued' | 'running' | 'committing' | 'done' | 'failed' | 'skipped'
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
  /**
   * Optional: runs the first attempts of several subtasks on one worker, one after the other (a batch). Member 0
   * starts with the call; no event is told before the call returns. Throwing (a member's task cannot be made)
   * turns batching off for the run: each subtask then runs, and fails, on its own.
   */
  runBatch?(members: readonly BatchMember[], events: BatchEvents): SubtaskBatch
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
  /** How big batches are (only with the runBatch hook); default BatchSizer. */
  batchPolicy?: BatchPolicy
}

export interface ScheduleOutcome {
  plan: Plan
  /** The plan's subtask ids in topological order (dag.ts), as the scheduler indexed it. */
  order: readonly string[]
  /** Per completed subtask, what its code changed in state. */
  updates: Map<string, SubtaskOutput>
  /** Set when the run stopped early: which subtask and why. */
  stopped?: { id: string; error: string; code?: string }
}

/** The phase a subtask starts in from the status it arrives with; pending ones are ready or pending by dependencies. */
const PHASE_OF: Partial<Record<Subtask['status'], Phase>> = { completed: 'done', failed: 'failed', skipped: 'skipped' }

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
  /** Slots in use: one per subtask running on its own, one per batch. */
  private busy = 0
  private readonly batches = new Set<BatchSlot>()
  private readonly sizer: BatchPolicy
  private batching: boolean
  private readonly startedAt = new Map<string, number>()
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
    this.batching = hooks.runBatch !== undefined && opts.concurrency > 1
    this.sizer = opts.batchPolicy ?? new BatchSizer()
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
    const outcome: ScheduleOutcome = { plan: this.plan, order: this.g.order, updates: this.updates }
    if (this.stopped) outcome.stopped = this.stopped
    return outcome
  }

  // --- transitions of a subtask ---

  /** pending → ready: its last dependency is done. */
  private ready(id: string): void {
    this.phases.set(id, 'ready')
    this.g.ready.push(this.g.position.get(id)!, id)
  }

  /** ready → running, in a slot of its own. */
  private start(s: Subtask): void {
    this.busy++
    this.attempt(s, this.begin(s)).then(
      (a) => this.slotFreed(s, a),
      (error: unknown) => this.slotFreed(s, { ok: false, error, attempts: 1 }),
    )
  }

  /** → running. Starting is told, not recorded: an in-flight subtask has no record and runs again on resume. */
  private begin(s: Subtask, input = this.inputFor(s)): SubtaskInput {
    this.phases.set(s.id, 'running')
    this.setStatus(s, 'in_progress')
    this.startedAt.set(s.id, monotonicMs())
    this.hooks.emit(s, this.plan, { ...this.progress })
    return input
  }

  private slotFreed(s: Subtask, a: Attempt): void {
    this.busy--
    this.ended(s, a)
    this.wakeIfQuiet()
  }

  /** A subtask's attempts are over: it succeeded, failed for good, or was interrupted. */
  private ended(s: Subtask, a: Attempt): void {
    const startedAt = this.startedAt.get(s.id)
    this.startedAt.delete(s.id)
    if ('signal' in a) return this.interrupted(s, a.signal)
    if (a.attempts === 1 && startedAt !== undefined) this.sizer.record(monotonicMs() - startedAt)
    s.attempts = (s.attempts ?? 0) + a.attempts
    if (a.ok) this.succeeded(s, a.out)
    else this.failed(s, a.error)
  }

  // --- batches ---

  /** ready → queued, several subtasks in one slot: the first starts now, the others as the worker reaches them. */
  private startBatch(subtasks: readonly Subtask[]): void {
    const members = subtasks.map((s) => ({ subtask: s, input: this.inputFor(s) }))
    for (const m of members.slice(1)) this.phases.set(m.subtask.id, 'queued')
    const slot = new BatchSlot(members, this.slotOwner)
    if (!slot.start(this.hooks.runBatch!)) {
      this.batching = false
      for (const m of members) this.requeue(m.subtask)
      return
    }
    this.busy++
    this.batches.add(slot)
  }

  private readonly slotOwner: SlotOwner = {
    begin: (s, input) => void this.begin(s, input),
    conclude: (s, input, first) => this.conclude(s, input, first),
    ended: (s, a) => this.ended(s, a),
    requeue: (s) => this.requeue(s),
    freed: (slot) => {
      this.batches.delete(slot)
      this.busy--
      this.launch()
      this.wakeIfQuiet()
    },
  }

  /** A batch member's first attempt has ended: so have its attempts, unless it is to be retried. */
  private conclude(s: Subtask, input: SubtaskInput, first: FirstAttempt): Attempt | Promise<Attempt> {
    if (first.ok) return { ok: true, out: first.out, attempts: 1 }
    if (isControlSignal(first.error)) return { signal: first.error }
    if (this.opts.onFailure !== 'retry' || this.opts.maxRetries < 1) return { ok: false, error: first.error, attempts: 1 }
    return this.backoff(s, first.error, 0).then((a) => a ?? this.attempt(s, input, 1))
  }

  /** queued → ready: taken back from its batch before it started. */
  private requeue(s: Subtask): void {
    this.phases.set(s.id, 'ready')
    this.g.ready.push(this.g.position.get(s.id)!, s.id)
  }

  /** A free slot and nothing ready: take the later half of the unstarted members of the fullest batch. */
  private steal(): boolean {
    let fullest: BatchSlot | undefined
    for (const b of this.batches) if (b.waiting > (fullest?.waiting ?? 0)) fullest = b
    return fullest !== undefined && fullest.takeBack(fullest.laterHalf) > 0
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

  /** Starts ready subtasks, alone or in batches, while slots are free and the run is not stopping. */
  private launch(): void {
    if (this.queue.failed) this.stop()
    if (this.state !== 'running') return
    while (this.busy < this.opts.concurrency) {
      const size = this.batching ? this.sizer.size(this.g.ready.size, this.opts.concurrency) : 1
      const picked: Subtask[] = []
      while (picked.length < size) {
        const id = this.g.ready.pop()
        if (id === undefined) break
        if (this.phases.get(id) === 'ready') picked.push(this.g.byId.get(id)!)
      }
      if (picked.length === 0) {
        if (this.steal()) continue
        return
      }
      if (picked.length === 1) this.start(picked[0]!)
      else this.startBatch(picked)
    }
  }

  /** running → stopping: nothing more starts, and the unstarted members of batches come back. */
  private stop(): void {
    if (this.state === 'running') this.state = 'stopping'
    for (const b of this.batches) b.takeBack(0)
  }

  private wakeIfQuiet(): void {
    if (this.busy === 0 && this.quiet) {
      const quiet = this.quiet
      this.quiet = undefined
      quiet()
    }
  }

  /**
   * Waits until nothing runs and every record has committed. A record that fails to write stops the run (nothing
   * more starts), and is thrown once what was in flight has finished.
   */
  private async settle(): Promise<void> {
    for (;;) {
      if (this.busy > 0) await new Promise<void>((resolve) => (this.quiet = resolve))
      try {
        await this.queue.drain()
      } catch (e) {
        if (this.busy > 0) continue
        throw e
      }
      if (this.busy === 0) return
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

  /** Attempts from number `from` + 1 on, until one succeeds, the retries run out or the run is stopped. */
  private async attempt(s: Subtask, input: SubtaskInput, from = 0): Promise<Attempt> {
    for (let a = from; ; a++) {
      try {
        return { ok: true, out: await this.hooks.run(s, input, a + 1), attempts: a + 1 }
      } catch (e) {
        const ended = await this.backoff(s, e, a)
        if (ended) return ended
      }
    }
  }

  /** After attempt `a` + 1 failed with `e`: how the attempts ended, or nothing once the backoff to retry is over. */
  private async backoff(s: Subtask, e: unknown, a: number): Promise<Attempt | undefined> {
    if (isControlSignal(e)) return { signal: e }
    if (this.opts.onFailure !== 'retry' || a >= this.opts.maxRetries) return { ok: false, error: e, attempts: a + 1 }
    this.hooks.emit(s, this.plan, { ...this.progress }, { retrying: true, attempt: a + 1, error: errorMessage(e) })
    try {
      // retry_delay × backoff_factor^a exactly, as the planning spec's retries are (no jitter, no cap but the user's).
      await this.hooks.sleep(backoffDelay(a, this.opts.retryDelayMs, { factor: this.opts.backoffFactor, maxMs: Infinity, jitter: false }))
    } catch (e) {
      // the run was stopped during the backoff: the subtask is in flight, unrecorded, and runs again on resume
      return { signal: isControlSignal(e) ? e : cancelled() }
    }
    return undefined
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
