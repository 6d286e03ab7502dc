/**
 * The router services' queue (docs/fleet.md, "Messages and routers"): the durable pull consumer `<p>_router` on the
 * stream `<p>_events`, filtered to the protocol messages `<p>.msg.>`, explicit ack. Every router process of a
 * project reads the same consumer, so the server hands each message to one of them; one that is not acked within
 * the ack wait (its router died, or hangs) is handed out again, at most `max deliver` times in all. The consumer
 * starts at the stream's first message: messages queued before any router ran are routed when the first one starts.
 *
 * Starting a router creates the consumer, or sets its ack wait and max deliver to the ones given (the last router
 * started decides them for all).
 */

import type { QueuedMessage, RouterQueue, RouterQueueOptions } from '../port.ts'
import type { JetStreamClient, JetStreamManager, JsMsg } from './client.ts'

const DEFAULT_ACK_WAIT_MS = 30_000
/** The shortest wait for a message (one fetch): see `next`. */
const MIN_WAIT_MS = 2_000
const DEFAULT_MAX_DELIVER = 5

export async function openRouterQueue(
  js: JetStreamClient,
  jsm: JetStreamManager,
  project: string,
  unpack: (bytes: Uint8Array) => Promise<string>,
  options: RouterQueueOptions = {},
): Promise<RouterQueue> {
  const stream = `${project}_events`
  const name = `${project}_router`
  const ackWaitMs = options.ackWaitMs ?? DEFAULT_ACK_WAIT_MS
  const maxDeliver = options.maxDeliver ?? DEFAULT_MAX_DELIVER
  const wanted = { ack_wait: ackWaitMs * 1_000_000, max_deliver: maxDeliver }
  const info = await jsm.consumers.info(stream, name).catch(() => undefined)
  if (!info) {
    await jsm.consumers
      .add(stream, { durable_name: name, filter_subject: `${project}.msg.>`, ack_policy: 'explicit', deliver_policy: 'all', ...wanted })
      // Another router created it at the same moment: make it ours below.
      .catch(() => jsm.consumers.update(stream, name, wanted))
  } else if (info.config.ack_wait !== wanted.ack_wait || info.config.max_deliver !== wanted.max_deliver) {
    await jsm.consumers.update(stream, name, wanted)
  }
  const consumer = await js.consumers.get(stream, name)
  // Messages given back with a delay, held here until it is over: each entry gives its message back now.
  const held = new Set<() => void>()

  function keepInHand(m: JsMsg): () => void {
    const timer = setInterval(() => m.working(), Math.max(50, Math.floor(ackWaitMs / 3)))
    return () => clearInterval(timer)
  }

  function holdThenNak(m: JsMsg, delayMs: number): void {
    const letGo = keepInHand(m)
    const giveBack = () => {
      clearTimeout(timer)
      letGo()
      held.delete(giveBack)
      m.nak()
    }
    const timer = setTimeout(giveBack, delayMs)
    held.add(giveBack)
  }

  async function message(m: JsMsg): Promise<QueuedMessage> {
    const id = m.headers?.get('Nats-Msg-Id')
    let text: string | undefined
    let error: string | undefined
    try {
      text = await unpack(m.data)
    } catch (e) {
      error = e instanceof Error ? e.message : String(e)
    }
    return {
      text,
      ...(error !== undefined ? { error } : {}),
      ...(id ? { messageId: id } : {}),
      routedBySender: m.headers?.get('Tea-Routed-By') === 'sender',
      delivery: m.info.deliveryCount,
      maxDeliver,
      pendingAfter: m.info.pending,
      seq: m.seq,
      subject: m.subject,
      type: m.subject.slice(`${project}.msg.`.length),
      // Acked with the server's confirmation: an ack lost on the way would hand the message out again.
      ack: async () => {
        await m.ackAck()
      },
      nak: (delayMs) => holdThenNak(m, delayMs),
      // Without a reason: nats-server 2.9 (Debian's) does not know `+TERM <reason>` and would keep the message.
      term: () => m.term(),
      keepInHand: () => keepInHand(m),
    }
  }

  return {
    consumer: name,
    ackWaitMs,
    maxDeliver,
    async next(waitMs) {
      // Not cut short by a stop: a message the server sent meanwhile would be in this router's hands, unseen, until
      // the ack wait ran out. A stopping router waits out this fetch (at most `waitMs`) and handles what came.
      // The client gives a fetch up when two of the server's idle heartbeats in a row do not come. Its default
      // heartbeat (half the fetch) makes "two missed" fall due just as the server ends the fetch, and a fetch given
      // up on while the server still holds it loses the message handed to it until the ack wait: so a heartbeat
      // every 500 ms, and the fetch at least four times that.
      const batch = await consumer.fetch({ max_messages: 1, expires: Math.max(waitMs ?? 0, MIN_WAIT_MS), idle_heartbeat: 500 })
      try {
        for await (const m of batch) return message(m)
      } catch (e) {
        // Heartbeats missed all the same (a loaded board): nothing was handed to this router; the caller looks
        // again, and a server that is really gone fails the next request.
        if (e instanceof Error && e.message === 'heartbeats missed') return undefined
        throw e
      }
      return undefined
    },
    async backlog() {
      const i = await consumer.info()
      return { pending: i.num_pending, inHand: i.num_ack_pending }
    },
    release() {
      for (const giveBack of [...held]) giveBack()
    },
  }
}
