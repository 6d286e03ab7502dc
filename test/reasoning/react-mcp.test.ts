/**
 * reason.react with the tools of an MCP server (issue 32): the agent names a server in settings.mcp.servers, its
 * tools: list names `mcp.<server>.<tool>` (or `mcp.<server>` for all), and the model, the scripted fake model server
 * through tea's real client, calls them; the server is test/support/mcp-server.mjs, a real child process.
 */

import { join } from 'node:path'
import * as assert from 'uvu/assert'
import { closeMcpServers } from '../../src/actions/tools/mcp/servers.ts'
import { loadAgentText } from '../../src/agent/load.ts'
import { buildRegistry } from '../../src/features.ts'
import { benchSuite } from './harness.ts'

const SERVER = join(import.meta.dirname, '../support/mcp-server.mjs')
const t = benchSuite('reason.react with MCP tools')
t.after.each(async () => {
  await closeMcpServers()
})

const agent = (withBlock: string) => `name: mcp-researcher
settings:
  llm: { model: "ollama:tiny" }
  mcp:
    servers:
      calc: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(SERVER)}], timeout: 20 }
nodes:
  - name: research
    uses: reason.react
    output: result
    with:
${withBlock
  .trim()
  .split('\n')
  .map((l) => `      ${l}`)
  .join('\n')}
`

const step = (thought: string, action: string, action_input: unknown = {}) => ({ content: { thought, action, action_input } })
type Result = { final_answer: unknown; steps: Array<Record<string, unknown>> }

t("the model calls an MCP server's tool named in tools:, and reads its result", async ({ b }) => {
  b.server.script(step('Add them.', 'mcp.calc.add', { a: 2, b: 40 }), step('Done.', 'finish', { answer: 42 }))
  const r = await b.go(agent('goal: What is 2 + 40?\ntools: [mcp.calc.add, json.parse]'))
  assert.is(r.status, 'completed', JSON.stringify(r.error))
  const result = r.state.result as Result
  assert.is(result.final_answer, 42)
  assert.equal(result.steps[0], { step: 1, thought: 'Add them.', action: 'mcp.calc.add', action_input: { a: 2, b: 40 }, observation: '42' })
  const prompt = (b.server.chatRequests()[0]!.body.messages as Array<{ content: string }>)[0]!.content
  assert.match(prompt, '- mcp.calc.add: Adds two numbers.')
  assert.match(prompt, '- json.parse:')
  assert.not.match(prompt, 'mcp.calc.echo')
})

t('mcp.<server> offers every tool of the server, with its input schema, as native tools', async ({ b }) => {
  b.server.script(
    { content: '', toolCalls: [{ name: 'mcp__calc__echo', arguments: { text: 'hi' } }] },
    { content: '', toolCalls: [{ name: 'finish', arguments: { answer: 'said hi' } }] },
  )
  const r = await b.go(agent('goal: g\ntools: [mcp.calc]\nnative_tools: true'))
  assert.is(r.status, 'completed', JSON.stringify(r.error))
  const result = r.state.result as Result
  assert.is(result.final_answer, 'said hi')
  assert.is(result.steps[0]!.observation, 'hi')
  const tools = b.server.chatRequests()[0]!.body.tools as Array<{ function: { name: string; parameters: unknown } }>
  assert.equal(
    tools.map((x) => x.function.name),
    ['mcp__calc__add', 'mcp__calc__echo', 'mcp__calc__slow', 'mcp__calc__crash', 'mcp__calc__garbage', 'mcp__calc__big', 'finish'],
  )
  assert.equal(tools[1]!.function.parameters, { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] })
})

t('a server that crashes under a tool call is an observation the model reads, and the next call gets a fresh server', async ({ b }) => {
  b.server.script(
    step('Crash it.', 'mcp.calc.crash'),
    step('Try again.', 'mcp.calc.add', { a: 1, b: 1 }),
    step('Done.', 'finish', { answer: 2 }),
  )
  const r = await b.go(agent('goal: g\ntools: [mcp.calc]'))
  assert.is(r.status, 'completed', JSON.stringify(r.error))
  const steps = (r.state.result as Result).steps
  assert.match(String(steps[0]!.observation), /^Error: mcp\.calc\.crash failed: .*MCP server 'calc'/)
  assert.is(steps[1]!.observation, '2')
})

t('a tool of a server settings.mcp.servers lacks is UNKNOWN_ACTION when the agent loads', () => {
  const problems = loadAgentText(agent('goal: g\ntools: [mcp.nope.add]'), '/tmp/a.yaml', buildRegistry()).problems
  assert.equal(
    problems.map((p) => p.code),
    ['UNKNOWN_ACTION'],
  )
  assert.match(problems[0]!.message, "names MCP server 'nope', which settings.mcp.servers does not have (it has: calc)")
})

t.run()
