/**
 * When to write what, and when it counts (SPEC §3.6).
 *
 * What: after each node only its update is recorded; a full snapshot is written when the bytes of updates since
 * the last snapshot outgrow that snapshot (so replay on resume stays bounded and a run of n steps costs bytes
 * proportional to what its steps changed), and at interrupts and the end. The sizes are the store's own encoded
 * bytes (`checkpointStats`), so deciding costs nothing per node.
 *
 * When: writes are pipelined through the CommitQueue (store/commit-queue.ts). The run goes on to the next node
 * while earlier records commit, so one fsync covers every record queued meanwhile instead of each node waiting
 * ~0.3 ms for its own. A node counts as done only when its record has committed: `step` takes the callback to run
 * then (the engine emits `node_end` there), callbacks run in step order, and after a crash every node whose record
 * had not committed runs again — at-least-once for in-flight work, exactly-once for recorded work. A failed write
 * stops the counting: its node and every later one stay uncounted, and the next `step` or `drain` throws it.
 * Interrupts, failures and the end drain the pipeline first.
 *
 * Pipelining pays off for nodes that take microseconds. After a slow node (a model call, a plan) the engine waits
 * for the commit instead (`settle`): it costs little next to the node, and events then read in order — a node's
 * `node_end` before the next one's first event.
 */

import type { State } from '../core/util.ts'
import { CommitQueue } from '../store/commit-queue.ts'
import type { Cursor, Store } from '../store/types.ts'

/** Uncommitted records allowed before the run waits for the disk (bounds memory and re-run work after a crash). */
const MAX_IN_FLIGHT = 512

export class Checkpointer {
  // Not in group mode: lmdb-js already gathers the writes queued while a transaction commits into the next one,
  // and the snapshot decision reads the store's byte counts, which a write updates only once it is issued.
  private readonly queue = new CommitQueue({ maxPending: MAX_IN_FLIGHT })

  constructor(
    private readonly store: Store,
    private readonly runId: string,
    private readonly keep: number,
  ) {}

  /** Queues the record of one node; `done` runs once it (and every record before it) has committed. */
  async step(step: number, node: string, update: State, state: State, cursor: Cursor, done: () => void, settle = false): Promise<void> {
    const write = this.snapshotDue()
      ? () => this.writeSnapshot(step, node, state, cursor)
      : () => this.store.appendStep(this.runId, { step, node, update, cursor })
    this.queue.add(write, done)
    if (settle) await this.queue.drain()
    else if (this.queue.full) await this.queue.room()
    if (this.queue.failed) throw this.queue.failure
  }

  /** Writes a full snapshot and waits until it and everything before it has committed. */
  async snapshot(step: number, node: string | null, state: State, cursor: Cursor): Promise<void> {
    this.queue.add(() => this.writeSnapshot(step, node, state, cursor))
    await this.queue.drain()
  }

  /** Waits for every queued record; throws the first write failure. */
  drain(): Promise<void> {
    return this.queue.drain()
  }

  private snapshotDue(): boolean {
    const stats = this.store.checkpointStats(this.runId)
    return stats.snapshotBytes === 0 || stats.updateBytes > stats.snapshotBytes
  }

  private writeSnapshot(step: number, node: string | null, state: State, cursor: Cursor): Promise<void> {
    return this.store.snapshot(this.runId, { step, node, state, cursor }, this.keep)
  }
}
