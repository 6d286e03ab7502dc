/**
 * The task-store port (docs/fleet.md): what AOF/1 needs from wherever its tasks live, in the protocol's own types.
 * Two backends implement it — the filesystem store (`fs/`, the default: status folders, file locks,
 * `events/*.jsonl`) and the NATS JetStream store (`nats/`: KV entries moved by revision compare-and-set, events on a
 * stream). Every read-modify-write either applies to the version it read or is retried against the newer one, so two
 * processes — or two boards — never both claim, both lease or both complete a task. The roles (`../roles/`: the
 * worker's claim and report, the router, the scheduler, session end) are written once over this port and handed a
 * backend. `test/aof/store/store-contract.ts` states the behaviour once and runs against both.
 */

import type { Issue } from '../../core/issues.ts'
import type { AofEvent, EventFilter, EventInput } from '../protocol/events.ts'
import type { HeartbeatOptions, LeaseOptions } from '../protocol/lease.ts'
import type { CreateTaskInput } from '../protocol/new-task.ts'
import type { RunArtifact, RunHeartbeat, RunResult } from '../protocol/schemas/run.ts'
import type { TaskStatus } from '../protocol/status.ts'
import type { Task } from '../protocol/task-file.ts'
import type { TransitionOptions } from '../protocol/transition.ts'

export interface TaskListing {
  tasks: Task[]
  /** Entries that could not be read, each at `where.file`; the other tasks are listed regardless. */
  problems: Array<Issue & { where: { file: string } }>
}

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
  heartbeat(id: string, agent: string, options?: HeartbeatOptions): Promise<RunHeartbeat>
  readRun(id: string): Promise<RunArtifact | undefined>
  appendEvents(events: EventInput[]): Promise<AofEvent[]>
  readEvents(filter?: EventFilter): Promise<AofEvent[]>
  close(): Promise<void>

  // --- messages, run files, companion files, copying (`tea aof send|session-end|export|import`, issue 17) ---

  /**
   * Runs `fn` as one unit of work on task `id` (the router's handlers): on the filesystem under the task's lock;
   * on NATS optimistically — every write is a compare-and-set at the revision the unit read, and when another
   * writer got there first the unit is run again on the newer version (events it logged before the lost write are
   * logged again: a unit logs facts, not counters). `fn` gets `undefined` when there is no task.
   */
  withTask<T>(id: string, fn: (unit: TaskUnit | undefined) => Promise<T>): Promise<T>
  /** The text of a run file (run.json, run_heartbeat.json, run_result.json, previous_run_result.json) as stored. */
  readRunFile(id: string, name: RunFileName): Promise<string | undefined>
  /** Writes a run file's text; `undefined` removes it. */
  writeRunFile(id: string, name: RunFileName, text: string | undefined): Promise<void>
  /**
   * The task's companion files (`inputs/…`, `work/…`, `outputs/…`), as paths relative to its folder, sorted; none
   * for a task that does not exist.
   */
  listFiles(id: string): Promise<string[]>
  /** A companion file's bytes; undefined when it (or its task) does not exist. */
  readFile(id: string, path: string): Promise<Uint8Array | undefined>
  /** Writes a companion file; AOF_NOT_FOUND when the task does not exist. */
  writeFile(id: string, path: string, bytes: Uint8Array): Promise<void>
  /**
   * Writes a task as it is (an import): `created` when absent, `replaced` when the stored one is older
   * (`updatedAt`), `same` when it has the same `updatedAt`, `kept` when the stored one is newer (left alone).
   */
  putTask(task: Task): Promise<'created' | 'replaced' | 'same' | 'kept'>
  /** Appends events as they are (ids and times kept), skipping every event id the store already holds; how many. */
  importEvents(events: AofEvent[]): Promise<number>
  /**
   * Records a protocol message before it is routed (NATS: on the stream `<p>.msg.<type>`, `Nats-Msg-Id` =
   * `messageId`). `duplicate` when the store has already seen that id; `unrecorded` on the filesystem, which keeps
   * no message log (and whose receipt events therefore carry no message id). A message the sender routes itself
   * carries the header `Tea-Routed-By: sender`, which a router service (`tea aof route`) skips; `queued` leaves
   * it out, so the service routes it (`tea aof send --no-route`).
   */
  recordMessage(messageId: string, type: string, text: string, options?: { queued?: boolean }): Promise<'new' | 'duplicate' | 'unrecorded'>
  /**
   * Notes that message `messageId` has been routed to its end: its effect is committed (NATS: the key
   * `_routed.<sha256 of the id>` in `<p>_runs`; the filesystem keeps no message log and notes nothing). Written
   * after the effect, so a router that dies in between leaves the message unmarked and it is routed again — which
   * every handler survives (a repeated report finds no step left, a Work Log line is not appended twice).
   */
  markRouted(messageId: string): Promise<void>
  /** Whether `markRouted(messageId)` happened: a message routed again is then a duplicate. False on the filesystem. */
  wasRouted(messageId: string): Promise<boolean>

  // --- what `tea worker` and the scheduler need (docs/fleet.md, "Workers on the port"); the worker's report,
  // session end and the scheduler's pass are roles over the rest (roles/worker-report.ts, roles/session-end.ts,
  // roles/scheduler-pass.ts) ---

  /** The handoff inputs a `handoff.request` left for the task (`inputs/handoff.json`), or `{}`. */
  handoffInputs(task: Task): Promise<Record<string, unknown>>
  /**
   * Moves the task's `run_result.json` to `previous_run_result.json` if `stale(result, run)` says so, safely against
   * a result written meanwhile (on the filesystem under the task's lock, with the task still in progress; on NATS a
   * delete conditional on the revision read). True when it did.
   */
  setAsideResult(id: string, stale: (result: RunResult, run: RunArtifact | undefined) => boolean): Promise<boolean>
}

export const RUN_FILES = ['run.json', 'run_heartbeat.json', 'run_result.json', 'previous_run_result.json'] as const
export type RunFileName = (typeof RUN_FILES)[number]

/** One task inside `TaskStore.withTask`: the version read, and the writes made on it (each logs its event). */
export interface TaskUnit {
  /** The task as the unit last wrote or read it. */
  readonly task: Task
  move(to: TaskStatus, options: TransitionOptions): Promise<Task>
  /**
   * Several moves as one write (an outcome's path: in-progress → review → done): on NATS one compare-and-set, so
   * the task is never seen half way; on the filesystem the moves one after the other under the lock.
   */
  moves(path: ReadonlyArray<{ to: TaskStatus; options: TransitionOptions }>): Promise<Task>
  update(mutate: (task: Task) => void): Promise<Task>
  /** Another task, read without its lock (a unit never waits on a second task: no deadlock). */
  peek(id: string): Promise<Task | undefined>
}

// --- the router services' queue (`tea aof route`; a store that keeps a message log offers one: NATS) ---

export interface RouterQueueOptions {
  /** How long a message may be in one router's hands before the server gives it to another (default 30 s). */
  ackWaitMs?: number
  /** How many times a message is handed out in all (default 5). */
  maxDeliver?: number
}

/** One message handed to this router: ack it once its effect is committed. */
export interface QueuedMessage {
  /** The message as recorded (a `$ref` to an oversized one resolved); undefined when it cannot be read (`error`). */
  text: string | undefined
  error?: string
  /** `Nats-Msg-Id`, when the publisher gave one (`tea aof send` does: the message id). */
  messageId?: string
  /** The sender routes it itself (`Tea-Routed-By: sender`); a router service only acks it. */
  routedBySender: boolean
  /** 1 the first time it is handed out, 2 the next… */
  delivery: number
  maxDeliver: number
  /** How many messages the consumer had not handed out yet when it handed out this one. */
  pendingAfter: number
  /** Its sequence number in the stream (for log lines). */
  seq: number
  subject: string
  /** The message type, from the subject (`<p>.msg.<type>`). */
  type: string
  ack(): Promise<void>
  /**
   * Gives it back, to be handed out again after `delayMs`. The router holds it meanwhile (telling the server it is
   * still working) and gives it back at once when the delay is over: nats-server 2.9's own delayed redelivery was
   * seen to come back late or not at all on a loaded machine, and a held message counts as in hand, so a router
   * that drains the queue (`--once`) waits for it.
   */
  nak(delayMs: number): void
  /** Never hand it out again (a message that keeps failing, at its last delivery). */
  term(): void
  /**
   * Keeps it in this router's hands (tells the server, every third of the ack wait, that it is still being handled)
   * until the returned function is called: a long unit of work must not outlast the ack wait and be handed out twice.
   */
  keepInHand(): () => void
}

export interface RouterQueue {
  readonly consumer: string
  readonly ackWaitMs: number
  readonly maxDeliver: number
  /** The next message, waiting up to `waitMs` (at least, and by default, 2 s); undefined when none came. */
  next(waitMs?: number): Promise<QueuedMessage | undefined>
  /** Messages not handed out yet, and messages handed out and not acked (in some router's hands). */
  backlog(): Promise<{ pending: number; inHand: number }>
  /** Gives back at once every message held for a delayed retry (the router is stopping). */
  release(): void
}
