/**
 * Issue 29: TEA's multi-agent actions over `settings.agents`, run as a user runs them: the real loader and engine,
 * the real model client talking HTTP to the scripted fake model server. Each sub-agent call carries its agent's
 * own system prompt, model and sampling; the results have TEA's shapes (agent_actions.py).
 */

import * as assert from 'uvu/assert'
import { journalNamespace } from '../../../src/actions/agent/journal.ts'
import { verifyAgent } from '../../../src/agent/verify.ts'
import { createMemoryStore } from '../../../src/store/memory-store.ts'
import { load, testRegistry } from '../../engine/harness.ts'
import { benchSuite } from '../../reasoning/harness.ts'

const t = benchSuite('agent.*')

const SETTINGS = `settings:
  llm: { model: "ollama:tiny", temperature: 0.2 }
  agents:
    researcher: { system_prompt: "You research.", temperature: 0.5, retry: { max_attempts: 1 } }
    analyst: { model: "ollama:big", system_prompt: "You analyse.", max_tokens: 50, retry: { max_attempts: 1 } }
    critic: { system_prompt: "You criticise.", retry: { max_attempts: 1 } }
`

type Body = { model: string; messages: Array<{ role: string; content: string }>; options?: Record<string, unknown> }
const bodies = (b: { server: { chatRequests(): Array<{ body: unknown }> } }): Body[] => b.server.chatRequests().map((r) => r.body as Body)

t('agent.dispatch sends the task with the agent’s system prompt and model settings and returns TEA’s shape', async ({ b }) => {
  b.server.script({ content: 'transformers are neural nets', usage: { prompt_tokens: 7, completion_tokens: 5 } })
  const r = await b.go(
    `name: d
${SETTINGS}nodes:
  - name: ask
    uses: agent.dispatch
    with: { agent: analyst, task: "Analyse {{ state.topic }}" }
    output: analysis
`,
    { input: { topic: 'LLMs' } },
  )
  assert.is(r.status, 'completed', JSON.stringify(r.error))
  const a = r.state.analysis as Record<string, unknown>
  assert.is(a.response, 'transformers are neural nets')
  assert.is(a.content, 'transformers are neural nets')
  assert.is(a.agent, 'analyst')
  assert.is(a.success, true)
  assert.is(a.attempts, 1)
  assert.equal(a.usage, { prompt_tokens: 7, completion_tokens: 5 })
  assert.type(a.elapsed_ms, 'number')
  const [sent] = bodies(b)
  assert.is(sent!.model, 'big')
  assert.equal(sent!.messages, [
    { role: 'system', content: 'You analyse.' },
    { role: 'user', content: 'Analyse LLMs' },
  ])
  assert.is(sent!.options?.num_predict, 50)
  // Not set on the agent: settings.llm's temperature.
  assert.is(sent!.options?.temperature, 0.2)
})

t('agent.dispatch to a name that is not an agent is a failed result naming the agents there are', async ({ b }) => {
  const r = await b.go(`name: d
${SETTINGS}nodes:
  - name: ask
    uses: agent.dispatch
    with: { agent: nobody, task: hi }
    output: out
`)
  assert.is(r.status, 'completed', JSON.stringify(r.error))
  const out = r.state.out as Record<string, unknown>
  assert.is(out.success, false)
  assert.is(out.error, "Agent 'nobody' not found. Available agents: researcher, analyst, critic")
  assert.is(bodies(b).length, 0)
})

t('agent.dispatch tries a failing call retry.max_attempts times, then reports the failure as a result', async ({ b }) => {
  b.server.script({ status: 400, body: 'bad' }, { status: 400, body: 'bad' })
  const r = await b.go(`name: d
settings:
  llm: { model: "ollama:tiny" }
  agents:
    flaky: { retry: { max_attempts: 2, backoff: 1 } }
nodes:
  - name: ask
    uses: agent.dispatch
    with: { agent: flaky, task: hi }
    output: out
`)
  assert.is(r.status, 'completed', JSON.stringify(r.error))
  const out = r.state.out as Record<string, unknown>
  assert.is(out.success, false)
  assert.is(out.attempts, 2)
  assert.match(String(out.error), /400/)
  assert.is(bodies(b).length, 2)
})

t('agent.parallel with vote asks every agent and returns the majority, a failed call not voting', async ({ b }) => {
  b.server.script(
    { match: 'You research.', content: 'positive' },
    { match: 'You analyse.', content: 'positive' },
    { match: 'You criticise.', status: 400, body: 'down' },
  )
  const r = await b.go(
    `name: p
${SETTINGS}nodes:
  - name: classify
    uses: agent.parallel
    with: { agents: [researcher, analyst, critic, ghost], task: "Sentiment of {{ state.text }}", aggregation: vote }
    output: vote
`,
    { input: { text: 'great' } },
  )
  assert.is(r.status, 'completed', JSON.stringify(r.error))
  const v = r.state.vote as Record<string, unknown>
  assert.is(v.result, 'positive')
  assert.equal(v.votes, { positive: 2 })
  assert.is(v.unanimous, true)
  assert.is(v.total_votes, 2)
  assert.equal(v.agents_called, ['researcher', 'analyst', 'critic'])
  assert.is((v.raw_results as unknown[]).length, 3)
  assert.is(bodies(b).length, 3)
  assert.ok(bodies(b).every((x) => x.messages.at(-1)!.content === 'Sentiment of great'))
  assert.ok(r.events.some((e) => e.type === 'log' && e.message.includes("Agent 'ghost' not found")))
})

t('agent.parallel with collect lists the answers in the order the agents are named', async ({ b }) => {
  b.server.script({ match: 'You criticise.', content: 'C', delayMs: 50 }, { match: 'You research.', content: 'R' })
  const r = await b.go(`name: p
${SETTINGS}nodes:
  - name: all
    uses: agent.parallel
    with: { agents: [critic, researcher], task: go }
    output: all
`)
  assert.is(r.status, 'completed', JSON.stringify(r.error))
  const all = r.state.all as Record<string, unknown>
  assert.equal(all.responses, ['C', 'R'])
  assert.is(all.count, 2)
  assert.is(all.aggregation, 'collect')
})

t('agent.parallel with consensus asks again until enough agree', async ({ b }) => {
  b.server.script(
    { match: 'You research.', content: 'yes' },
    { match: 'You analyse.', content: 'no' },
    { match: 'You research.', content: 'yes' },
    { match: 'You analyse.', content: 'yes' },
  )
  const r = await b.go(`name: p
${SETTINGS}nodes:
  - name: agree
    uses: agent.parallel
    with: { agents: [researcher, analyst], task: "Ship it?", aggregation: consensus, consensus_threshold: 0.9 }
    output: c
`)
  assert.is(r.status, 'completed', JSON.stringify(r.error))
  const c = r.state.c as Record<string, unknown>
  assert.is(c.result, 'yes')
  assert.is(c.consensus_reached, true)
  assert.is(c.agreement, 1)
  assert.is(c.rounds, 2)
  assert.is(bodies(b).length, 4)
})

t('agent.sequential passes each answer on as previous_response, through transform', async ({ b }) => {
  b.server.script({ match: 'You research.', content: 'facts' }, { match: 'You analyse.', content: 'insight' })
  const r = await b.go(
    `name: s
${SETTINGS}nodes:
  - name: chain
    uses: agent.sequential
    with:
      agents: [researcher, analyst]
      task: "{{ state.topic }} / {{ previous_response }} / {{ chain_index }} of {{ chain_length }}"
      transform: "<{{ current_response }}>"
    output: chain
`,
    { input: { topic: 'bees' } },
  )
  assert.is(r.status, 'completed', JSON.stringify(r.error))
  const sent = bodies(b).map((x) => x.messages.at(-1)!.content)
  assert.equal(sent, ['bees /  / 0 of 2', 'bees / <facts> / 1 of 2'])
  const chain = r.state.chain as Record<string, unknown>
  assert.is(chain.result, '<insight>')
  assert.is(chain.sequential_result, '<insight>')
  assert.equal(chain.chain, [
    { agent: 'researcher', response: 'facts', success: true },
    { agent: 'analyst', response: 'insight', success: true },
  ])
  assert.is(chain.success, true)
})

t('agent.sequential stops at a failed agent and says where', async ({ b }) => {
  b.server.script({ match: 'You research.', content: 'facts' }, { match: 'You analyse.', status: 400, body: 'no' })
  const r = await b.go(`name: s
${SETTINGS}nodes:
  - name: chain
    uses: agent.sequential
    with: { agents: [researcher, analyst, critic], task: "go {{ previous_response }}" }
    output: chain
`)
  assert.is(r.status, 'completed', JSON.stringify(r.error))
  const chain = r.state.chain as Record<string, unknown>
  assert.is(chain.success, false)
  assert.is(chain.failed_at, 1)
  assert.is((chain.chain as unknown[]).length, 2)
  assert.is(bodies(b).length, 2)
})

t('agent.coordinate: the leader splits the task, the workers answer their subtasks, the leader aggregates', async ({ b }) => {
  b.server.script(
    { match: 'Break down this task', content: 'Plan: ["find sources", "judge them"]' },
    { match: 'You research.', content: 'three sources' },
    { match: 'You criticise.', content: 'two are good' },
    { match: 'Aggregate these worker responses', content: 'two good sources' },
  )
  const r = await b.go(
    `name: c
${SETTINGS}nodes:
  - name: lead
    uses: agent.coordinate
    with: { leader: analyst, workers: [researcher, critic], task: "Survey {{ state.topic }}", validation_prompt: "Check it." }
    output: done
`,
    { input: { topic: 'bees' } },
  )
  assert.is(r.status, 'completed', JSON.stringify(r.error))
  const done = r.state.done as Record<string, unknown>
  assert.is(done.result, 'two good sources')
  assert.is(done.rounds, 1)
  assert.is(done.success, true)
  assert.equal(done.workers, ['researcher', 'critic'])
  const sent = bodies(b)
  assert.is(sent.length, 4)
  assert.match(sent[0]!.messages.at(-1)!.content, /Break down this task into subtasks for 2 workers\.\n\nTask: Survey bees/)
  const worker = (prompt: string) => sent.find((x) => x.messages[0]!.content === prompt)!.messages.at(-1)!.content
  assert.is(worker('You research.'), 'find sources')
  assert.is(worker('You criticise.'), 'judge them')
  const last = sent[3]!.messages.at(-1)!.content
  assert.match(last, /- Worker 1: three sources\n- Worker 2: two are good/)
  assert.ok(last.endsWith('\n\nCheck it.'))
})

t('a run resumed in the middle of an agent.* node does not ask again the agents that had answered', async ({ b }) => {
  // The node fails after two of three sub-agents answered (the third's reply is not a model failure but a
  // cancelled run would be the same); the resumed run asks only the third.
  const store = createMemoryStore()
  const yaml = `name: p
${SETTINGS}nodes:
  - name: all
    uses: agent.parallel
    with: { agents: [researcher, analyst, critic], task: go, max_concurrent: 1 }
    output: all
`
  const ctrl = new AbortController()
  b.server.script(
    { match: 'You research.', content: 'R' },
    { match: 'You analyse.', content: 'A' },
    { match: 'You criticise.', content: (() => (ctrl.abort(), 'late')) as () => string, delayMs: 200 },
  )
  const first = await b.go(yaml, { store, runId: 'r1', signal: ctrl.signal } as never)
  assert.is.not(first.status, 'completed')
  assert.is(bodies(b).length, 3)
  // The two answers are on record, under the run, the node and the state it started from.
  const journal = journalNamespace('r1', 'all', {})
  assert.equal((await store.memoryList(journal)).sort(), ['1.0', '1.1'])
  b.server.script({ match: 'You criticise.', content: 'C' })
  const again = await b.go(yaml, { store, runId: 'r1', resume: true })
  assert.is(again.status, 'completed', JSON.stringify(again.error))
  assert.equal((again.state.all as Record<string, unknown>).responses, ['R', 'A', 'C'])
  assert.is(bodies(b).length, 4, 'an agent that had answered was asked again')
  // The node's records are gone once it finished.
  assert.equal(await store.memoryList(journal), [])
})

t('agent.crewai_delegate runs TEA’s native path: hierarchical is agent.coordinate with the first agent leading', async ({ b }) => {
  b.server.script(
    { match: 'Break down this task', content: '["a"]' },
    { match: 'You research.', content: 'done a' },
    { match: 'Aggregate these worker responses', content: 'all done' },
  )
  const r = await b.go(
    `name: c
${SETTINGS}nodes:
  - name: crew
    uses: agent.crewai_delegate
    with: { agents: [analyst, researcher], task: "Do {{ state.x }}", process: hierarchical, backend: crewai }
    output: crew
`,
    { input: { x: 'it' } },
  )
  assert.is(r.status, 'completed', JSON.stringify(r.error))
  const crew = r.state.crew as Record<string, unknown>
  assert.is(crew.result, 'all done')
  assert.is(crew.leader, 'analyst')
  assert.match(bodies(b)[0]!.messages.at(-1)!.content, 'Task: Do it')
  assert.is(bodies(b)[0]!.model, 'big')
  assert.ok(r.events.some((e) => e.type === 'log' && e.message.includes('CrewAI is a Python library')))
})

t('tea validate names an agent a node asks for that settings.agents does not define', async () => {
  const registry = testRegistry()
  const spec = load(
    `name: v
${SETTINGS}nodes:
  - name: one
    uses: agent.dispatch
    with: { agent: reseacher, task: x }
  - name: many
    uses: agent.coordinate
    with: { leader: analyst, workers: [critic, "{{ state.w }}", ghost], task: x }
`,
    registry,
  )
  const found = await verifyAgent(spec, registry)
  assert.equal(
    found.map((f) => `${f.node}: ${f.message}`),
    [
      "one: agent: 'reseacher' is not an agent of settings.agents (researcher, analyst, critic)",
      "many: workers: 'ghost' is not an agent of settings.agents (researcher, analyst, critic)",
    ],
  )
})

t('settings.agents is checked when the file loads', async ({ b }) => {
  let failed: unknown
  try {
    await b.go(`name: bad
settings:
  agents:
    hot: { temperature: 3 }
nodes:
  - name: a
    uses: agent.dispatch
    with: { agent: hot, task: x }
`)
  } catch (e) {
    failed = e
  }
  assert.match(String(failed), /settings\.agents\.hot\.temperature.*between 0\.0 and 2\.0/)
})

t.run()
