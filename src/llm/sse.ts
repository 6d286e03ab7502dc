/**
 * Server-sent events, as far as chat-completion streams use them: `data:` lines (possibly several per event,
 * joined by newlines) ending with a blank line; comments (`:`) and other fields are ignored. Yields each event's
 * data string.
 */

export async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder()
  let buffer = ''
  let data: string[] = []
  const reader = body.getReader()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true })
      const lines = buffer.split(/\r?\n/)
      buffer = done ? '' : (lines.pop() ?? '')
      for (const line of lines) {
        if (line === '') {
          if (data.length > 0) yield data.join('\n')
          data = []
        } else if (line.startsWith('data:')) {
          data.push(line.slice(line.startsWith('data: ') ? 6 : 5))
        }
      }
      if (done) break
    }
    if (data.length > 0) yield data.join('\n')
  } finally {
    // Frees the connection when the consumer stops early (at `[DONE]`); a no-op on a finished stream.
    reader.cancel().catch(() => {})
  }
}
