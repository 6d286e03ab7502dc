import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { sseData } from '../../src/llm/sse.ts'

function streamOf(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  return new ReadableStream({
    start(controller) {
      for (const c of chunks) controller.enqueue(encoder.encode(c))
      controller.close()
    },
  })
}

async function collect(chunks: string[]): Promise<string[]> {
  const out: string[] = []
  for await (const d of sseData(streamOf(chunks))) out.push(d)
  return out
}

test('yields each event’s data wherever the chunks split it', async () => {
  const text = 'data: {"a":1}\n\ndata: {"b":2}\r\n\r\n: keep-alive comment\n\ndata: [DONE]\n\n'
  const whole = await collect([text])
  assert.equal(whole, ['{"a":1}', '{"b":2}', '[DONE]'])
  for (let cut = 1; cut < text.length; cut++) {
    assert.equal(await collect([text.slice(0, cut), text.slice(cut)]), whole, `cut at ${cut}`)
  }
})

test('joins multi-line data and keeps a final event without its blank line', async () => {
  assert.equal(await collect(['event: x\ndata: line1\ndata:line2\n\ndata: tail']), ['line1\nline2', 'tail'])
})

test('splits a multi-byte character across chunks correctly', async () => {
  const bytes = new TextEncoder().encode('data: héllo ✓\n\n')
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(bytes.slice(0, 8))
      c.enqueue(bytes.slice(8))
      c.close()
    },
  })
  const out: string[] = []
  for await (const d of sseData(stream)) out.push(d)
  assert.equal(out, ['héllo ✓'])
})

test.run()
