/**
 * The NATS JetStream adapter of the task-store port (docs/fleet.md). Layout, for project prefix `p`:
 *   - KV bucket `p_tasks`: key `<TASK-ID>`, value the task file's text (YAML frontmatter + body, exactly what the
 *     filesystem store writes, `status` in the frontmatter), so the same parser and validation read both;
 *   - KV bucket `p_runs`: `<TASK-ID>.run`, `.heartbeat`, `.result`, `.previous_result` (the run files), `.files`
 *     (the list of the task's companion files), `_clock`, and `_routed.<sha256 of a message id>` (a message routed);
 *   - stream `p_events` on `p.events.>`: one AofEvent a message, `Nats-Msg-Id` = its event id (duplicates dropped),
 *     and on `p.msg.>`: the protocol messages `tea aof send` recorded, `Nats-Msg-Id` = the message's id (a router
 *     service reads them through the durable consumer `p_router`: router-queue.ts);
 *   - object store `p_files`: companion files as `<TASK-ID>/<path>`, and values too large for one message
 *     (payload.ts: the entry or message then holds a `{"$ref": …}`).
 * Every change of a task is a compare-and-set on the revision it was decided on (`kv.update(key, value, rev)`); a
 * lost race re-reads and decides again, so two boards never both claim, lease, complete or reclaim a task. Times
 * that decide expiry come from the server (`now()`: the timestamp of a probe write), never from the board alone.
 *
 * This file puts the store together; each part is a module of functions over one `NatsContext` (context.ts): the
 * task entries (task-entry.ts, tasks.ts), leases and heartbeats (leases.ts), units of work (unit.ts), run and
 * companion files (files.ts), events (events.ts), messages (messages.ts); the scheduler pass is both stores' one (../shared.ts).
 */

import type { RouterQueue, RouterQueueOptions, TaskStore } from '../port.ts'
import { type NatsContext, type NatsStoreOptions, openContext } from './context.ts'
import { appendEvents, importEvents, readEvents } from './events.ts'
import { handoffInputs, listFiles, readFile, readRunFile, writeFile, writeRunFile } from './files.ts'
import { heartbeat, lease } from './leases.ts'
import { markRouted, recordMessage, routerQueue, wasRouted } from './messages.ts'
import { read } from './task-entry.ts'
import { create, list, putTask, transition, update } from './tasks.ts'
import { withTask } from './unit.ts'

/** The JetStream store, with what only it has: the router services' queue (`tea aof route`). */
export interface NatsTaskStore extends TaskStore {
  routerQueue(options?: RouterQueueOptions): Promise<RouterQueue>
}

export async function openNatsStore(options: NatsStoreOptions): Promise<NatsTaskStore> {
  const ctx = await openContext(options)
  const { now, readRun } = ctx.bucket
  const store: NatsTaskStore = {
    kind: 'nats',
    where: ctx.where,
    now,
    get: async (id) => (await read(ctx, id))?.task,
    list: (statuses) => list(ctx, statuses),
    create: (input) => create(ctx, input),
    transition: (id, to, o) => transition(ctx, id, to, o),
    update: (id, mutate) => update(ctx, id, mutate),
    lease: (id, agent, o) => lease(ctx, id, agent, o),
    heartbeat: (id, agent, o) => heartbeat(ctx, id, agent, o),
    readRun,
    appendEvents: (events) => appendEvents(ctx, events),
    readEvents: (filter) => readEvents(ctx, filter),
    close: () => close(ctx),
    withTask: (id, fn) => withTask(ctx, id, fn),
    readRunFile: (id, name) => readRunFile(ctx, id, name),
    writeRunFile: (id, name, text) => writeRunFile(ctx, id, name, text),
    listFiles: (id) => listFiles(ctx, id),
    readFile: (id, path) => readFile(ctx, id, path),
    writeFile: (id, path, bytes) => writeFile(ctx, id, path, bytes),
    putTask: (task) => putTask(ctx, task),
    importEvents: (events) => importEvents(ctx, events),
    recordMessage: (messageId, type, text, o) => recordMessage(ctx, messageId, type, text, o),
    markRouted: (messageId) => markRouted(ctx, messageId),
    wasRouted: (messageId) => wasRouted(ctx, messageId),
    routerQueue: (o) => routerQueue(ctx, o),
    handoffInputs: (task) => handoffInputs(ctx, task),
    // The delete is conditional on the revision read: a result written meanwhile (the current run's) stays.
    setAsideResult: async (id, stale) => {
      const run = await readRun(id)
      return ctx.bucket.setAsideResult(id, (result) => result !== undefined && stale(result, run))
    },
  }
  return store
}

async function close({ nc }: NatsContext): Promise<void> {
  // Draining waits for the server; with the server away (a worker stopped during an outage) it would wait for
  // ever, so after 2 s the connection is closed as it is.
  const timer = setTimeout(() => void nc.close(), 2_000)
  await Promise.race([nc.drain().catch(() => {}), nc.closed()])
  clearTimeout(timer)
  // A drain refused while disconnected leaves the client reconnecting (and the process alive).
  if (!nc.isClosed()) await nc.close()
}
