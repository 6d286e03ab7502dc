/**
 * What the page shows of an agent (src/cli/serve/agent-view.ts, issue 31 items 1–3): the form's typed fields from
 * state_schema, the graph laid out in rows from `tea graph`'s arrows (every arrow drawn, loops back up on the right,
 * paths of numbers only), and what a run paused at an interrupt asks for, before and after a node.
 */

import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { loadAgentText } from '../../../src/agent/load.ts'
import type { AgentSpec } from '../../../src/agent/types.ts'
import { arrows } from '../../../src/agent/graph.ts'
import { agentView, graphView, pausedView } from '../../../src/cli/serve/agent-view.ts'
import { testRegistry } from '../../engine/harness.ts'

function load(yaml: string): AgentSpec {
  const { spec, problems } = loadAgentText(yaml, '/tmp/view.yaml', testRegistry())
  assert.equal(problems, [])
  return spec!
}

const LOOP = `name: loop
state_schema: { topic: str, n: int, ok: bool, items: list, extra: "Optional[dict]", odd: weird }
initial_state: { n: 0 }
nodes:
  - name: work
    run: "return { n: state.n + 1 }"
  - name: check
    run: "return {}"
    goto:
      - { if: "state.n < 3", to: work }
      - { to: report }
  - name: report
    description: Is the report right?
    run: "return { report: 'n=' + state.n + ' ' + state['topic'] }"
    interrupt: before
  - name: publish
    run: "return { published: state.report, ok: state.ok }"
    on_error: { mode: continue, fallback: report }
config: { interrupt_after: [check] }
`

test('31 item 1: the form: each state_schema key with its JSON type, the initial state, the interrupts', () => {
  const v = agentView(load(LOOP), 'team/loop.yaml')
  assert.equal(v.fields, [
    { key: 'topic', type: 'string' },
    { key: 'n', type: 'integer' },
    { key: 'ok', type: 'boolean' },
    { key: 'items', type: 'array' },
    { key: 'extra', type: 'object' },
    { key: 'odd', type: 'any' },
  ])
  assert.equal(v.initial_state, { n: 0 })
  assert.is(v.file, 'team/loop.yaml')
  assert.equal(v.interrupts, { before: ['report'], after: ['check'] })
})

test('31 item 3: the graph: every arrow of tea graph, nodes in rows by distance from the start, a loop back up on the right', () => {
  const spec = load(LOOP)
  const g = graphView(spec)
  assert.equal(
    g.edges.map((e) => [e.from, e.to, e.label ?? '', e.dashed ?? false]),
    arrows(spec).map((a) => [a.from, a.to, a.label ?? '', a.dashed ?? false]),
  )
  const y = Object.fromEntries(g.nodes.map((n) => [n.id, n.y]))
  assert.ok(y.__start__! < y.work! && y.work! < y.check! && y.check! < y.report! && y.report! < y.publish! && y.publish! < y.__end__!)
  for (const n of g.nodes) assert.ok(n.x >= 0 && n.x + n.w <= g.width && n.y + n.h <= g.height, `${n.id} inside the picture`)
  const back = g.edges.find((e) => e.from === 'check' && e.to === 'work')!
  const [, x1, , , , , , x2] = back.path.split(/[ MC]+/).map(Number)
  assert.ok(back.lx > Math.max(x1!, x2!), 'a loop goes round the right side')
  for (const e of g.edges) assert.match(e.path, /^M[\d. -]+C[\d. -]+$/, 'a path is numbers only')
  assert.is(g.nodes.find((n) => n.id === 'work')!.uses, 'run:')
})

test('31 item 2: paused before a node: its description, the keys it reads; after one: the keys it wrote and the next one reads', () => {
  const spec = load(LOOP)
  const before = pausedView(spec, 'check', { next: 'report', skipInterruptBefore: true }, { n: 3, topic: 'roses' })
  assert.equal(before, {
    node: 'report',
    when: 'before',
    message: 'Is the report right?',
    keys: ['n', 'topic'],
    values: { n: 3, topic: 'roses' },
  })
  const after = pausedView(spec, 'check', { next: 'work' }, { n: 1 }, ['n'])
  assert.equal(after, { node: 'check', when: 'after', message: "paused after node 'check'", keys: ['n'], values: { n: 1 } })
  const toPublish = pausedView(spec, 'report', { next: 'publish' }, { report: 'n=3' }, ['report'])
  assert.equal([toPublish.keys, toPublish.values], [['report', 'ok'], { report: 'n=3' }], 'a key not in the state yet is asked for too')
})

test.run()
