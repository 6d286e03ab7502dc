/**
 * When to write what, and when it counts (SPEC §3.6).
 *
 * What: after each node only its update is recorded; a full snapshot is written when the bytes of updates since
 * the last snapshot outgrow that snapshot (so replay on resume stays bounded and a run of n steps costs bytes
 * proportional to what its steps changed), and at interrupts and the end. The sizes are the store's own encoded
 * bytes (`checkpointStats`), so deciding costs nothing per node.
 *
 * When: writes are pipelined. The run goes on to the next node while earlier records commit, so one fsync covers
 * every record queued meanwhile (group commit) instead of each node waiting ~0.3 ms for its own. A node counts as
 * done only when its record has committed: `step` takes the callback to run then (the engine emits `node_end`
 * there), callbacks run in step order, and after a crash every node whose record had not committed runs again —
 * at-least-once for in-flight work, exactly-once for recorded work. Interrupts, failures and the end drain the
 * pipeline first.
 *
 * Pipelining pays off for nodes that take microseconds. After a slow node (a model call, a plan) the engine waits
 * for the commit instead (`settle`): it costs little next to the node, and events then read in order — a node's
 * `node_end` before the next one's first event.
 */

import type { State } from '../core/util.ts'
import type { Cursor, Store } from '../store/types.ts'

/** Uncommitted records allowed before the run waits for the disk (bounds memory and re-run work after a crash). */
const MAX_IN_FLIGHT = 512

interface Pending {
  committed: boolean
  done: (() => void) | undefined
}

export class Checkpointer {
  /** Records queued and not yet released, oldest first (from `head`). */
  private pending: Pending[] = []
  private head = 0
  private failure: unknown
  private waiters: Array<() => void> = []

  constructor(
    private readonly store: Store,
    private readonly runId: string,
    private readonly keep: number,
  ) {}

  /** Queues the record of one node; `done` runs once it (and every record before it) has committed. */
  async step(step: number, node: string, update: State, state: State, cursor: Cursor, done: () => void, settle = false): Promise<void> {
    const write = this.snapshotDue()
      ? this.writeSnapshot(step, node, state, cursor)
      : this.store.appendStep(this.runId, { step, node, update, cursor })
    this.track(write, done)
    if (settle) await this.drain()
    else if (this.pending.length - this.head >= MAX_IN_FLIGHT) await this.oldestCommitted()
    if (this.failure !== undefined) throw this.failure
  }

  /** Writes a full snapshot and waits until it and everything before it has committed. */
  async snapshot(step: number, node: string | null, state: State, cursor: Cursor): Promise<void> {
    this.track(this.writeSnapshot(step, node, state, cursor), undefined)
    await this.drain()
  }

  /** Waits for every queued record; throws the first write failure. */
  async drain(): Promise<void> {
    while (this.head < this.pending.length) await new Promise<void>((resolve) => this.waiters.push(resolve))
    if (this.failure !== undefined) throw this.failure
  }

  private snapshotDue(): boolean {
    const stats = this.store.checkpointStats(this.runId)
    return stats.snapshotBytes === 0 || stats.updateBytes > stats.snapshotBytes
  }

  private writeSnapshot(step: number, node: string | null, state: State, cursor: Cursor): Promise<void> {
    return this.store.snapshot(this.runId, { step, node, state, cursor }, this.keep)
  }

  private track(write: Promise<void>, done: (() => void) | undefined): void {
    const entry: Pending = { committed: false, done }
    this.pending.push(entry)
    const settled = (): void => {
      entry.committed = true
      this.release()
    }
    write.then(settled, (e: unknown) => {
      this.failure ??= e
      settled()
    })
  }

  /** Runs the callbacks of the committed prefix, in order, and wakes waiters when nothing is left. */
  private release(): void {
    while (this.head < this.pending.length && this.pending[this.head]!.committed) this.pending[this.head++]!.done?.()
    if (this.head === this.pending.length) {
      this.pending = []
      this.head = 0
    }
    const waiters = this.waiters
    this.waiters = []
    for (const wake of waiters) wake()
  }

  private oldestCommitted(): Promise<void> {
    const target = this.pending[this.head]
    return new Promise((resolve) => {
      const check = (): void => {
        if (!target || target.committed) resolve()
        else this.waiters.push(check)
      }
      check()
    })
  }
}
