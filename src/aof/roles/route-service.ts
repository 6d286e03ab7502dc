/**
 * A router as a service (`tea aof route`, docs/fleet.md "Messages and routers"): it takes protocol messages from the
 * durable consumer every router of the project shares (`RouterQueue` in store/port.ts; on NATS store/nats/router-queue.ts), routes each through the port
 * (`routeRecorded`: the same handlers, rejections and events as `tea aof send`), and acks it only once its effect
 * is committed and it is marked routed. So:
 *
 * - a router that dies holding a message leaves it unacked; the server hands it to another router after the ack
 *   wait. If the effect was committed and marked, that router finds the mark and acks it without effect
 *   (`duplicate`); if not, it routes it — every handler survives running twice (store-port.ts `markRouted`).
 * - a malformed message is rejected and logged exactly as the filesystem router logs it, then acked: it is an answer,
 *   not a failure, and is never handed out again.
 * - a message the router cannot handle (unreadable — a `$ref` whose object is gone — or a store error while routing)
 *   is given back with a growing delay, and on its last delivery (`max deliver`) terminated and logged as
 *   `protocol.message.failed`: never redelivered forever.
 * - a message its sender routes itself (`Tea-Routed-By: sender`: `tea aof send` without `--no-route`, the `aof.*`
 *   actions) is acked untouched.
 *
 * On stop (SIGTERM/SIGINT) it finishes and acks the message in hand, then returns.
 */

import { errorMessage } from '../../core/errors.ts'
import { backoffDelay, sleep } from '../../core/util.ts'
import type { QueuedMessage, RouterQueue } from '../store/port.ts'
import type { RouteOutcome } from '../protocol/route-outcome.ts'
import { routeRecorded } from './router.ts'
import type { TaskStore } from '../store/port.ts'

/** What the service says about one message (one JSON line on stdout). */
export interface RoutedLine extends RouteOutcome {
  seq: number
  /** Why a message was given up on. */
  error?: string
  messageId?: string
  delivery: number
}

export interface RouteServiceOptions {
  /** Route what is queued (and what other routers hold, when it comes back or is acked), then return. */
  once: boolean
  /** Fired by SIGTERM/SIGINT: the message in hand is finished, then the service returns. */
  signal: AbortSignal
  onLine(line: RoutedLine): void
  /** A log line (stderr), without the trailing newline. */
  onNote(text: string): void
  /** How long one wait for a message lasts before the loop looks again, and so how long a stop may take (at least, and by default, the queue's 2 s). */
  waitMs?: number
}

/** With --once, how long past its delay a message given back is waited for before the queue counts as drained. */
const BACK_GRACE_MS = 1_000

/** The pause after the queue could not be read (the server is away): the client reconnects meanwhile. */
const RETRY_MS = 2_000

export interface RouteServiceResult {
  routed: number
  byOutcome: Record<string, number>
  /** Messages terminated on their last delivery. */
  gaveUp: number
}

export async function serveRouter(store: TaskStore, queue: RouterQueue, options: RouteServiceOptions): Promise<RouteServiceResult> {
  const result: RouteServiceResult = { routed: 0, byOutcome: {}, gaveUp: 0 }
  // With --once, a message in another router's hands is waited for until it is acked or comes back; a router that
  // died on a message's last delivery leaves it in hand for ever, so the wait ends after two ack waits of silence.
  let quietSince = Date.now()
  // The backlog is asked for (one more request) only when the last message said none was pending after it.
  let look = true
  let backAt = 0
  try {
    while (!options.signal.aborted) {
      let m: QueuedMessage | undefined
      let line: RoutedLine | { backInMs: number }
      try {
        if (options.once && look) {
          const { pending, inHand } = await queue.backlog()
          // A message given back with a delay is held in hand until the delay is over, then pending again; the grace
          // after it covers the moment in between.
          if (pending === 0 && inHand === 0 && Date.now() > backAt) break
          if (pending === 0 && Date.now() - quietSince > 2 * queue.ackWaitMs) {
            options.onNote(`${inHand} message(s) still in other routers' hands; leaving them to them`)
            break
          }
        }
        m = await queue.next(options.waitMs)
        look = !m || m.pendingAfter === 0
        if (!m) continue
        quietSince = Date.now()
        line = await handle(store, m, options)
      } catch (e) {
        // The server is gone or restarting. The client reconnects in the background; a message in hand is not acked
        // and comes back after the ack wait (marked, if its effect was committed). A script (--once) is told instead.
        if (options.once) throw e
        options.onNote(`${m ? `#${m.seq}: ` : ''}${errorMessage(e)}; trying again in ${RETRY_MS} ms`)
        await sleep(RETRY_MS, options.signal).catch(() => undefined)
        continue
      }
      if ('backInMs' in line) {
        backAt = Math.max(backAt, Date.now() + line.backInMs + BACK_GRACE_MS)
        look = true
        continue
      }
      result.routed++
      const key = line.reason === 'gave_up' ? 'failed' : line.outcome
      result.byOutcome[key] = (result.byOutcome[key] ?? 0) + 1
      if (line.reason === 'gave_up') result.gaveUp++
      options.onLine(line)
      const what = [line.type, line.taskId].filter(Boolean).join(' ')
      const delivery = line.delivery > 1 ? ` (delivery ${line.delivery})` : ''
      options.onNote(`#${line.seq} ${what || m.subject}: ${line.outcome}${line.reason ? ` (${line.reason})` : ''}${delivery}`)
    }
  } finally {
    // Messages held for a delayed retry go back now, for another router (or this one's next start) to take.
    queue.release()
  }
  return result
}

/** Routes one message and acks it; the line to print, or when it was given back, in how long it comes back. */
async function handle(store: TaskStore, m: QueuedMessage, options: RouteServiceOptions): Promise<RoutedLine | { backInMs: number }> {
  const base = { seq: m.seq, ...(m.messageId ? { messageId: m.messageId } : {}), delivery: m.delivery }
  if (m.routedBySender) {
    await m.ack()
    return { ...base, outcome: 'ignored', reason: 'routed_by_sender', type: m.type }
  }
  // A long unit of work (many lost races, a slow server) must not outlast the ack wait and be handed out twice.
  const letGo = m.keepInHand()
  let outcome: RouteOutcome
  try {
    if (m.text === undefined) throw new Error(`the message cannot be read: ${m.error ?? 'unknown error'}`)
    outcome = await routeRecorded(store, m.text, m.messageId)
  } catch (e) {
    return failed(store, m, base, errorMessage(e), options)
  } finally {
    letGo()
  }
  await m.ack()
  return { ...base, ...outcome }
}

/** Gives the message back with a growing delay, or, on its last delivery, terminates it and logs the failure. */
async function failed(
  store: TaskStore,
  m: QueuedMessage,
  base: Pick<RoutedLine, 'seq' | 'messageId' | 'delivery'>,
  error: string,
  options: RouteServiceOptions,
): Promise<RoutedLine | { backInMs: number }> {
  if (m.delivery < m.maxDeliver) {
    // A fixed delay, so that the note line says when the message comes back.
    const delayMs = backoffDelay(m.delivery - 1, 1_000, { jitter: false })
    options.onNote(`#${m.seq} ${m.subject}: ${error}; delivery ${m.delivery} of ${m.maxDeliver}, trying again in ${delayMs} ms`)
    m.nak(delayMs)
    return { backInMs: delayMs }
  }
  m.term()
  const payload = { subject: m.subject, seq: m.seq, error, deliveries: m.delivery, ...(m.messageId ? { messageId: m.messageId } : {}) }
  await store.appendEvents([{ type: 'protocol.message.failed', actor: 'router', payload }]).catch((e: unknown) => {
    options.onNote(`#${m.seq}: could not log the failure either: ${errorMessage(e)}`)
  })
  return { ...base, outcome: 'rejected', reason: 'gave_up', error }
}
