/**
 * A crash during an automatic replan, through the real CLI (the built bundle) and the fake model server: `tea run`
 * is SIGKILLed while the replan's model call waits for its reply, then `tea resume` replans again and runs the new
 * subtasks. Skipped, with a message, until the bundle registers the plan.* actions.
 */

import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { collect, scratch, spawnTea, tea } from '../e2e/cli.ts'
import { startFakeModelServer } from '../support/fake-model-server.ts'

const AGENT = `name: replan-crash
settings:
  llm: { model: "ollama:fake", timeout: 120, max_retries: 0 }
initial_state:
  plan:
    id: plan_rc
    goal: make tea
    model: "ollama:fake"
    subtasks:
      - { id: cups, description: Set out cups }
      - { id: kettle, description: Boil water, dependencies: [cups] }
      - { id: serve, description: Serve, dependencies: [kettle] }
nodes:
  - name: work
    uses: plan.execute
    with:
      parallel: false
      on_subtask_failure: replan
      subtask_executor:
        run: |
          if (subtask.id === 'kettle') throw new Error('no water')
          return 'done ' + subtask.id
`

const REVISED = {
  rationale: 'fetch water first',
  subtasks: [
    { id: 'fetch', description: 'Fetch water', dependencies: ['cups'] },
    { id: 'boil', description: 'Boil it', dependencies: ['fetch'] },
    { id: 'serve', description: 'Serve', dependencies: ['boil'] },
  ],
}

interface Event {
  type: string
  id?: string
  status?: string
  state?: Record<string, any>
}

test('001.3R-INT-010 a run killed while its automatic replan waits for the model replans again on resume and executes the new subtasks', async () => {
  const listed = await tea(['actions', '--json'])
  assert.match(listed.stdout, '"plan.execute"', `the full bundle must list plan.* actions: ${listed.stderr}`)
  const s = scratch({ 'agent.yaml': AGENT })
  const server = await startFakeModelServer()
  try {
    const env = { OLLAMA_HOST: server.url }
    // The first replan reply would come after a minute; the process is killed as soon as the request arrives.
    server.script({ match: 'no water', content: REVISED, delayMs: 60_000 })
    const child = spawnTea(['run', s.path('agent.yaml'), '--data-dir', s.path('data'), '--run-id', 'rc', '--stream'], { env })
    const poll = setInterval(() => {
      if (server.chatRequests().length > 0) child.kill('SIGKILL')
    }, 10)
    const first = await collect(child, { timeoutMs: 30_000 }).finally(() => clearInterval(poll))
    assert.is(first.signal, 'SIGKILL', first.stderr)
    assert.is(server.chatRequests().length, 1)

    server.script({ match: 'no water', content: REVISED })
    const resumed = await tea(['resume', 'rc', '--data-dir', s.path('data'), '--stream'], { env, timeoutMs: 30_000 })
    assert.is(resumed.code, 0, resumed.stderr)
    const events = resumed.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Event)
    assert.is(server.chatRequests().length, 2, 'the replan was made again')
    assert.match(
      JSON.stringify(server.chatRequests()[1]!.body.messages),
      'Subtask kettle failed with: subtask kettle: run: code threw: no water',
    )
    const started = events.filter((e) => e.type === 'subtask' && e.status === 'in_progress').map((e) => e.id)
    assert.equal(started, ['fetch', 'boil', 'serve'], 'cups and kettle are not run again')
    const state = events.at(-1)!.state!
    assert.is(events.at(-1)!.type, 'complete')
    assert.is(state.success, true, JSON.stringify(state.plan_error))
    assert.is(state.replan_count, 1)
    assert.equal(state.subtask_results, { cups: 'done cups', fetch: 'done fetch', boil: 'done boil', serve: 'done serve' })
  } finally {
    await server.close()
    s.cleanup()
  }
})

test.run()
