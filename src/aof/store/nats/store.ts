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
 */

import { TeaError } from '../../../core/errors.ts'
import { sortableId } from '../../../core/ids.ts'
import { type AofEvent, type EventInput, stampEvents } from '../../protocol/events.ts'
import { handoffInputsOf } from '../../protocol/handoff.ts'
import {
  DEFAULT_HEARTBEAT_TTL_MS,
  DEFAULT_LEASE_TTL_MS,
  type LeaseOptions,
  extendedLease,
  iso,
  newRun,
  renewedLease,
} from '../../protocol/lease.ts'
import { type CreateTaskInput, newTaskFields } from '../../protocol/new-task.ts'
import type { RunHeartbeat } from '../../protocol/schemas/run.ts'
import type { Lease } from '../../protocol/schemas/task.ts'
import { TASK_STATUSES, type TaskStatus } from '../../protocol/status.ts'
import { type Task, nextStamp, renderTask, taskLease } from '../../protocol/task-file.ts'
import { isTaskId, newTaskId } from '../../protocol/task-id.ts'
import { type TransitionOptions, moved, transitionEvent } from '../../protocol/transition.ts'
import type { RouterQueue, RouterQueueOptions, RunFileName, StoreLease, TaskListing, TaskStore, TaskUnit } from '../port.ts'
import { compareStamps, holdingTask, relativePath } from '../shared.ts'
import { type KV, type NatsOptions, type ObjectStore, connectNats, headers, isConflict, splitUrl } from './client.ts'
import { ttlOption } from '../../protocol/ttl.ts'
import { checkedId, parseEntry, problemOf, publishOnce, routedKey, subjectToken, withLease } from './entries.ts'
import { readEventStream } from './events.ts'
import type { NatsOps } from './ops.ts'
import { payloads } from './payload.ts'
import { natsPoll, natsReclaimExpired } from './poll.ts'
import { openRouterQueue } from './router-queue.ts'
import { ownRun, runsBucket } from './runs-bucket.ts'

export interface NatsStoreOptions extends NatsOptions {
  /** Prefix of every bucket and stream, so one server can hold several projects (default `tea`). */
  project?: string
}

interface Entry {
  task: Task
  revision: number
}

const enc = new TextEncoder()
const dec = new TextDecoder()

/** The key in `p_runs` of each run file (the names the filesystem store uses in `state/runs/<ID>/`). */
const RUN_KEYS: Record<RunFileName, string> = {
  'run.json': 'run',
  'run_heartbeat.json': 'heartbeat',
  'run_result.json': 'result',
  'previous_run_result.json': 'previous_result',
}

/** The JetStream store, with what only it has: the router services' queue (`tea aof route`). */
export interface NatsTaskStore extends TaskStore {
  routerQueue(options?: RouterQueueOptions): Promise<RouterQueue>
}

export async function openNatsStore(options: NatsStoreOptions): Promise<NatsTaskStore> {
  const p = options.project ?? 'tea'
  if (!/^[A-Za-z0-9_-]+$/.test(p))
    throw new TeaError('AOF_INVALID', `a NATS project name is letters, digits, _ and -; received ${JSON.stringify(p)}`)
  const { nc, js, jsm, kvm, objm, maxPayload } = await connectNats(options)
  const shown = splitUrl(options.url).shown
  const where = `${shown}/${p}`
  let tasks: KV
  let runs: KV
  let files: ObjectStore
  try {
    tasks = await kvm.create(`${p}_tasks`, { history: 1, storage: 'file' })
    runs = await kvm.create(`${p}_runs`, { history: 1, storage: 'file' })
    files = await objm.create(`${p}_files`, { storage: 'file' })
    const stream = `${p}_events`
    const subjects = [`${p}.events.>`, `${p}.msg.>`]
    let info
    try {
      info = await jsm.streams.info(stream)
    } catch {
      await jsm.streams.add({ name: stream, subjects, duplicate_window: 120_000_000_000 })
    }
    // A stream made before messages were recorded on it (events only) is given the message subjects.
    if (info && !subjects.every((x) => info.config.subjects?.includes(x))) {
      await jsm.streams.update(stream, { ...info.config, subjects: [...new Set([...(info.config.subjects ?? []), ...subjects])] })
    }
  } catch (e) {
    await nc.close()
    throw new TeaError('NATS_CONNECT', `cannot open the tea buckets on ${shown}: ${(e as Error).message}`)
  }
  const pathOf = (id: string) => `${where}/tasks/${id}`
  const big = payloads(files, `${p}_files`, maxPayload)
  const pack = (text: string) => big.shrink(enc.encode(text))
  const unpack = async (bytes: Uint8Array) => dec.decode(await big.expand(bytes))
  const parsed = new Map<string, Entry>()
  const { now, readJson, putJson, readRun, readHeartbeat, readResult, beat, setAsideResult } = runsBucket(runs, pack, unpack)

  /** The task and its revision; AOF_INVALID (at its key) when the entry is not a valid task. */
  async function read(id: string): Promise<Entry | undefined> {
    if (!isTaskId(id)) throw new TeaError('AOF_INVALID', `expected a task id like TASK-2026-02-09-Ab3dEf7h, received ${JSON.stringify(id)}`)
    const e = await tasks.get(id)
    if (!e || e.operation !== 'PUT') return undefined
    // A revision is never reused, so its parse can be: a worker lists every task before each claim, and parsing the
    // YAML of 200 unchanged entries was half the cost of the listing. Callers never mutate a task they read (every
    // change builds a new one), so the cached object is shared.
    const known = parsed.get(id)
    if (known?.revision === e.revision) return known
    const entry = { task: parseEntry(await unpack(e.value), id, pathOf(id)), revision: e.revision }
    parsed.set(id, entry)
    return entry
  }

  async function mustRead(id: string): Promise<Entry> {
    const e = await read(id)
    if (!e) throw new TeaError('AOF_NOT_FOUND', `task ${id} not found on ${where}`)
    return e
  }

  /** Writes `task` if its entry is still at `revision`: the new revision, or undefined when someone else wrote first. */
  async function cas(task: Task, revision: number): Promise<number | undefined> {
    try {
      return await tasks.update(task.id, await pack(renderTask(task)), revision)
    } catch (e) {
      if (isConflict(e)) return undefined
      throw e
    }
  }

  async function appendEvents(inputs: EventInput[], at?: Date, ids?: string[]): Promise<AofEvent[]> {
    const events = stampEvents(inputs, (at ?? new Date()).toISOString()).map((e, i) => (ids?.[i] ? { ...e, eventId: ids[i] } : e))
    for (const e of events) {
      const subject = `${p}.events.${subjectToken(e.type)}`
      const packed = await pack(JSON.stringify(e))
      await publishOnce(() => js.publish(subject, packed, { msgID: e.eventId }))
    }
    return events
  }

  async function transition(
    id: string,
    to: TaskStatus,
    { leasedTo, ...options }: TransitionOptions & { leasedTo?: string },
  ): Promise<Task> {
    for (;;) {
      const { task, revision } = await mustRead(id)
      if (leasedTo !== undefined) holdingTask(task, id, leasedTo)
      if (task.status === to) return task
      const t = await now()
      const next = moved(task, to, t, options)
      if (!(await cas(next, revision))) continue
      await appendEvents([transitionEvent(task, to, options)], t)
      return next
    }
  }

  async function update(id: string, mutate: (task: Task) => void): Promise<Task> {
    for (;;) {
      const { task, revision } = await mustRead(id)
      const copy: Task = { ...task, data: structuredClone(task.data) }
      mutate(copy)
      copy.data.updatedAt = nextStamp(task, await now())
      if (await cas(copy, revision)) return copy
    }
  }

  async function create(input: CreateTaskInput): Promise<Task> {
    if (input.title.trim() === '') throw new TeaError('AOF_INVALID', 'a task needs a non-empty title')
    if (input.id !== undefined && !isTaskId(input.id)) throw new TeaError('AOF_INVALID', `${JSON.stringify(input.id)} is not a task id`)
    if (input.parentId !== undefined && !(await read(input.parentId))) {
      throw new TeaError('AOF_NOT_FOUND', `parent task ${input.parentId} not found`)
    }
    for (let attempt = 0; attempt < 100; attempt++) {
      const t = await now()
      const id = input.id ?? newTaskId(t)
      const { status, data, body } = newTaskFields(input, id, t)
      const task: Task = { id, status, data, body, path: pathOf(id) }
      try {
        // kv.create fails when the key exists (and was not deleted): two boards never mint the same id.
        await tasks.create(id, await pack(renderTask(task)))
      } catch (e) {
        if (!isConflict(e)) throw e
        if (input.id !== undefined) throw new TeaError('AOF_INVALID', `task ${id} already exists`)
        continue
      }
      const payload = { title: data.title, status }
      await appendEvents([{ type: 'task.created', actor: input.createdBy ?? 'tea', taskId: id, payload }], t)
      return task
    }
    throw new TeaError('INTERNAL', 'could not allocate a free task id after 100 attempts')
  }

  async function list(statuses: readonly TaskStatus[] = TASK_STATUSES): Promise<TaskListing> {
    const out: TaskListing = { tasks: [], problems: [] }
    const keys: string[] = []
    for await (const k of await tasks.keys()) keys.push(k)
    keys.sort()
    // Read in parallel, 64 at a time: a worker lists before every claim, and 200 reads one after the other cost
    // ~250 ms on a loaded 2-core machine, against ~40 ms so.
    const read64 = (id: string) =>
      read(id).then(
        (e) => ({ id, e }),
        (err: unknown) => ({ id, err }),
      )
    for (let i = 0; i < keys.length; i += 64) {
      for (const r of await Promise.all(keys.slice(i, i + 64).map(read64))) {
        if ('err' in r) out.problems.push(problemOf(r.err, pathOf(r.id)))
        else if (r.e && statuses.includes(r.e.task.status)) out.tasks.push(r.e.task)
      }
    }
    return out
  }

  async function lease(id: string, agent: string, options: LeaseOptions = {}): Promise<StoreLease> {
    const ttlMs = ttlOption('ttlMs', options.ttlMs, DEFAULT_LEASE_TTL_MS)
    const hbTtl = ttlOption('heartbeatTtlMs', options.heartbeatTtlMs, DEFAULT_HEARTBEAT_TTL_MS)
    for (;;) {
      const { task, revision } = await mustRead(id)
      if (task.status !== 'ready' && task.status !== 'in-progress') {
        throw new TeaError('AOF_TRANSITION', `task ${id} is ${task.status}; a lease can be taken only on a ready or in-progress task`)
      }
      const t = await now()
      const held = taskLease(task)
      const live = held !== undefined && Date.parse(held.expiresAt) > t.getTime()
      if (live && held.agent !== agent) {
        throw new TeaError('AOF_LOCKED', `task ${id} is leased to ${held.agent} until ${held.expiresAt}; ${agent} cannot take it`)
      }
      const run = await readRun(id)
      const own = task.status === 'in-progress' && live && held.agent === agent ? ownRun(id, held, run) : undefined
      if (own && held) {
        const renewal = renewedLease(held, t, ttlMs)
        const renewed = withLease(task, renewal, t)
        if (!(await cas(renewed, revision))) continue
        const hb = await beat(id, agent, own.runId, hbTtl, t)
        const payload = { expiresAt: renewal.expiresAt, renewCount: renewal.renewCount }
        await appendEvents([{ type: 'lease.renewed', actor: agent, taskId: id, payload }], t)
        return { task: renewed, run: own, heartbeat: hb, renewed: true }
      }
      const runId = sortableId(t.getTime())
      // The lease names its run, in the same write: see `ownRun`.
      const newLease: Lease = { agent, acquiredAt: t.toISOString(), expiresAt: iso(t.getTime() + ttlMs), renewCount: 0, runId }
      const leased =
        task.status === 'ready'
          ? moved({ ...task, data: { ...task.data, lease: newLease } }, 'in-progress', t, { actor: agent })
          : withLease(task, newLease, t)
      // The compare-and-set is the commit point: the run and its first heartbeat are written only by the winner. The
      // events go first, so a server lost before the run entry lands leaves no move unlogged (the scheduler then
      // reclaims the run that never started).
      if (!(await cas(leased, revision))) continue
      const events: EventInput[] = [
        { type: 'lease.acquired', actor: agent, taskId: id, payload: { agent, runId, expiresAt: newLease.expiresAt } },
      ]
      if (task.status === 'ready') events.unshift(transitionEvent(task, 'in-progress', { actor: agent, reason: 'lease_acquired' }))
      await appendEvents(events, t)
      // An earlier run's result is set aside before the new run exists, as the filesystem store does: no session end
      // can then apply it to the new run.
      await setAsideResult(id)
      const started = newRun(id, agent, runId, t.toISOString(), {})
      await putJson(`${id}.run`, started)
      const hb = await beat(id, agent, runId, hbTtl, t)
      return { task: leased, run: started, heartbeat: hb, renewed: false }
    }
  }

  async function heartbeat(id: string, agent: string, options: { ttlMs?: number } = {}): Promise<RunHeartbeat> {
    const ttlMs = ttlOption('ttlMs', options.ttlMs, DEFAULT_HEARTBEAT_TTL_MS)
    for (;;) {
      const { task, revision } = await mustRead(id)
      const run = await readRun(id)
      const l = taskLease(task)
      if (task.status !== 'in-progress' || !run || run.status !== 'running' || (l ? l.agent : run.agentId) !== agent) {
        throw new TeaError(
          'AOF_LOCKED',
          `${agent} does not hold a live run of ${id} (status ${task.status}, lease ${l?.agent ?? 'none'})`,
          {
            details: { lost: true },
          },
        )
      }
      const t = await now()
      const extended = l ? extendedLease(l, t) : undefined
      if (extended && !(await cas(withLease(task, extended, t), revision))) continue
      return beat(id, agent, run.runId, ttlMs, t)
    }
  }

  const ops: NatsOps = {
    now,
    read,
    list,
    cas: async (task, revision) => (await cas(task, revision)) !== undefined,
    moved,
    readRun,
    readHeartbeat,
    readResult,
    putRunEntry: async (key, value) => {
      await putJson(key, value)
    },
    setAsideResult,
    appendEvents,
  }

  const store: NatsTaskStore = {
    kind: 'nats',
    where,
    now,
    get: async (id) => (await read(id))?.task,
    list,
    create,
    transition,
    update,
    lease,
    heartbeat,
    readRun,
    reclaimExpired: () => natsReclaimExpired(ops),
    appendEvents: (events) => appendEvents(events),
    readEvents: (filter = {}) => readEventStream(js, jsm, `${p}_events`, filter, unpack),
    close: async () => {
      // Draining waits for the server; with the server away (a worker stopped during an outage) it would wait for
      // ever, so after 2 s the connection is closed as it is.
      const timer = setTimeout(() => void nc.close(), 2_000)
      await Promise.race([nc.drain().catch(() => {}), nc.closed()])
      clearTimeout(timer)
      // A drain refused while disconnected leaves the client reconnecting (and the process alive).
      if (!nc.isClosed()) await nc.close()
    },
    withTask,
    async readRunFile(id, name) {
      const e = await runs.get(`${checkedId(id)}.${RUN_KEYS[name]}`)
      return e && e.operation === 'PUT' ? unpack(e.value) : undefined
    },
    async writeRunFile(id, name, text) {
      const key = `${checkedId(id)}.${RUN_KEYS[name]}`
      if (text === undefined) await runs.delete(key)
      else await runs.put(key, await pack(text))
    },
    async listFiles(id) {
      return (await readJson<string[]>(`${checkedId(id)}.files`)) ?? []
    },
    async readFile(id, path) {
      return (await files.getBlob(`${checkedId(id)}/${relativePath(path)}`)) ?? undefined
    },
    async writeFile(id, path, bytes) {
      await mustRead(id)
      const rel = relativePath(path)
      await files.putBlob({ name: `${id}/${rel}`, options: { max_chunk_size: big.chunkSize } }, bytes)
      // The task's file list, kept beside its runs: the object store can only list every object of the project.
      for (;;) {
        const e = await runs.get(`${id}.files`)
        const listed: string[] = e && e.operation === 'PUT' ? JSON.parse(await unpack(e.value)) : []
        if (listed.includes(rel)) return
        const value = await pack(JSON.stringify([...listed, rel].sort()))
        try {
          if (e && e.operation === 'PUT') await runs.update(`${id}.files`, value, e.revision)
          else await runs.create(`${id}.files`, value)
          return
        } catch (err) {
          if (!isConflict(err)) throw err
        }
      }
    },
    async putTask(task) {
      for (;;) {
        const e = await tasks.get(checkedId(task.id))
        let existing: Task | undefined
        if (e && e.operation === 'PUT') {
          try {
            existing = parseEntry(await unpack(e.value), task.id, pathOf(task.id))
          } catch {
            // An entry that is not a valid task is replaced by the valid one (it could not be read anyway).
          }
        }
        const verdict = e && e.operation === 'PUT' && !existing ? 'replaced' : compareStamps(existing, task)
        if (verdict === 'same' || verdict === 'kept') return verdict
        const value = await pack(renderTask(task))
        try {
          if (e && e.operation === 'PUT') await tasks.update(task.id, value, e.revision)
          else await tasks.create(task.id, value)
          return verdict
        } catch (err) {
          if (!isConflict(err)) throw err
        }
      }
    },
    async importEvents(events) {
      const known = new Set((await readEventStream(js, jsm, `${p}_events`, {}, unpack)).map((e) => e.eventId))
      let added = 0
      for (const e of events) {
        if (known.has(e.eventId)) continue
        known.add(e.eventId)
        await js.publish(`${p}.events.${subjectToken(e.type)}`, await pack(JSON.stringify(e)), { msgID: e.eventId })
        added++
      }
      return added
    },
    async recordMessage(messageId, type, text, options = {}) {
      const h = headers()
      if (!options.queued) h.set('Tea-Routed-By', 'sender')
      const ack = await js.publish(`${p}.msg.${subjectToken(type)}`, await pack(text), { msgID: messageId, headers: h })
      return ack.duplicate ? 'duplicate' : 'new'
    },
    async markRouted(messageId) {
      await runs.put(routedKey(messageId), '')
    },
    async wasRouted(messageId) {
      const e = await runs.get(routedKey(messageId))
      return e !== null && e.operation === 'PUT'
    },
    routerQueue: (options) => openRouterQueue(js, jsm, p, unpack, options),

    handoffInputs: async (task) => {
      const bytes = await files.getBlob(`${checkedId(task.id)}/inputs/handoff.json`)
      return handoffInputsOf(bytes ? dec.decode(bytes) : undefined)
    },
    poll: (options) => natsPoll(ops, options),
  }
  return store

  /** One unit of work on a task (store-port.ts `withTask`): CAS at the revision read, the unit re-run on a conflict. */
  async function withTask<T>(id: string, fn: (unit: TaskUnit | undefined) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const entry = await read(id)
      if (!entry) return fn(undefined)
      let { task, revision } = entry
      const write = async (next: Task, events: EventInput[], t: Date): Promise<Task> => {
        const rev = await cas(next, revision)
        if (rev === undefined) throw lostRace
        await appendEvents(events, t)
        task = next
        revision = rev
        return next
      }
      const unit: TaskUnit = {
        get task() {
          return task
        },
        async move(to, options) {
          if (task.status === to) return task
          const t = await now()
          return write(moved(task, to, t, options), [transitionEvent(task, to, options)], t)
        },
        async update(mutate) {
          const copy: Task = { ...task, data: structuredClone(task.data) }
          mutate(copy)
          const t = await now()
          copy.data.updatedAt = nextStamp(task, t)
          return write(copy, [], t)
        },
        peek: async (other) => (await read(other))?.task,
      }
      try {
        return await fn(unit)
      } catch (e) {
        if (e !== lostRace) throw e
        if (attempt >= 50) throw new TeaError('AOF_LOCKED', `task ${id} kept changing under this update (50 attempts); try again`)
      }
    }
  }
}

/** Thrown inside a unit of work when its compare-and-set lost; `withTask` runs the unit again. */
const lostRace = new Error('lost a compare-and-set race')
