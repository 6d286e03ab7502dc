/**
 * Planning crash safety through the real CLI (the built bundle): SIGKILL `tea run` in the middle of a plan,
 * `tea resume`, and compare with an uninterrupted run. Subtask events come from `--stream`; a subtask that ran
 * again after its record committed would show up as a second `completed` event.
 * Skipped, with a message, until the bundle registers the plan.* actions (`tea actions --json`).
 */

import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { killWhen, scratch, tea } from '../e2e/cli.ts'

interface Event {
  type: string
  id?: string
  status?: string
  state?: Record<string, unknown>
}

const subtasks = (n: number, deps: (i: number) => number[]) =>
  Array.from({ length: n }, (_, k) => {
    const i = k + 1
    return `      - { id: "${i}", description: "step ${i}", dependencies: [${deps(i)
      .map((d) => `"${d}"`)
      .join(', ')}] }`
  }).join('\n')

const agent = (name: string, list: string, parallel: boolean, ms: number) => `name: ${name}
initial_state:
  plan:
    id: plan_${name}
    goal: count
    strategy: flat
    created_at: 1
    replan_count: 0
    max_replans: 0
    subtasks:
${list}
nodes:
  - name: work
    uses: plan.execute
    with:
      plan: "{{ state.plan }}"
      parallel: ${parallel}
      max_concurrent: 2
      subtask_executor:
        run: "await new Promise((r) => setTimeout(r, ${ms})); return 'done ' + subtask.id"
`

const SEQUENTIAL = agent(
  'five',
  subtasks(5, (i) => (i > 1 ? [i - 1] : [])),
  false,
  150,
)
// two chains of four that meet in a ninth subtask: parallel work with dependencies
const PARALLEL = agent(
  'para',
  subtasks(9, (i) => (i === 9 ? [4, 8] : i === 1 || i === 5 ? [] : [i - 1])),
  true,
  60,
)

async function wired(): Promise<boolean> {
  const r = await tea(['actions', '--json'])
  return r.code === 0 && r.stdout.includes('"plan.execute"')
}

/** Runs with --stream, SIGKILLing at the first event `kill` accepts; returns the events seen. */
async function streamed(args: string[], kill: (e: Event) => boolean): Promise<{ events: Event[]; killed: boolean; stderr: string }> {
  const r = await killWhen(args, (e) => kill(e as unknown as Event), { timeoutMs: 60_000 })
  return { events: r.events as unknown as Event[], killed: r.signal === 'SIGKILL', stderr: r.stderr }
}

const finalState = (events: Event[]) => events.find((e) => e.type === 'complete')?.state
const completedIds = (events: Event[]) => events.filter((e) => e.type === 'subtask' && e.status === 'completed').map((e) => e.id!)
const startedIds = (events: Event[]) => events.filter((e) => e.type === 'subtask' && e.status === 'in_progress').map((e) => e.id!)

test('001.3R-E2E-002 a 5-subtask plan SIGKILLed after subtask 3 resumes running only 4 and 5, to the same final state', async () => {
  assert.ok(await wired(), 'the full bundle must list plan.* actions (src/features.ts registers them)')
  const ref = scratch({ 'agent.yaml': SEQUENTIAL })
  const s = scratch({ 'agent.yaml': SEQUENTIAL })
  try {
    const reference = await streamed(['run', ref.path('agent.yaml'), '--data-dir', ref.path('data')], () => false)
    const expected = finalState(reference.events)
    assert.ok(expected, reference.stderr)
    const first = await streamed(
      ['run', s.path('agent.yaml'), '--data-dir', s.path('data'), '--run-id', 'crash'],
      (e) => e.type === 'subtask' && e.id === '3' && e.status === 'completed',
    )
    assert.ok(first.killed, `the run should have been killed after subtask 3: ${first.stderr}`)
    assert.equal(completedIds(first.events), ['1', '2', '3'])
    const resumed = await streamed(['resume', 'crash', '--data-dir', s.path('data')], () => false)
    assert.equal(startedIds(resumed.events), ['4', '5'], resumed.stderr)
    assert.equal(completedIds(resumed.events), ['4', '5'])
    assert.equal(finalState(resumed.events), expected)
  } finally {
    ref.cleanup()
    s.cleanup()
  }
})

test('a parallel plan killed at random points several times in a row resumes to the same final state, never re-running a recorded subtask', async () => {
  assert.ok(await wired(), 'the full bundle must list plan.* actions (src/features.ts registers them)')
  const ref = scratch({ 'agent.yaml': PARALLEL })
  const s = scratch({ 'agent.yaml': PARALLEL })
  try {
    const reference = await streamed(['run', ref.path('agent.yaml'), '--data-dir', ref.path('data')], () => false)
    const expected = finalState(reference.events)
    assert.ok(expected, reference.stderr)
    const completions = new Map<string, number>()
    const count = (events: Event[]) => {
      for (const id of completedIds(events)) completions.set(id, (completions.get(id) ?? 0) + 1)
    }
    // Kill after a random number of subtask events (1–4 per attempt), three times, then let it finish.
    let args = ['run', s.path('agent.yaml'), '--data-dir', s.path('data'), '--run-id', 'para']
    let final: Record<string, unknown> | undefined
    for (let round = 0; round < 3 && !final; round++) {
      const budget = 1 + Math.floor(Math.random() * 4)
      let seen = 0
      const r = await streamed(args, (e) => e.type === 'subtask' && ++seen >= budget)
      count(r.events)
      args = ['resume', 'para', '--data-dir', s.path('data')]
      if (!r.killed) final = finalState(r.events)
    }
    if (!final) {
      const last = await streamed(args, () => false)
      count(last.events)
      final = finalState(last.events)
      assert.ok(final, last.stderr)
    }
    assert.equal(final, expected)
    for (const [id, n] of completions) assert.is(n, 1, `subtask ${id} completed ${n} times`)
  } finally {
    ref.cleanup()
    s.cleanup()
  }
})

test.run()
