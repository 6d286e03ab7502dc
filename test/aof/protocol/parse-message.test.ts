import { readFileSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { MAX_ENVELOPE_BYTES, getTask, parseProtocolMessage, routeMessage } from '../../../src/aof/index.ts'
import { T1, completion, eventTypes, eventsOf, fixture, makeTask } from '../helpers.ts'

test('AOF-BDD-25 Parse message with protocol field in payload', () => {
  const wrapped = parseProtocolMessage({ payload: completion(T1) })
  assert.is(wrapped.kind, 'envelope')
  // The reference returned null for a bare envelope object (it looked inside the envelope's own payload); we do not.
  const bare = parseProtocolMessage(completion(T1))
  assert.is(bare.kind, 'envelope')
  assert.is(bare.kind === 'envelope' && bare.source, 'object')
})

test('AOF-BDD-26 Parse message with AOF/1 prefix', () => {
  const r = parseProtocolMessage(`AOF/1 ${JSON.stringify(completion(T1))}`)
  assert.is(r.kind, 'envelope')
  assert.is(r.kind === 'envelope' && r.source, 'aof-prefix')
  assert.is(r.kind === 'envelope' && r.envelope.taskId, T1)
})

test('AOF-BDD-27 Parse plain JSON message', () => {
  const r = parseProtocolMessage(`  ${JSON.stringify(completion(T1))}\n`)
  assert.is(r.kind === 'envelope' && r.source, 'json')
})

test('truncated JSON at every length is rejected as invalid_json or ignored, never thrown', () => {
  const text = JSON.stringify(completion(T1))
  for (let n = 1; n < text.length; n += 7) {
    const r = parseProtocolMessage(text.slice(0, n))
    assert.ok(r.kind === 'rejected' ? r.reason === 'invalid_json' : r.kind === 'ignored', `length ${n}`)
    const p = parseProtocolMessage(`AOF/1 ${text.slice(0, n)}`)
    assert.is(p.kind === 'rejected' && p.reason, 'invalid_json')
  }
})

test('a message over 10 MiB is rejected as payload_too_large before parsing', () => {
  const big = `AOF/1 ${JSON.stringify(completion(T1, { notes: 'x'.repeat(MAX_ENVELOPE_BYTES) }))}`
  const r = parseProtocolMessage(big)
  assert.is(r.kind === 'rejected' && r.reason, 'payload_too_large')
  const obj = parseProtocolMessage(completion(T1, { notes: 'x'.repeat(MAX_ENVELOPE_BYTES) }))
  assert.is(obj.kind === 'rejected' && obj.reason, 'payload_too_large')
})

test('AOF/1 prefix with a non-object body is an invalid envelope', () => {
  const r = parseProtocolMessage('AOF/1 [1,2]')
  assert.is(r.kind === 'rejected' && r.reason, 'invalid_envelope')
})

test('JSON text that is not an envelope (no protocol key, an array) is rejected as invalid_envelope and logged once, as the reference logs it; the task is untouched', async () => {
  const f = fixture()
  try {
    await makeTask(f.ctx, { id: T1 })
    const before = readFileSync((await getTask(f.ctx, T1))!.path, 'utf8')
    for (const text of ['{"hello": 1}', '[1, 2]', ' [] ', `{"taskId":"${T1}","type":"completion.report"}`]) {
      const out = await routeMessage(f.ctx, text)
      assert.equal([out.outcome, out.reason], ['rejected', 'invalid_envelope'], text)
    }
    assert.is(eventsOf(f.ctx, 'protocol.message.rejected').length, 4)
    assert.is(readFileSync((await getTask(f.ctx, T1))!.path, 'utf8'), before)
    assert.equal(parseProtocolMessage('[1,'), { kind: 'rejected', reason: 'invalid_json', source: 'json', error: parseErr('[1,') })
  } finally {
    f.cleanup()
  }
})

test('an object whose protocol is not "aof" is ignored silently, as the reference ignores it (it was rejected)', async () => {
  const f = fixture()
  try {
    await makeTask(f.ctx, { id: T1 })
    const mcp = { ...completion(T1), protocol: 'mcp' }
    assert.equal(parseProtocolMessage(mcp), { kind: 'ignored' })
    assert.equal(parseProtocolMessage({ payload: mcp }), { kind: 'ignored' })
    const n = eventTypes(f.ctx).length
    assert.equal(await routeMessage(f.ctx, mcp), { outcome: 'ignored' })
    assert.is(eventTypes(f.ctx).length, n)
    assert.is((await getTask(f.ctx, T1))!.status, 'in-progress')
  } finally {
    f.cleanup()
  }
})

function parseErr(text: string): string {
  try {
    JSON.parse(text)
    return ''
  } catch (e) {
    return (e as Error).message
  }
}

test.run()
