/**
 * `Pool.runBatch`, the caller's side: several tasks handed to one worker at once, run there one after the other
 * (protocol.ts, BatchTask). Handing a task to a worker thread that sleeps waiting for work costs the main thread
 * tens of µs (a postMessage and a futex wake), and tinypool's worker reads its memory use (`process.memoryUsage()`,
 * ~10 µs, with no option to turn it off) after every task; for short subtasks these were most of their cost. A
 * batch pays them once.
 *
 * Every member either starts and then settles exactly once (`onSettle`), or never starts and comes back to the
 * caller. Member 0 starts with the call; member i > 0 when the worker reports that it claimed it (`onStart`). A
 * member that never started comes back through `withdraw` (the caller took it back) or `done` (the batch ended
 * before it: a member failed or ran over its time limit, the caller cancelled, the worker died). Each member keeps
 * its own time limit, counted from its start and kept as `Pool.run` keeps it (time-limit.ts); a worker terminated
 * for one member leaves the members after it unstarted. (When the caller cancels, a member the worker had just
 * taken, its start not yet reported, counts as not started: it runs again on resume, as work in flight does.)
 */

import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads'
import { TeaError } from '../core/errors.ts'
import { cancelled } from '../core/signals.ts'
import type { AbortHandle } from './abort-handle.ts'
import { abortHandle } from './abort-handle.ts'
import type { HostMethods } from './host.ts'
import { hostHandler } from './host.ts'
import type { BatchTask, MemberReport, PoolTask, TaskReply } from './protocol.ts'
import { BATCH, CLAIMED, UNCLAIMED, WITHDRAWN, deserializeError } from './protocol.ts'
import { timedOut, timeLimit } from './time-limit.ts'

export interface BatchMember {
  task: PoolTask
  /** The member's own time limit (ms), from its start, as RunOptions.timeoutMs. */
  timeoutMs?: number
}

export interface MemberResult {
  value: unknown
  stateUpdate?: Record<string, unknown>
  removed?: string[]
}

export type MemberOutcome = { ok: true; result: MemberResult } | { ok: false; error: unknown }

export interface BatchOptions {
  signal?: AbortSignal
  /** Host methods, shared by every member. */
  host?: HostMethods
  /** Member `member` (> 0) has started. */
  onStart(member: number): void
  /** A started member has finished: its result, its error, or a cancel signal when the caller's signal fired. */
  onSettle(member: number, outcome: MemberOutcome): void
}

export interface PoolBatch {
  /** Takes back the members from `from` on that have not started; returns them. They will not start. Once the
   * batch is over (`done` has its list), it takes nothing. */
  withdraw(from?: number): number[]
  /** Resolves once the worker is done with the batch, with the members that never started and were not withdrawn. */
  readonly done: Promise<number[]>
}

/** Hands a batch task to a worker (tinypool's `run`, with the batch's port transferred). */
export type SendBatch = (task: BatchTask, signal: AbortHandle) => Promise<TaskReply>

export function runBatch(send: SendBatch, members: readonly BatchMember[], options: BatchOptions): PoolBatch {
  const n = members.length
  const { signal } = options
  const limits = members.map((m) => timeLimit(m.task, m.timeoutMs))
  const claims = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT * n))
  claims[0] = CLAIMED
  /** 1: taken back by the caller, 2: by the batch itself (reported by `done`). */
  const taken = new Uint8Array(n)
  let current = 0 // the member running now; -1 when none
  let started = 1 // members below this have started
  let expired = -1 // the member whose time limit terminated the worker
  let ending = false // the worker was stopped: a report that it claimed a member does not start that member
  let over = false // `done` has its list: nothing more is taken back
  let timer: NodeJS.Timeout | undefined
  const abort = abortHandle()
  const { port1, port2 } = new MessageChannel()
  const host = hostHandler(port1, options.host ?? {})

  const takeBack = (from: number, by: 1 | 2): number[] => {
    const out: number[] = []
    if (over) return out
    for (let j = Math.max(from, started); j < n; j++) {
      if (taken[j] !== 0 || Atomics.compareExchange(claims, j, UNCLAIMED, WITHDRAWN) !== UNCLAIMED) continue
      taken[j] = by
      out.push(j)
    }
    return out
  }
  const begin = (i: number): void => {
    current = i
    started = i + 1
    clearTimeout(timer)
    const hard = limits[i]!.hard
    timer = hard === undefined ? undefined : setTimeout(() => expire(i), hard)
    if (i > 0) options.onStart(i)
  }
  const settle = (i: number, outcome: MemberOutcome): void => {
    if (current !== i) return
    current = -1
    clearTimeout(timer)
    timer = undefined
    options.onSettle(i, outcome)
  }
  const onMessage = (msg: unknown): void => {
    if (!isReport(msg)) {
      host(msg)
      return
    }
    settle(msg.member, outcomeOf(msg.reply))
    if (msg.next && !ending && msg.member + 1 < n) begin(msg.member + 1)
  }
  // Reports posted before the worker finished (or was terminated) are in the port's queue already.
  const drain = (): void => {
    for (let m = receiveMessageOnPort(port1); m !== undefined; m = receiveMessageOnPort(port1)) onMessage(m.message)
  }
  const expire = (i: number): void => {
    timer = undefined
    takeBack(i + 1, 2)
    drain()
    if (current !== i) return // it finished just now
    if (i + 1 < n && Atomics.load(claims, i + 1) === CLAIMED) {
      // It finished in time and the worker took the next member: the report is on its way.
      timer = setTimeout(() => expire(i), 1)
      return
    }
    expired = i
    abort.abort()
  }
  const onCancel = (): void => {
    takeBack(0, 2)
    try {
      port1.postMessage({ abort: true })
    } catch {
      // the batch has ended
    }
    abort.abort()
  }

  port1.on('message', onMessage)
  begin(0)
  const tasks = members.map((m, i) => (limits[i]!.soft === undefined ? m.task : { ...m.task, timeoutMs: limits[i]!.soft }))
  const done = (async (): Promise<number[]> => {
    // Callbacks never run before the caller holds the batch.
    await undefined
    try {
      if (signal?.aborted) throw cancelled()
      signal?.addEventListener('abort', onCancel, { once: true })
      const reply = await send({ kind: BATCH, tasks, claims, port: port2 }, abort)
      drain()
      if (current !== -1) {
        const error = reply.ok ? new TeaError('POOL_ERROR', 'a batch ended without reporting a member') : deserializeError(reply.error)
        settle(current, { ok: false, error })
      }
    } catch (e) {
      ending = true
      takeBack(0, 2)
      drain()
      if (current !== -1) {
        const m = members[current]!
        const error = expired === current ? timedOut(m.task, m.timeoutMs!) : signal?.aborted ? cancelled() : e
        settle(current, { ok: false, error })
      }
    } finally {
      clearTimeout(timer)
      signal?.removeEventListener('abort', onCancel)
      port1.close()
    }
    over = true
    const back: number[] = []
    for (let j = started; j < n; j++) if (taken[j] !== 1) back.push(j)
    return back
  })()
  return { withdraw: (from = 0) => takeBack(from, 1), done }
}

function isReport(msg: unknown): msg is MemberReport {
  return typeof msg === 'object' && msg !== null && typeof (msg as MemberReport).member === 'number'
}

function outcomeOf(reply: TaskReply): MemberOutcome {
  if (!reply.ok) return { ok: false, error: deserializeError(reply.error) }
  const result: MemberResult = { value: reply.value }
  if (reply.stateUpdate) result.stateUpdate = reply.stateUpdate
  if (reply.removed) result.removed = reply.removed
  return { ok: true, result }
}
