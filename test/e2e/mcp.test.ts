/**
 * tea as an MCP server and client, both real processes of the built bundle (issue 32): one tea's agent calls another
 * tea's agent over MCP (`tea mcp --agents DIR` started by the caller's settings.mcp.servers), with tools.mcp and
 * from a ReAct loop whose model is the scripted fake model server; and `tea mcp` as an SDK client sees it: agents
 * as tools with their state_schema, progress at each node, a call that is an ordinary run (listed, resumable).
 */

import { writeFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startFakeModelServer } from '../support/fake-model-server.ts'
import { gone } from '../support/process.ts'
import { tempDir } from '../support/temp-dir.ts'
import { BUNDLE, requireBundle, spawnTea, tea } from './cli.ts'
import { httpJson, startServe } from './serve-harness.ts'

const dir = tempDir('tea-e2e-mcp-')
const agents = join(dir, 'agents')
mkdirSync(join(agents, 'team'), { recursive: true })
writeFileSync(
  join(agents, 'double.yaml'),
  `name: double
description: Doubles x.
state_schema:
  x: int
  y: int
nodes:
  - name: twice
    run: |
      return { y: state.x * 2 }
`,
)
writeFileSync(
  join(agents, 'team', 'steps.yaml'),
  `name: steps
description: Three steps, then a pause before the last.
state_schema: { n: int, log: list }
initial_state: { n: 0 }
nodes:
  - name: a
    run: "return { n: state.n + 1 }"
  - name: b
    run: "return { n: state.n + 1 }"
  - name: c
    run: "return { n: state.n + 1 }"
  - name: last
    interrupt: before
    run: "return { n: state.n * 10 }"
`,
)

/** The settings.mcp entry that starts `tea mcp` on the agents folder, its runs in `data`. */
const server = (data: string) =>
  `{ command: ${JSON.stringify(process.execPath)}, args: [${[BUNDLE, 'mcp', '--agents', agents, '--data-dir', data].map((a) => JSON.stringify(a)).join(', ')}] }`

test("one tea's agent calls another tea's agent over MCP with tools.mcp; the call is a run the other tea lists", async () => {
  requireBundle()
  const served = join(dir, 'served-1')
  const caller = join(dir, 'caller.yaml')
  writeFileSync(
    caller,
    `name: caller
settings:
  mcp:
    servers:
      other: ${server(served)}
nodes:
  - name: ask
    uses: tools.mcp
    with: { server: other, tool: double, x: 21 }
    output:
      answer: "{{ result.result.y }}"
      success: "{{ result.success }}"
`,
  )
  const r = await tea(['run', caller, '--data-dir', join(dir, 'caller-data'), '-q'])
  assert.is(r.code, 0, r.stderr)
  assert.equal(JSON.parse(r.stdout), { answer: 42, success: true })
  const runs = JSON.parse((await tea(['runs', '--data-dir', served, '--json'])).stdout) as Array<{ agent: string; status: string }>
  assert.equal(
    runs.map((x) => [x.agent, x.status]),
    [['double', 'completed']],
  )
})

test("a ReAct agent of one tea uses another tea's agent as a tool, its model the fake model server", async () => {
  requireBundle()
  const model = await startFakeModelServer()
  try {
    model.script(
      { content: { thought: 'Let the other board double it.', action: 'mcp.other.double', action_input: { x: 8 } } },
      { content: { thought: 'It said 16.', action: 'finish', action_input: { answer: 16 } } },
    )
    const caller = join(dir, 'react.yaml')
    writeFileSync(
      caller,
      `name: react-caller
settings:
  llm: { model: "ollama:tiny" }
  mcp:
    servers:
      other: ${server(join(dir, 'served-2'))}
nodes:
  - name: think
    uses: reason.react
    output: result
    with:
      goal: What is 8 doubled?
      tools: [mcp.other]
`,
    )
    const r = await tea(['run', caller, '--data-dir', join(dir, 'react-data'), '-q'], { env: { OLLAMA_HOST: model.url } })
    assert.is(r.code, 0, r.stderr)
    const result = JSON.parse(r.stdout).result as { final_answer: unknown; steps: Array<{ observation: string }> }
    assert.is(result.final_answer, 16)
    assert.is(result.steps[0]!.observation, '{"x":8,"y":16}')
    const prompt = (model.chatRequests()[0]!.body.messages as Array<{ content: string }>)[0]!.content
    assert.match(prompt, '- mcp.other.double: Doubles x.')
    assert.match(prompt, '- mcp.other.team.steps: Three steps')
  } finally {
    await model.close()
  }
})

test('tea mcp, as an MCP client sees it: agents as tools with their state_schema, a call that is a run, a paused one resumable', async () => {
  requireBundle()
  const served = join(dir, 'served-3')
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BUNDLE, 'mcp', '--agents', agents, '--data-dir', served],
    env: { PATH: process.env.PATH ?? '', NODE_V8_COVERAGE: '' }, // empty: bundleEnv in cli.ts says why
    stderr: 'pipe',
  })
  const client = new Client({ name: 'test', version: '1' })
  await client.connect(transport)
  const pid = transport.pid!
  try {
    const { tools } = await client.listTools()
    assert.equal(
      tools.map((t) => t.name),
      ['double', 'team.steps'],
    )
    assert.equal(tools[0]!.inputSchema, { type: 'object', properties: { x: { type: 'integer' }, y: { type: 'integer' } } })
    assert.is(tools[1]!.description, 'Three steps, then a pause before the last.')

    const paused = await client.callTool({ name: 'team.steps', arguments: { n: 1 } })
    assert.is(paused.isError, true)
    const text = (paused.content as Array<{ text: string }>)[0]!.text
    const runId = /tea resume (\S+)/.exec(text)?.[1]
    assert.ok(runId, text)
    assert.match(text, "paused before node 'last'")
    const resumed = await tea(['resume', runId!, '--data-dir', served, '-q'])
    assert.is(resumed.code, 0, resumed.stderr)
    assert.is(JSON.parse(resumed.stdout).n, 40)

    const done = await client.callTool({ name: 'double', arguments: { x: 5 } })
    assert.equal(done.structuredContent, { x: 5, y: 10 })
    const missing = await client.callTool({ name: 'nope', arguments: {} })
    assert.is(missing.isError, true)
  } finally {
    await client.close()
  }
  assert.ok(await gone(pid), 'tea mcp ended when its client closed its stdin')
})

test("a call with a progress token gets a notification at each node's end, before its result", async () => {
  // Spoken line by line rather than through the SDK's client, which drops progress that arrives in the same read as
  // the result (its notification handlers run a tick after its response handler): here every node takes microseconds.
  const child = spawnTea(['mcp', '--agents', agents, '--data-dir', join(dir, 'served-4')])
  try {
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]()
    const send = (m: unknown): void => void child.stdin!.write(`${JSON.stringify(m)}\n`)
    send({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    })
    send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'team.steps', arguments: {}, _meta: { progressToken: 'p' } } })
    const seen: Array<{ id?: number; method?: string; params?: { progress: number; message: string; progressToken: string } }> = []
    while (!seen.some((m) => m.id === 1)) {
      const next = await lines.next()
      if (next.done) break
      seen.push(JSON.parse(next.value))
    }
    const after = seen.filter((m) => m.id !== 0)
    assert.equal(
      after.map((m) => (m.method ? `${m.params!.progressToken} ${m.params!.progress} ${m.params!.message}` : `result ${m.id}`)),
      ['p 1 node a done', 'p 2 node b done', 'p 3 node c done', 'result 1'],
    )
  } finally {
    child.stdin!.end()
    if (!(await gone(child.pid!))) child.kill('SIGKILL')
  }
})

test("tea serve's /mcp: another tea's agent calls a served agent over streamable HTTP with the token; the run is the daemon's", async () => {
  requireBundle()
  writeFileSync(join(dir, 'token'), 'sekrit-token-123\n')
  const d = await startServe(['--agents', agents, '--data-dir', join(dir, 'serve-data'), '--token-file', join(dir, 'token')])
  try {
    const caller = join(dir, 'http-caller.yaml')
    const board = (token: string) => `{ url: "${d.url}/mcp", headers: { Authorization: "Bearer ${token}" } }`
    writeFileSync(
      caller,
      `name: http-caller
settings:
  http: { allow: ["127.0.0.1"] }
  mcp:
    servers:
      board: ${board('sekrit-token-123')}
      stranger: ${board('wrong')}
nodes:
  - name: ask
    uses: tools.mcp
    with: { server: "{{ state.server }}", tool: double, x: 4 }
    output: { answer: "{{ result.result.y }}" }
`,
    )
    const r = await tea(['run', caller, '--data-dir', join(dir, 'http-caller-data'), '-q', '--set', 'server=board'])
    assert.is(r.code, 0, r.stderr)
    assert.equal(JSON.parse(r.stdout), { server: 'board', answer: 8 })
    const runs = (await d.json('GET', '/api/runs', undefined, { authorization: 'Bearer sekrit-token-123' })).body as Array<{
      agent: string
      status: string
    }>
    assert.equal(
      runs.map((x) => [x.agent, x.status]),
      [['double', 'completed']],
    )
    // Without the token the endpoint answers as the API does: 401, which the caller sees as a coded error.
    const refused = await tea(['run', caller, '--data-dir', join(dir, 'http-caller-data'), '-q', '--set', 'server=stranger'])
    assert.is(refused.code, 1)
    assert.match(refused.stderr, 'MCP_SERVER_ERROR')
    // A call with a progress token: the answer is an event stream with a notification per node's end, then the result.
    const streamed = await fetch(`${d.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: 'Bearer sekrit-token-123',
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'team.steps', arguments: {}, _meta: { progressToken: 'q' } },
      }),
    })
    assert.match(streamed.headers.get('content-type') ?? '', 'text/event-stream')
    const messages = (await streamed.text())
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map(
        (l) =>
          JSON.parse(l.slice(6)) as {
            id?: number
            params?: { message: string }
            result?: { isError?: boolean; content: Array<{ text: string }> }
          },
      )
    assert.equal(
      messages.map((m) => (m.id === 7 ? 'result' : m.params!.message)),
      ['node a done', 'node b done', 'node c done', 'result'],
    )
    assert.is(messages[3]!.result!.isError, true)
    assert.match(messages[3]!.result!.content[0]!.text, /paused before node 'last'; continue it with: POST \/api\/runs\/\S+\/resume/)
    // The request guard holds for /mcp too: a page of another origin is refused before any MCP.
    const forged = await httpJson(
      d.url,
      'POST',
      '/mcp',
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      {
        authorization: 'Bearer sekrit-token-123',
        origin: 'http://evil.example',
        accept: 'application/json, text/event-stream',
      },
    )
    assert.is(forged.status, 403)
  } finally {
    await d.stop()
  }
})

test('tea mcp --help says what it serves; without --agents it is a usage error', async () => {
  const help = await tea(['mcp', '--help'])
  assert.is(help.code, 0)
  assert.match(help.stdout, 'MCP server')
  assert.match(help.stdout, '--agents DIR')
  const bare = await tea(['mcp'])
  assert.is(bare.code, 2)
})

test.run()
