/**
 * Issue 29: TEA's agent.sequential under SIGKILL through the real CLI. Three sub-agents in a chain; the run is
 * killed while the third works. `tea resume` re-runs the node from its checkpoint, and the two sub-agent calls
 * that had answered are taken from the node's call journal: the model is asked only the third time, with the
 * second's answer, and the chain is whole.
 */

import { writeFileSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startFakeModelServer } from '../support/fake-model-server.ts'
import { collect, scratch, spawnTea, tea } from './cli.ts'

const AGENT = `name: chain
settings:
  llm: { model: "ollama:tiny" }
  agents:
    extractor: { system_prompt: "You extract.", retry: { max_attempts: 1 } }
    enricher: { model: "ollama:big", system_prompt: "You enrich.", retry: { max_attempts: 1 } }
    summarizer: { system_prompt: "You summarise.", retry: { max_attempts: 1 } }
nodes:
  - name: pipeline
    uses: agent.sequential
    with:
      agents: [extractor, enricher, summarizer]
      task: "{{ state.input }} {{ previous_response }}"
    output: out
`

test('a run killed during an agent.sequential node resumes without asking again the agents that had answered', async () => {
  const s = scratch()
  const server = await startFakeModelServer()
  try {
    writeFileSync(s.path('agent.yaml'), AGENT)
    server.script(
      { match: 'You extract.', content: 'facts' },
      { match: 'You enrich.', content: 'more facts' },
      { match: 'You summarise.', content: 'never seen', delayMs: 30_000 },
    )
    const env = { OLLAMA_HOST: server.url }
    const args = ['run', s.path('agent.yaml'), '--data-dir', s.path('data'), '--run-id', 'ag', '-q', '-i', '{"input": "bees"}']
    const child = spawnTea(args, { env })
    const ended = collect(child)
    const deadline = Date.now() + 20_000
    while (server.chatRequests().length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    assert.is(server.chatRequests().length, 3, 'the chain did not reach its third agent')
    child.kill('SIGKILL')
    const killed = await ended
    assert.is(killed.signal, 'SIGKILL', killed.stderr)

    server.script({ match: 'You summarise.', content: 'a summary' })
    const resumed = await tea(['resume', 'ag', '--data-dir', s.path('data'), '-q'], { env })
    assert.is(resumed.code, 0, resumed.stderr)
    const out = JSON.parse(resumed.stdout).out
    assert.is(out.success, true)
    assert.is(out.result, 'a summary')
    assert.equal(
      out.chain.map((c: { agent: string; response: string }) => [c.agent, c.response]),
      [
        ['extractor', 'facts'],
        ['enricher', 'more facts'],
        ['summarizer', 'a summary'],
      ],
    )
    const requests = server.chatRequests()
    assert.is(requests.length, 4, 'an agent that had answered was asked again')
    const last = requests[3]!.body as { model: string; messages: Array<{ content: string }> }
    assert.is(last.messages.at(-1)!.content, 'bees more facts')
    assert.is((requests[1]!.body as { model: string }).model, 'big')
  } finally {
    await server.close()
    s.cleanup()
  }
})

test.run()
