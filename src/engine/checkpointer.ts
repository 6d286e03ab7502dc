/**
 * When to write what, and when it counts (SPEC §3.6).
 *
 * What: after each node only its update is recorded; a full snapshot is written when the bytes of updates since
 * the last snapshot outgrow that snapshot (so replay on resume stays bounded and a run of n steps costs bytes
 * proportional to what its steps changed), and at interrupts and the end. Sizes are JSON-length estimates: cheap,
 * and only the ratio matters.
 *
 * When: writes are pipelined. The run goes on to the next node while earlier records commit, so one fsync covers
 * every record queued meanwhile (group commit) instead of each node waiting ~0.3 ms for its own. A node counts as
 * done only when its record has committed: `step` takes the callback to run then (the engine emits `node_end`
 * there), and after a crash every node whose record had not committed runs again — at-least-once for in-flight
 * work, exactly-once for recorded work. Interrupts, failures and the end drain the pipeline first.
 *
 * Pipelining pays off for nodes that take microseconds. After a slow node (a model call, a plan) the engine waits
 * for the commit instead (`settle`): it costs little next to the node, and events then read in order — a node's
 * `node_end` before the next one's first event.
 */

import type { State } from '../core/util.ts'
import type { Cursor, Store } from '../store/types.ts'

/** Uncommitted records allowed before the run waits for the disk (bounds memory and re-run work after a crash). */
const MAX_IN_FLIGHT = 512

export class Checkpointer {
  private sinceSnapshot = 0
  private snapshotSize: number
  private inFlight: Array<Promise<void>> = []
  private failure: unknown
  /** Completion callbacks run in step order, even when a later record's commit resolves first. */
  private lastDone: Promise<unknown> = Promise.resolve()

  constructor(
    private readonly store: Store,
    private readonly runId: string,
    private readonly keep: number,
    state: State,
  ) {
    this.snapshotSize = approxSize(state)
  }

  /** Queues the record of one node; `done` runs once it has committed. With `settle`, waits for that. */
  async step(step: number, node: string, update: State, state: State, cursor: Cursor, done: () => void, settle = false): Promise<void> {
    this.sinceSnapshot += approxSize(update)
    const write =
      this.sinceSnapshot > this.snapshotSize
        ? this.queueSnapshot(step, node, state, cursor)
        : this.store.appendStep(this.runId, { step, node, update, cursor })
    const previous = this.lastDone
    const ordered = Promise.all([previous, write]).then(done)
    this.lastDone = ordered.catch(() => {})
    this.track(ordered)
    if (settle) await this.drain()
    else if (this.inFlight.length >= MAX_IN_FLIGHT) await this.inFlight[0]
    this.throwIfFailed()
  }

  /** Writes a full snapshot and waits until it and everything before it has committed. */
  async snapshot(step: number, node: string | null, state: State, cursor: Cursor): Promise<void> {
    this.track(this.queueSnapshot(step, node, state, cursor))
    await this.drain()
  }

  /** Waits for every queued record; throws the first write failure. */
  async drain(): Promise<void> {
    while (this.inFlight.length) await Promise.all(this.inFlight)
    this.throwIfFailed()
  }

  private queueSnapshot(step: number, node: string | null, state: State, cursor: Cursor): Promise<void> {
    this.snapshotSize = approxSize(state)
    this.sinceSnapshot = 0
    return this.store.snapshot(this.runId, { step, node, state, cursor }, this.keep)
  }

  private track(p: Promise<void>): void {
    const tracked: Promise<void> = p.then(
      () => void this.inFlight.splice(this.inFlight.indexOf(tracked), 1),
      (e) => {
        this.failure ??= e
        this.inFlight.splice(this.inFlight.indexOf(tracked), 1)
      },
    )
    this.inFlight.push(tracked)
  }

  private throwIfFailed(): void {
    if (this.failure !== undefined) throw this.failure
  }
}

function approxSize(value: unknown): number {
  try {
    return JSON.stringify(value)?.length ?? 0
  } catch {
    return Number.MAX_SAFE_INTEGER
  }
}
