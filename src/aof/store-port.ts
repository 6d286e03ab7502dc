/**
 * The task-store port (docs/fleet.md): what AOF/1 needs from wherever its tasks live. Two adapters implement it —
 * the filesystem store (`store-fs.ts`, the default: status folders, file locks, `events/*.jsonl`) and the NATS
 * JetStream store (`nats/store.ts`: KV entries moved by revision compare-and-set, events on a stream). Every
 * read-modify-write either applies to the version it read or is retried against the newer one, so two processes —
 * or two boards — never both claim, both lease or both complete a task. `test/aof/store-contract.ts` states the
 * behaviour once and runs against both.
 */

import type { AofEvent, EventInput } from './events.ts'
import type { LeaseOptions } from './lease.ts'
import type { RunArtifact, RunHeartbeat } from './schemas/run.ts'
import type { TaskStatus } from './status.ts'
import type { CreateTaskInput } from './task-create.ts'
import type { Task } from './task-file.ts'
import type { TaskListing } from './task-store.ts'
import type { TransitionOptions } from './task-transition.ts'
import type { PollOptions, PollResult } from './scheduler.ts'
import type { CompletionPayload } from './worker-completion.ts'
import type { ReportTarget, WorkerReport } from './worker-report.ts'

export interface StoreLease {
  task: Task
  run: RunArtifact
  heartbeat: RunHeartbeat
  renewed: boolean
}

/** A lease the scheduler took back: the task went to `ready` and its run was marked expired. */
export interface ReclaimedLease {
  taskId: string
  agentId: string
  runId?: string
}

export interface TaskStore {
  /** `fs` or `nats`: for messages and for tests that are about one adapter only. */
  readonly kind: 'fs' | 'nats'
  /** Where the store is, for messages: the data dir, or the server URL and project. */
  readonly where: string
  /** The store's clock: the local one on the filesystem, the server's on NATS (boards' clocks disagree). */
  now(): Promise<Date>
  get(id: string): Promise<Task | undefined>
  list(statuses?: readonly TaskStatus[]): Promise<TaskListing>
  create(input: CreateTaskInput): Promise<Task>
  /**
   * Moves the task. With `leasedTo`, only out of `in-progress` under that agent's lease (else AOF_LOCKED with
   * `details.lost`): a worker's completion, which must never land on a task reclaimed and leased to another.
   */
  transition(id: string, to: TaskStatus, options: TransitionOptions & { leasedTo?: string }): Promise<Task>
  update(id: string, mutate: (task: Task) => void): Promise<Task>
  /** Takes or renews `agent`'s lease; AOF_LOCKED when another agent holds a live one. */
  lease(id: string, agent: string, options?: LeaseOptions): Promise<StoreLease>
  /** One heartbeat; AOF_LOCKED with `details.lost` when `agent` no longer holds a live run of the task. */
  heartbeat(id: string, agent: string, options?: { ttlMs?: number }): Promise<RunHeartbeat>
  readRun(id: string): Promise<RunArtifact | undefined>
  /** Takes back every in-progress task whose heartbeat (else lease) expired by the store's clock; each once. */
  reclaimExpired(): Promise<ReclaimedLease[]>
  appendEvents(events: EventInput[]): Promise<AofEvent[]>
  readEvents(filter?: { taskId?: string; type?: string }): Promise<AofEvent[]>
  close(): Promise<void>

  // --- what `tea worker` and the scheduler need (docs/fleet.md, "Workers on the port") ---

  /** The handoff inputs a `handoff.request` left for the task (`inputs/handoff.json`), or `{}`. */
  handoffInputs(task: Task): Promise<Record<string, unknown>>
  /**
   * The worker's `completion.report`, applied only while the task is still in progress in `target.aofRunId` (a
   * compare-and-set on the task as it was read with that run): a report from a run that was reclaimed is refused
   * (`lost`), never applied twice.
   */
  reportCompletion(target: ReportTarget, payload: CompletionPayload): Promise<WorkerReport>
  /** The scheduler's pass (`tea aof poll`): stale runs reclaimed — or their written result applied — each once. */
  poll(options?: PollOptions): Promise<PollResult>
}
