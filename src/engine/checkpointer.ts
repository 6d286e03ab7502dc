/**
 * When to write what (SPEC §3.6). After each node the update alone is recorded; a full snapshot is written when
 * the bytes of updates since the last snapshot outgrow that snapshot, so replay work on resume stays bounded and
 * a run of n steps costs bytes proportional to what its steps changed. Snapshots also mark interrupts and the end.
 * Sizes are JSON-length estimates: cheap, and only the ratio matters.
 */

import type { State } from '../core/util.ts'
import type { Cursor, Store } from '../store/types.ts'

export class Checkpointer {
  private sinceSnapshot = 0
  private snapshotSize: number

  constructor(
    private readonly store: Store,
    private readonly runId: string,
    private readonly keep: number,
    state: State,
  ) {
    this.snapshotSize = approxSize(state)
  }

  async step(step: number, node: string, update: State, state: State, cursor: Cursor): Promise<void> {
    this.sinceSnapshot += approxSize(update)
    if (this.sinceSnapshot > this.snapshotSize) return this.snapshot(step, node, state, cursor)
    await this.store.appendStep(this.runId, { step, node, update, cursor })
  }

  async snapshot(step: number, node: string | null, state: State, cursor: Cursor): Promise<void> {
    await this.store.snapshot(this.runId, { step, node, state, cursor }, this.keep)
    this.snapshotSize = approxSize(state)
    this.sinceSnapshot = 0
  }
}

function approxSize(value: unknown): number {
  try {
    return JSON.stringify(value)?.length ?? 0
  } catch {
    return Number.MAX_SAFE_INTEGER
  }
}
