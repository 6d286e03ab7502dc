/**
 * `tea aof route` (docs/fleet.md, "Messages and routers"): a router service on the durable consumer `<p>_router`.
 * One JSON line per message on stdout (the outcome `tea aof send` prints, with the stream sequence, the message id
 * and the delivery count), a start line, a line per message and an end line on stderr, as `tea worker` prints.
 * SIGTERM/SIGINT finish the message in hand, then it exits 0 (nothing is left half done: an unacked message goes
 * to another router). With `--once` it routes what is queued and exits: 0, or 1 when a message was given up on.
 */

import { TeaError } from '../core/errors.ts'
import type { RouterQueue, RouterQueueOptions, TaskStore } from '../aof/store/port.ts'
import { serveRouter } from '../aof/roles/route-service.ts'
import { type StoreFlags, withStore } from './aof-store.ts'
import { EXIT } from './exit.ts'
import type { Io } from './io.ts'
import { stopOnSignals } from './signals.ts'

/** The NATS store (the fleet feature's) has the router queue; --nats above makes withStore open that one. */
type QueueStore = TaskStore & { routerQueue(options?: RouterQueueOptions): Promise<RouterQueue> }

interface RouteFlags extends StoreFlags {
  once: boolean
  'ack-wait-ms': number
  'max-deliver': number
}

export async function routeCommand({ flags }: { flags: RouteFlags }, io: Io): Promise<number> {
  if (!(flags.nats ?? io.env.TEA_NATS_URL)) {
    throw new TeaError(
      'USAGE',
      'tea aof route reads the message queue on a NATS server: give --nats URL (or set TEA_NATS_URL); on the data dir, tea aof send routes each message itself',
    )
  }
  return withStore(flags, io, async (store) => {
    const queue = await (store as QueueStore).routerQueue({ ackWaitMs: flags['ack-wait-ms'], maxDeliver: flags['max-deliver'] })
    const p = io.env.TEA_NATS_PROJECT || 'tea'
    const label = 'tea aof route'
    const how = `consumer ${queue.consumer}, ack wait ${queue.ackWaitMs} ms, max deliver ${queue.maxDeliver}`
    io.err(`${label}: ${flags.once ? 'draining' : 'routing'} ${p}.msg.> on ${store.where} (${how})${flags.once ? '' : '; Ctrl-C stops'}\n`)
    const stop = stopOnSignals(io, label, 'the message in hand')
    try {
      const result = await serveRouter(store, queue, {
        once: flags.once,
        signal: stop.signal,
        onLine: (line) => io.out(`${JSON.stringify(line)}\n`),
        onNote: (text) => io.err(`${label}: ${text}\n`),
      })
      const counts = Object.entries(result.byOutcome)
        .map(([k, n]) => `${n} ${k}`)
        .join(', ')
      const end = stop.signal.aborted ? 'stopped' : 'nothing left'
      io.err(`${label}: ${result.routed} message(s)${counts ? ` (${counts})` : ''}; ${end}\n`)
      return flags.once && result.gaveUp > 0 ? EXIT.failed : EXIT.ok
    } finally {
      stop.dispose()
    }
  })
}
