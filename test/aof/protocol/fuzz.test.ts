/**
 * Malformed input, generated: mutated envelopes (dropped fields, wrong types, truncations, junk bytes, huge strings,
 * path-like ids) through the parser and the router. Every input yields an outcome — accepted, rejected with a
 * reason, or ignored — never an exception, and nothing is written outside the data dir's own folders.
 */

import { readdirSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { parseProtocolMessage, routeMessage } from '../../../src/aof/index.ts'
import { T1, completion, fixture, handoff, makeTask, statusUpdate } from '../helpers.ts'

function prng(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const JUNK: unknown[] = [
  null,
  0,
  -1,
  1.5,
  '',
  'x',
  'TASK-../../etc',
  '../../etc/passwd',
  [],
  {},
  true,
  'AOF/1 ',
  '\u0000',
  'é'.repeat(300),
  2 ** 53,
  NaN,
]

function mutate(base: Record<string, unknown>, rnd: () => number): unknown {
  const msg: Record<string, unknown> = structuredClone(base)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!
  const n = 1 + Math.floor(rnd() * 3)
  for (let i = 0; i < n; i++) {
    const payload = msg.payload
    const target = (rnd() < 0.5 || typeof payload !== 'object' || payload === null || Array.isArray(payload) ? msg : payload) as Record<
      string,
      unknown
    >
    const keys = Object.keys(target)
    switch (Math.floor(rnd() * 4)) {
      case 0:
        if (keys.length) delete target[pick(keys)]
        break
      case 1:
        if (keys.length) target[pick(keys)] = pick(JUNK)
        break
      case 2:
        target[`extra${i}`] = pick(JUNK)
        break
      default:
        if (keys.length) target[pick(keys)] = { nested: pick(JUNK) }
    }
  }
  const text = JSON.stringify(msg)
  switch (Math.floor(rnd() * 5)) {
    case 0:
      return msg
    case 1:
      return `AOF/1 ${text}`
    case 2:
      return `AOF/1 ${text.slice(0, Math.floor(rnd() * text.length))}`
    case 3:
      return text.slice(0, Math.floor(rnd() * text.length))
    default: {
      const i = Math.floor(rnd() * text.length)
      return text.slice(0, i) + String.fromCharCode(Math.floor(rnd() * 128)) + text.slice(i + 1)
    }
  }
}

test('20 000 mutated messages: the parser always answers with a kind and, when rejecting, a reason', () => {
  const rnd = prng(42)
  const bases = [completion(T1), statusUpdate(T1, { notes: 'n' }), handoff('TASK-2026-02-09-002', T1)]
  const kinds: Record<string, number> = {}
  for (let i = 0; i < 20_000; i++) {
    const r = parseProtocolMessage(mutate(bases[i % bases.length]!, rnd))
    const key = r.kind === 'rejected' ? `rejected:${r.reason}` : r.kind
    kinds[key] = (kinds[key] ?? 0) + 1
    if (r.kind === 'rejected' && r.reason === 'invalid_envelope')
      assert.ok(r.issues && r.issues.length > 0 && r.issues.every((x) => typeof x.path === 'string'))
  }
  assert.ok((kinds['rejected:invalid_envelope'] ?? 0) > 1000)
  assert.ok((kinds['rejected:invalid_json'] ?? 0) > 1000)
  assert.ok((kinds.envelope ?? 0) > 100)
})

test('1 000 mutated messages through the router: an outcome every time, the store stays consistent', async () => {
  const f = fixture()
  try {
    await makeTask(f.ctx, { id: T1 })
    const rnd = prng(7)
    const bases = [completion(T1), statusUpdate(T1, { notes: 'n' }), handoff('TASK-2026-02-09-002', T1)]
    for (let i = 0; i < 1000; i++) {
      const out = await routeMessage(f.ctx, mutate(bases[i % bases.length]!, rnd))
      assert.ok(['accepted', 'rejected', 'ignored'].includes(out.outcome))
      if (out.outcome === 'rejected') assert.type(out.reason, 'string')
    }
    assert.equal(
      readdirSync(f.dir)
        .sort()
        .filter((n) => !['events', 'locks', 'state', 'tasks'].includes(n)),
      [],
    )
  } finally {
    f.cleanup()
  }
})

test.run()
