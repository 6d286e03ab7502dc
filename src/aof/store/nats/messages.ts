/**
 * Protocol messages on NATS: recorded on the event stream as `<p>.msg.<type>` (`Nats-Msg-Id` = the message id, so
 * a message sent twice is stored once; `Tea-Routed-By: sender` when the sender routes it itself), noted as routed
 * in the runs bucket (`_routed.<sha256 of its id>`), and read by router services through router-queue.ts.
 */

import type { RouterQueue, RouterQueueOptions } from '../port.ts'
import { headers } from './client.ts'
import type { NatsContext } from './context.ts'
import { routedKey, subjectToken } from './entries.ts'
import { openRouterQueue } from './router-queue.ts'

export async function recordMessage(
  ctx: NatsContext,
  messageId: string,
  type: string,
  text: string,
  options: { queued?: boolean } = {},
): Promise<'new' | 'duplicate'> {
  const h = headers()
  if (!options.queued) h.set('Tea-Routed-By', 'sender')
  const ack = await ctx.js.publish(`${ctx.p}.msg.${subjectToken(type)}`, await ctx.pack(text), { msgID: messageId, headers: h })
  return ack.duplicate ? 'duplicate' : 'new'
}

export async function markRouted(ctx: NatsContext, messageId: string): Promise<void> {
  await ctx.runs.put(routedKey(messageId), '')
}

export async function wasRouted(ctx: NatsContext, messageId: string): Promise<boolean> {
  const e = await ctx.runs.get(routedKey(messageId))
  return e !== null && e.operation === 'PUT'
}

export function routerQueue(ctx: NatsContext, options?: RouterQueueOptions): Promise<RouterQueue> {
  return openRouterQueue(ctx.js, ctx.jsm, ctx.p, ctx.unpack, options)
}
