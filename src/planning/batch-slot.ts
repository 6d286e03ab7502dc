/**
 * A batch in flight, as the scheduler's slot that holds it (scheduler.ts, batching.ts): which of its members have
 * started, which were taken back, and when the slot is free again. That is once the worker is done with the batch
 * and no member's attempts go on: a member that failed and is to be retried keeps the slot through its backoff and
 * further attempts, as a subtask running alone keeps its own.
 */

import type { BatchEvents, BatchMember, FirstAttempt, SubtaskBatch } from './batching.ts'
import type { Subtask, SubtaskInput, SubtaskOutput } from './types.ts'

/** How a subtask's attempts ended. */
export type Attempt =
  | { ok: true; out: SubtaskOutput; attempts: number }
  | { ok: false; error: unknown; attempts: number }
  | { signal: unknown }

/** What the scheduler does for a batch's members. */
export interface SlotOwner {
  /** → running, told. */
  begin(s: Subtask, input: SubtaskInput): void
  /** How the member's attempts end after its first one (at once, or after retries). */
  conclude(s: Subtask, input: SubtaskInput, first: FirstAttempt): Attempt | Promise<Attempt>
  ended(s: Subtask, a: Attempt): void
  /** → ready: it never started. */
  requeue(s: Subtask): void
  /** The slot is free. */
  freed(slot: BatchSlot): void
}

export class BatchSlot {
  private handle: SubtaskBatch | undefined
  /** Members below `next` have started. Those from `end` on were taken back, or are starting anyway. */
  private next = 1
  private end: number
  /** Started members whose attempts go on. */
  private live = 1
  private over = false

  constructor(
    private readonly members: readonly BatchMember[],
    private readonly owner: SlotOwner,
  ) {
    this.end = members.length
  }

  /** Members not started and not taken back (an estimate: the worker may be taking the next one just now). */
  get waiting(): number {
    return this.over ? 0 : this.end - this.next
  }

  /** Where the later half (rounded up) of the waiting members begins. */
  get laterHalf(): number {
    return this.end - Math.ceil(this.waiting / 2)
  }

  /** Hands the batch over and starts its first member; false when the hook would not take it. */
  start(runBatch: (members: readonly BatchMember[], events: BatchEvents) => SubtaskBatch): boolean {
    const { members, owner } = this
    try {
      this.handle = runBatch(members, {
        started: (i) => {
          this.next = i + 1
          this.live++
          owner.begin(members[i]!.subtask, members[i]!.input)
        },
        settled: (i, first) => this.settled(members[i]!, first),
      })
    } catch {
      return false
    }
    owner.begin(members[0]!.subtask, members[0]!.input)
    this.handle.done.then((back) => {
      for (const i of back) owner.requeue(members[i]!.subtask)
      this.over = true
      this.mayEnd()
    })
    return true
  }

  /** Takes back the members from `from` on that have not started; how many came back. */
  takeBack(from = 0): number {
    if (!this.handle || this.over) return 0
    this.end = Math.min(this.end, from)
    const back = this.handle.withdraw(from)
    for (const i of back) this.owner.requeue(this.members[i]!.subtask)
    return back.length
  }

  private settled(m: BatchMember, first: FirstAttempt): void {
    const a = this.owner.conclude(m.subtask, m.input, first)
    if (!(a instanceof Promise)) return this.memberEnded(m.subtask, a)
    a.then(
      (x) => this.memberEnded(m.subtask, x),
      (error: unknown) => this.memberEnded(m.subtask, { ok: false, error, attempts: 1 }),
    )
  }

  private memberEnded(s: Subtask, a: Attempt): void {
    this.live--
    this.owner.ended(s, a)
    this.mayEnd()
  }

  private mayEnd(): void {
    if (!this.over || this.live > 0) return
    this.live = -1 // freed once
    this.owner.freed(this)
  }
}
