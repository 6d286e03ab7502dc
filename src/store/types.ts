/**
 * The store port: runs, checkpoints, plans, memory and collections (collections/index.ts). Two implementations honour it, `memory-store.ts` (tests,
 * `--data-dir` unset in library use) and `lmdb-store.ts` (everything the CLI does), and one contract suite runs
 * against both (test/store/contract.ts).
 *
 * Checkpoints are incremental (SPEC §3.6): after a node, `appendStep` records that node's update, not the whole
 * state. `snapshot` records a full state; it is written when the updates since the last snapshot outweigh it, at
 * interrupts and at the end. `loadLatest` rebuilds the state from the newest snapshot plus the updates after it.
 */

import type { State } from '../core/util.ts'
import type { CollectionTable } from './collections/index.ts'

export type RunStatus = 'running' | 'interrupted' | 'failed' | 'completed' | 'cancelled'

export interface RunRecord {
  id: string
  agent: string
  /** Absolute path of the agent file, so `tea resume` can reload it. */
  agentPath: string
  /** Hash of the agent file's text at start; resume warns when it changed. */
  agentHash: string
  /**
   * The language each `run:` body that names none was given at start (agent/run-language.ts), by node name (or
   * `node.steps[i]`): a resume loads the file with them, so an edit cannot switch a body's language mid-run.
   */
  runLanguages?: Record<string, string>
  status: RunStatus
  /** The node that ran last (or is paused at). */
  node: string | null
  step: number
  createdAt: number
  updatedAt: number
  error?: { code: string; message: string; node?: string }
  /** Process running it while `running`, so a resume can tell a crashed run from a live one. */
  pid?: number
  /** That process's start time (core/process.ts), so a reused pid is not taken for the owner. */
  pidStart?: number
  /**
   * Written by `tea serve` before it resumes the run by itself after its process died (cli/serve/auto-resume.ts):
   * how often in a row that process died with no node committed in between, at which checkpoint step, and which
   * serve process resumed it. Another owner since (a person's `tea resume`) or a later step starts the count again.
   */
  autoResume?: { deaths: number; step: number; pid: number; pidStart?: number }
}

/** Where a run goes next when resumed. */
export interface Cursor {
  /** The node to run next, or `__end__`. */
  next: string
  /** True when `next` paused with `interrupt: before` and must run (not pause again) on resume. */
  skipInterruptBefore?: boolean
}

export interface StepEntry {
  step: number
  /** The node that produced the update. */
  node: string
  /** What the node changed (top-level keys set; shallow merge). */
  update: State
  cursor: Cursor
}

export interface SnapshotEntry {
  step: number
  node: string | null
  state: State
  cursor: Cursor
}

export interface LoadedCheckpoint {
  step: number
  node: string | null
  state: State
  cursor: Cursor
}

export interface Store extends CollectionTable {
  // runs
  /**
   * Creates a run; RUN_EXISTS when the id is taken. With `first`, the run's first snapshot is written in the same
   * commit (one fsync for both), and neither is written when the id is taken.
   */
  createRun(run: RunRecord, first?: SnapshotEntry): Promise<void>
  getRun(id: string): Promise<RunRecord | undefined>
  updateRun(id: string, patch: Partial<Omit<RunRecord, 'id'>>): Promise<void>
  listRuns(): Promise<RunRecord[]>
  /** Deletes the run with its checkpoints and plans. */
  deleteRun(id: string): Promise<void>
  /**
   * Takes a run atomically, across threads and processes: reads its record, lets `take` decide (it returns the
   * record to write, or throws — e.g. RUN_NOT_RESUMABLE naming a live owner), and writes it, all in one
   * transaction, so two processes can never both take the same run. Resolves once the record has committed.
   */
  claimRun(id: string, take: (current: RunRecord | undefined) => RunRecord): Promise<RunRecord>

  // checkpoints
  appendStep(runId: string, entry: StepEntry): Promise<void>
  /** `keep` overrides StoreOptions.keepSnapshots for this run (`settings.checkpoint.keep`). */
  snapshot(runId: string, entry: SnapshotEntry, keep?: number): Promise<void>
  /** Throws CHECKPOINT_CORRUPT naming the run when a record cannot be decoded. */
  loadLatest(runId: string): Promise<LoadedCheckpoint | undefined>
  /** Bytes of checkpoint records held for a run (for `tea runs --json` and benchmarks). */
  checkpointBytes(runId: string): Promise<number>
  /**
   * Bytes of the updates since the newest snapshot and of that snapshot, for the engine's "snapshot when the
   * updates outweigh the state" rule (`snapshotDue` in records.ts). Synchronous and cheap: both stores keep these
   * figures in memory.
   */
  checkpointStats(runId: string): { updateBytes: number; snapshotBytes: number; updates: number }

  // plans: one header per plan, one record per subtask; finishing a subtask writes that record only
  putPlanHeader(runId: string, planId: string, header: Record<string, unknown>): Promise<void>
  putSubtask(runId: string, planId: string, subtaskId: string, record: Record<string, unknown>): Promise<void>
  getPlan(
    runId: string,
    planId: string,
  ): Promise<{ header: Record<string, unknown>; subtasks: Map<string, Record<string, unknown>> } | undefined>

  // memory: namespace + key → value, survives restarts
  memoryPut(namespace: string, key: string, value: unknown, ttlMs?: number): Promise<void>
  memoryGet(namespace: string, key: string): Promise<{ found: boolean; value?: unknown }>
  memoryDelete(namespace: string, key: string): Promise<boolean>
  memoryList(namespace: string, prefix?: string): Promise<string[]>

  /** Waits until every write so far has committed to disk. */
  flush(): Promise<void>
  close(): Promise<void>
}

export interface StoreOptions {
  /** Snapshots to keep per run (`settings.checkpoint.keep`, default 3); older ones and their updates go. */
  keepSnapshots?: number
  /** Clock for memory TTLs (tests); default Date.now. */
  now?: () => number
}
