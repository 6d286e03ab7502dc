/**
 * "Counts once committed" (SPEC §3.6), the one mechanism: the engine's node checkpoints and `plan.execute`'s
 * subtask records both go through a CommitQueue. A write is handed over with a callback, and the callback ("this
 * counts now") runs once that write, and every write handed over before it, has committed — so callbacks run in
 * hand-over order, and a crash loses only work whose callback never ran, which runs again on resume.
 *
 * Writes are pipelined: the caller goes on while they commit, and the store batches what is queued meanwhile into
 * one transaction. Two refinements on top:
 * - Backpressure: `maxPending` bounds the writes handed over and not yet counted; `full` says the bound is reached
 *   and `room()` waits until it is not (bounding memory, and the work a crash sends back).
 * - Group mode: while a batch commits, later writes wait, and all of them are issued together, in one event turn
 *   (lmdb-js commits one turn's writes in one transaction), when it has. Without it, writes that arrive one per
 *   turn (subtasks finishing on worker threads) each cost a transaction. An idle queue writes at once, so a chain
 *   (each write waiting for the previous one's callback) waits no longer than without it.
 *
 * A failed write ends the counting at its place: the writes before it still count as they commit, but neither its
 * callback nor any later one runs; `drain()` rejects with the first failure, and nothing handed over afterwards is
 * written (nor anything still waiting for its batch) — a record after a missing one would describe a history with
 * a hole in it, e.g. a checkpoint log replayed past a lost update. A callback that throws fails the queue and ends
 * the counting the same way.
 */

/** A write to commit: called once, when the queue issues it; resolves once it has committed. */
export type Write = () => Promise<unknown>

export interface CommitQueueOptions {
  /** Writes handed over and not yet counted before `full` is true; default unbounded. */
  maxPending?: number
  /** Group commit (above); default off: every write is issued as it is handed over. */
  group?: boolean
}

interface Entry {
  write: Write | undefined
  counts: (() => void) | undefined
  committed: boolean
}

export class CommitQueue {
  /** Entries not yet counted, oldest first from `head`. */
  private entries: Entry[] = []
  private head = 0
  /** Entries whose write has neither committed nor failed (including those waiting for a batch). */
  private unsettled = 0
  /** Group mode: writes issued and not yet settled, and the entries waiting for them. */
  private inFlight = 0
  private waiting: Entry[] = []
  private error: unknown
  private failedFlag = false
  /** Set when a callback threw: nothing counts any more. */
  private halted = false
  private drainWaiters: Array<() => void> = []
  private roomWaiters: Array<() => void> = []
  private readonly maxPending: number
  private readonly group: boolean

  constructor(options: CommitQueueOptions = {}) {
    this.maxPending = options.maxPending ?? Number.POSITIVE_INFINITY
    this.group = options.group ?? false
  }

  /** Hands a write over; `counts` runs once it and every write before it has committed. */
  add(write: Write, counts?: () => void): void {
    if (this.failedFlag) return
    const entry: Entry = { write, counts, committed: false }
    this.entries.push(entry)
    this.unsettled++
    if (this.group && this.inFlight > 0) this.waiting.push(entry)
    else this.issue(entry)
  }

  /** Writes handed over whose callbacks have not run yet. */
  get pending(): number {
    return this.entries.length - this.head
  }

  /** True when `pending` has reached `maxPending`: wait for `room()` before handing over more. */
  get full(): boolean {
    return this.pending >= this.maxPending
  }

  /** The first write failure, once there has been one. */
  get failure(): unknown {
    return this.error
  }

  get failed(): boolean {
    return this.failedFlag
  }

  /** Resolves once `pending` is below `maxPending`, or a write has failed (see `failure`). */
  room(): Promise<void> {
    if (!this.full || this.failedFlag) return Promise.resolve()
    return new Promise((resolve) => this.roomWaiters.push(resolve))
  }

  /** Resolves once every write handed over has settled; rejects with the first failure. */
  async drain(): Promise<void> {
    if (this.unsettled > 0) await new Promise<void>((resolve) => this.drainWaiters.push(resolve))
    if (this.failedFlag) throw this.error
  }

  // --- internal ---

  private issue(entry: Entry): void {
    const write = entry.write!
    entry.write = undefined
    let p: Promise<unknown>
    try {
      p = write()
    } catch (e) {
      p = Promise.reject(e)
    }
    this.inFlight++
    p.then(
      () => this.settled(entry, undefined, false),
      (e: unknown) => this.settled(entry, e, true),
    )
  }

  private settled(entry: Entry, error: unknown, failed: boolean): void {
    this.inFlight--
    this.unsettled--
    if (failed) this.fail(error)
    else entry.committed = true
    this.count()
    if (this.group && this.inFlight === 0 && this.waiting.length > 0) {
      const batch = this.waiting
      this.waiting = []
      if (this.failedFlag) this.unsettled -= batch.length
      else for (const e of batch) this.issue(e)
    }
    if (this.unsettled === 0) wake(this.drainWaiters)
  }

  /** Runs the callbacks of the committed prefix, in order. A failed entry never commits, so counting stops there. */
  private count(): void {
    const before = this.head
    while (!this.halted && this.head < this.entries.length && this.entries[this.head]!.committed) {
      const counts = this.entries[this.head++]!.counts
      try {
        counts?.()
      } catch (e) {
        this.fail(e)
        this.halted = true
      }
    }
    const advanced = this.head !== before
    if (this.head === this.entries.length) {
      this.entries = []
      this.head = 0
    }
    if ((advanced || this.failedFlag) && this.roomWaiters.length > 0 && (!this.full || this.failedFlag)) wake(this.roomWaiters)
  }

  private fail(error: unknown): void {
    if (this.failedFlag) return
    this.failedFlag = true
    this.error = error
  }
}

function wake(waiters: Array<() => void>): void {
  const all = waiters.splice(0)
  for (const w of all) w()
}
