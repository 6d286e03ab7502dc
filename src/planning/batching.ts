/**
 * When the scheduler hands several ready subtasks to one worker at once (a batch, pool/batch.ts), and how many.
 * A hand-over to a worker costs ~50–250 µs however short the subtask (the worker sits idle meanwhile), so for
 * subtasks of a few µs to a few hundred µs it was most of their cost, and for a few ms still a few %; for subtasks of
 * seconds (model calls) it is noise, and batching them would only make a subtask wait behind its batch-mates. So
 * batches are formed only once the subtasks are seen to be short (a moving average of how long they took), only in
 * parallel runs (a sequential run threads each subtask's state changes into the next one's input, which must
 * therefore not be fixed in advance), and of about 20 ms of work at most, shared fairly between the slots. A slot
 * left idle while a batch still holds unstarted subtasks takes some of them back (the scheduler's `steal`), so a
 * batch-mate that runs long does not hold up the rest.
 */

import type { Subtask, SubtaskInput, SubtaskOutput } from './types.ts'

/** Subtasks shorter than this (ms, on average) are batched: a hand-over costs up to a few % of their time. */
const SHORT_MS = 10
/** A batch holds about this much work (ms). An idle slot takes back what has not started, so it may be generous. */
const BATCH_MS = 20
/** Subtasks in a batch at most. */
const MAX_BATCH = 64

/** How big batches are: fed how long subtasks took, asked how many ready ones the next free slot takes. */
export interface BatchPolicy {
  record(ms: number): void
  size(ready: number, slots: number): number
}

export class BatchSizer implements BatchPolicy {
  /** Moving average of how long a subtask's first attempt took (ms); undefined until one has finished. */
  private average: number | undefined

  record(ms: number): void {
    this.average = this.average === undefined ? ms : 0.8 * this.average + 0.2 * ms
  }

  /** How many of `ready` subtasks the next free slot takes, with `slots` slots in all. */
  size(ready: number, slots: number): number {
    if (slots < 2 || ready < 2 || this.average === undefined || this.average >= SHORT_MS) return 1
    const fair = Math.ceil(ready / slots)
    const byTime = Math.floor(BATCH_MS / Math.max(this.average, 0.01))
    return Math.max(1, Math.min(fair, byTime, MAX_BATCH))
  }
}

/** A batch member's first attempt, as the scheduler's `runBatch` hook reports it. */
export type FirstAttempt = { ok: true; out: SubtaskOutput } | { ok: false; error: unknown }

export interface BatchEvents {
  /** Member i (> 0) has started; member 0 starts with the call. */
  started(i: number): void
  /** A started member's first attempt has ended. */
  settled(i: number, outcome: FirstAttempt): void
}

export interface SubtaskBatch {
  /** Takes back the members from `from` on that have not started; returns them. */
  withdraw(from?: number): number[]
  /** Resolves when the batch is over, with the members that never started and were not withdrawn. */
  done: Promise<number[]>
}

export interface BatchMember {
  subtask: Subtask
  input: SubtaskInput
}
