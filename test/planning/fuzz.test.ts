/**
 * Malformed plan replies (SPEC §4 "bad input"): mutate valid decompose/replan replies — delete, duplicate, swap and
 * corrupt characters, drop or rename keys, wrap in prose and fences, make ids collide or cycle — and check that
 * turning a reply into a plan never crashes: it either yields a valid DAG or throws a TeaError with a code
 * (PLAN_PARSE_ERROR, PLAN_INVALID, PLAN_CYCLE) and a message that carries the raw reply, never a stack.
 */

import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { isTeaError } from '../../src/core/errors.ts'
import { assertDag, topologicalOrder } from '../../src/planning/dag.ts'
import { flattenFlat, flattenHierarchy, parseReply } from '../../src/planning/parse.ts'
import { rng } from '../support/rng.ts'

const SEEDS = [
  '{"subtasks": [{"id": "1", "description": "Toast", "dependencies": []}, {"id": "2", "description": "Coffee", "dependencies": ["1"]}, {"id": "3", "description": "Eggs", "dependencies": []}]}',
  'Here you go:\n```json\n[{"id": 1, "task": "Dig"}, {"id": 2, "task": "Pour", "depends_on": [1]}]\n```',
  '{"subtasks": [{"id": "p1", "description": "Phase", "subtasks": [{"id": "a", "description": "x"}, {"id": "b", "description": "y", "dependencies": ["a"]}]}, {"id": "p2", "description": "Next", "dependencies": ["p1"]}], "planning_complete": true, "rationale": "r"}',
]

const PIECES = [
  '{',
  '}',
  '[',
  ']',
  '"',
  ',',
  ':',
  'null',
  '"id"',
  '"dependencies"',
  '"subtasks"',
  '["1"]',
  '["2", "1"]',
  '\\u0000',
  '```',
  ' ',
  '1e309',
  '-0',
  '"__proto__"',
  '"constructor"',
]

function mutate(text: string, r: () => number): string {
  let t = text
  const n = 1 + Math.floor(r() * 4)
  for (let k = 0; k < n; k++) {
    const i = Math.floor(r() * (t.length + 1))
    const j = Math.min(t.length, i + Math.floor(r() * 12))
    switch (Math.floor(r() * 6)) {
      case 0:
        t = t.slice(0, i) + t.slice(j)
        break
      case 1:
        t = t.slice(0, i) + t.slice(i, j) + t.slice(i)
        break
      case 2:
        t = t.slice(0, i) + PIECES[Math.floor(r() * PIECES.length)]! + t.slice(i)
        break
      case 3:
        t = t.slice(0, i) + String.fromCharCode(Math.floor(r() * 128)) + t.slice(j)
        break
      case 4:
        t = t.replace(/"(\d)"/, Math.floor(r() * 2) ? '"$1"' : '"1"').replace('"dependencies": []', '"dependencies": ["3"]')
        break
      default:
        t = `Sure! ${t.slice(0, j)}`
    }
  }
  return t
}

test('25,000 malformed plan replies: no crash, every failure a coded TeaError carrying the reply', () => {
  const r = rng(20260105)
  const codes = new Map<string, number>()
  let ok = 0
  for (let i = 0; i < 25_000; i++) {
    const text = mutate(SEEDS[i % SEEDS.length]!, r)
    try {
      const reply = parseReply(text, 'fuzz')
      const subtasks = i % 2 ? flattenFlat(reply.subtasks, 15) : flattenHierarchy(reply.subtasks, 1 + (i % 3), 15)
      assertDag(subtasks, 'fuzz')
      const order = topologicalOrder(subtasks)
      assert.is(order.length, subtasks.length)
      ok++
    } catch (e) {
      if (!isTeaError(e)) throw new Error(`uncoded failure for ${JSON.stringify(text)}: ${String(e)}`)
      codes.set(e.code, (codes.get(e.code) ?? 0) + 1)
      if (e.code === 'PLAN_PARSE_ERROR') assert.ok(e.message.includes(text.slice(0, 40)), 'the raw reply is in the message')
      assert.not.ok(/\n\s+at /.test(e.message), 'no stack in the message')
    }
  }
  assert.ok(ok > 1000, `some mutations stay valid plans (${ok})`)
  assert.ok((codes.get('PLAN_PARSE_ERROR') ?? 0) > 1000)
  assert.ok(
    [...codes.keys()].every((c) => ['PLAN_PARSE_ERROR', 'PLAN_INVALID', 'PLAN_CYCLE'].includes(c)),
    [...codes.keys()].join(','),
  )
})

test.run()
