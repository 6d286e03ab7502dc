/**
 * What one attempt has received of a reply, counted as it arrives, and the cap on it (`max_reply_bytes`).
 *
 * The cap is on the reply's **text** (UTF-8 bytes), so it means the same for Ollama and OpenAI-compatible
 * servers, streamed or not, and for a cassette. A streamed reply is checked token by token, before the token is
 * passed on. A reply that is not streamed arrives as one JSON body holding the text escaped, so its body is read
 * with a bound of its own (`wireLimit`) and its text checked once parsed. The same bound caps one line of a
 * stream (an NDJSON line or an SSE line), so a server that never sends a newline cannot fill the memory either.
 * Past a bound, reading stops at once: the body is cancelled, which closes the connection.
 *
 * The counts also tell a lost connection apart from a cut reply: once the response head has arrived
 * (`answered`), the server was reached, and a failure after that is LLM_STREAM_CUT with the bytes and tokens
 * received, not LLM_UNREACHABLE.
 */

import type { ReplyMeter, ServerRef } from './failure.ts'
import { replyTooLarge } from './failure.ts'

export function createReplyMeter(cap: number, streaming: boolean): ReplyMeter {
  return { cap, streaming, answered: false, bytes: 0, textBytes: 0, tokens: 0 }
}

/**
 * The most body bytes read for a reply that is not streamed, and the longest line of a streamed one. The text
 * arrives JSON-escaped inside an envelope: a quote or a newline takes 2 bytes, and Ollama's Go encoder writes
 * `<`, `>` and `&` as 6-byte `\u` escapes. Twice the cap plus 64 KiB leaves room for any ordinary text under the
 * cap, and still bounds what is held to a small multiple of it.
 */
function wireLimit(cap: number): number {
  return 2 * cap + 64 * 1024
}

/** Counts reply text (a streamed token before it is passed on, or a whole reply) against the cap. */
export function countText(meter: ReplyMeter, server: ServerRef, text: string): void {
  meter.textBytes += Buffer.byteLength(text)
  if (meter.textBytes > meter.cap) throw replyTooLarge(server, meter)
}

/** A streamed body that counts its bytes and fails (cancelling the body) on a line longer than `wireLimit`. */
export function meteredStream(body: ReadableStream<Uint8Array>, meter: ReplyMeter, server: ServerRef): ReadableStream<Uint8Array> {
  const limit = wireLimit(meter.cap)
  let line = 0
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        meter.bytes += chunk.length
        const lastNewline = chunk.lastIndexOf(0x0a)
        line = lastNewline === -1 ? line + chunk.length : chunk.length - lastNewline - 1
        if (line > limit) throw replyTooLarge(server, meter)
        controller.enqueue(chunk)
      },
    }),
  )
}

/** The whole body of a reply that is not streamed, counted as it arrives; past `wireLimit` it stops reading. */
export async function readMetered(body: ReadableStream<Uint8Array> | null, meter: ReplyMeter, server: ServerRef): Promise<string> {
  const { text, over } = await readUpTo(body, wireLimit(meter.cap), (n) => {
    meter.bytes += n
  })
  if (over) throw replyTooLarge(server, meter)
  return text
}

/** How much of an error body is read: its message is shown cut to 200 characters anyway. */
const ERROR_BODY_LIMIT = 64 * 1024

/** The start of an HTTP error's body, never more than 64 KiB of it; '' when it cannot be read. */
export async function readErrorText(res: { body: ReadableStream<Uint8Array> | null }): Promise<string> {
  try {
    return (await readUpTo(res.body, ERROR_BODY_LIMIT)).text
  } catch {
    return ''
  }
}

// --- internal ---

async function readUpTo(
  body: ReadableStream<Uint8Array> | null,
  limit: number,
  count?: (n: number) => void,
): Promise<{ text: string; over: boolean }> {
  if (!body) return { text: '', over: false }
  const reader = body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return { text: Buffer.concat(chunks).toString('utf8'), over: false }
      count?.(value.length)
      if (size + value.length > limit) {
        chunks.push(value.subarray(0, limit - size))
        return { text: Buffer.concat(chunks).toString('utf8'), over: true }
      }
      chunks.push(value)
      size += value.length
    }
  } finally {
    // Frees the connection when we stop early; a no-op on a body read to its end.
    reader.cancel().catch(() => {})
  }
}
