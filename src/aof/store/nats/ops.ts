/**
 * What the NATS store's scheduler pass (`poll.ts`) uses of the store's internals: a
 * task entry with its revision, the compare-and-set on it, the run entries and the event stream. Kept as one small
 * interface so the pass lives in its own file rather than inside `store.ts`.
 */

import type { AofEvent, EventInput } from '../../protocol/events.ts'
import type { RunArtifact, RunHeartbeat, RunResult } from '../../protocol/schemas/run.ts'
import type { TaskStatus } from '../../protocol/status.ts'
import type { Task } from '../../protocol/task-file.ts'
import type { TransitionOptions } from '../../protocol/transition.ts'
import type { TaskListing } from '../port.ts'

export interface NatsOps {
  /** The store's clock: the server's (the timestamp of a probe write). */
  now(): Promise<Date>
  read(id: string): Promise<{ task: Task; revision: number } | undefined>
  list(statuses?: readonly TaskStatus[]): Promise<TaskListing>
  /** Writes `task` if its entry is still at `revision`; false when someone else wrote it first. */
  cas(task: Task, revision: number): Promise<boolean>
  /** `task` moved to `to` (AOF_TRANSITION when the table does not allow it); the lease is dropped outside in-progress. */
  moved(task: Task, to: TaskStatus, at: Date, options: TransitionOptions): Task
  readRun(id: string): Promise<RunArtifact | undefined>
  readHeartbeat(id: string): Promise<RunHeartbeat | undefined>
  readResult(id: string): Promise<RunResult | undefined>
  /** Writes an entry of the runs bucket (`<ID>.run`, `<ID>.heartbeat`, `<ID>.result`). */
  putRunEntry(key: string, value: unknown): Promise<void>
  /** Moves `<ID>.result` to `<ID>.previous_result` if `stale` says so (unless it changed meanwhile); true when moved. */
  setAsideResult(id: string, stale: (result: RunResult | undefined) => boolean): Promise<boolean>
  /** Publishes events; `ids` fixes their event ids (and so `Nats-Msg-Id`), making a re-publish a dropped duplicate. */
  appendEvents(events: EventInput[], at?: Date, ids?: string[]): Promise<AofEvent[]>
}
