/**
 * tools.mcp and tools.list against real MCP servers (test/support/mcp-server.mjs, written with the SDK) started as
 * child processes over stdio and over streamable HTTP: TEA's result shape, one start per process, a time limit the
 * server cannot stretch, and a server that crashes, answers garbage or too much being a coded error and started
 * afresh for the next call.
 */

import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { once } from 'node:events'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { toolsList } from '../../../src/actions/tools/index.ts'
import { toolsMcp } from '../../../src/actions/tools/mcp/action.ts'
import { closeMcpServers } from '../../../src/actions/tools/mcp/servers.ts'
import type { Action } from '../../../src/actions/types.ts'
import { rejects } from '../../support/expect.ts'
import { gone } from '../../support/process.ts'
import { tempDir } from '../../support/temp-dir.ts'
import { testContext } from '../context.ts'

const SERVER = join(import.meta.dirname, '../../support/mcp-server.mjs')
const dir = tempDir('tea-mcp-')
const startsFile = join(dir, 'starts')

function mcpContext(extra: Record<string, unknown> = {}, httpAllow: string[] = []) {
  const servers = { t: { command: process.execPath, args: [SERVER], env: { MCP_STARTS_FILE: startsFile } }, ...extra }
  return testContext({
    settings: { sections: { mcp: { servers } }, http_allow: httpAllow },
    listActions: () => [toolsList, toolsMcp] as Action[],
  })
}

function starts(): number[] {
  try {
    return readFileSync(startsFile, 'utf8').trim().split('\n').filter(Boolean).map(Number)
  } catch {
    return []
  }
}

const call = (ctx: ReturnType<typeof mcpContext>, params: Record<string, unknown>) => toolsMcp.run(params as never, ctx)

test.after.each(async () => {
  await closeMcpServers()
})

test("tools.mcp calls a stdio server named in settings.mcp.servers, started once for many calls, and gives TEA's result shape", async () => {
  const before = starts().length
  const ctx = mcpContext()
  assert.equal(await call(ctx, { server: 't', tool: 'add', a: 2, b: 3 }), { result: '5', tool: 'add', server: 't', success: true })
  assert.equal(await call(ctx, { server: 't', tool: 'echo', text: 'hé' }), { result: 'hé', tool: 'echo', server: 't', success: true })
  assert.is(starts().length, before + 1)
  const pid = starts().at(-1)!
  await closeMcpServers()
  assert.ok(await gone(pid), 'the server process ended when the servers were closed')
  ctx.cleanup()
})

test('tools.mcp takes a server written out in the call, as TEA writes it', async () => {
  const ctx = mcpContext()
  const r = await call(ctx, { server: { command: process.execPath, args: [SERVER] }, tool: 'add', a: 1, b: 1 })
  assert.equal(r, { result: '2', tool: 'add', server: process.execPath, success: true })
  ctx.cleanup()
})

test('a tool that reports its own failure is success: false with its text as error', async () => {
  const ctx = mcpContext()
  const r = await call(ctx, { server: 't', tool: 'no_such_tool' })
  assert.equal(r, { result: 'no tool no_such_tool', tool: 'no_such_tool', server: 't', success: false, error: 'no tool no_such_tool' })
  ctx.cleanup()
})

test("a server's progress notifications reach the run as log events of the node", async () => {
  const ctx = mcpContext()
  assert.is((await call(ctx, { server: 't', tool: 'slow', ms: 600 })).result, 'waited 600')
  const logs = ctx.events.flatMap((e) => (e.type === 'log' ? [`${e.node} ${e.message}`] : []))
  // The first goes out as the tool starts, 600 ms before its result: whatever else arrives, that one has.
  assert.ok(logs.length >= 1, 'at least one progress notification')
  for (const line of logs) assert.match(line, /^test-node t slow: progress \d+$/)
  ctx.cleanup()
})

test('a server not in settings.mcp.servers is INVALID_PARAMS naming the closest', async () => {
  const ctx = mcpContext()
  await rejects(() => call(ctx, { server: 'u', tool: 'add' }), 'INVALID_PARAMS', "no MCP server 'u'", 'it has: t')
  ctx.cleanup()
})

test('a call over its timeout is MCP_TIMEOUT, and the next call gets a fresh server', async () => {
  const ctx = mcpContext()
  await call(ctx, { server: 't', tool: 'echo', text: 'up' })
  const first = starts().at(-1)!
  await rejects(() => call(ctx, { server: 't', tool: 'slow', ms: 60_000, timeout: 0.3 }), 'MCP_TIMEOUT', "MCP server 't'", '0.3 s')
  const ended = await gone(first)
  assert.ok(ended, 'the server that overran was ended')
  assert.equal((await call(ctx, { server: 't', tool: 'add', a: 1, b: 2 })).result, '3')
  assert.is.not(starts().at(-1), first)
  ctx.cleanup()
})

test('a server that crashes is MCP_SERVER_ERROR, and is started again for the next call', async () => {
  const ctx = mcpContext()
  await call(ctx, { server: 't', tool: 'echo', text: 'up' })
  const first = starts().at(-1)!
  await rejects(() => call(ctx, { server: 't', tool: 'crash' }), 'MCP_SERVER_ERROR', "MCP server 't'")
  assert.equal((await call(ctx, { server: 't', tool: 'add', a: 4, b: 4 })).result, '8')
  assert.is.not(starts().at(-1), first)
  ctx.cleanup()
})

test('a server that answers garbage is MCP_SERVER_ERROR at once (not a wait for the timeout), and is restarted', async () => {
  const ctx = mcpContext()
  await rejects(() => call(ctx, { server: 't', tool: 'garbage', timeout: 120 }), 'MCP_SERVER_ERROR', 'not MCP')
  assert.equal((await call(ctx, { server: 't', tool: 'add', a: 1, b: 0 })).result, '1')
  ctx.cleanup()
})

test('a reply over the size tea reads is MCP_REPLY_TOO_LARGE', async () => {
  const ctx = mcpContext()
  await rejects(() => call(ctx, { server: 't', tool: 'big', bytes: 2_000_000 }), 'MCP_REPLY_TOO_LARGE')
  await rejects(() => call(ctx, { server: 't', tool: 'big', bytes: 5_000_000 }), 'MCP_SERVER_ERROR')
  ctx.cleanup()
})

test('a program that cannot start is MCP_SERVER_ERROR naming the server', async () => {
  const ctx = mcpContext({ gone: { command: join(dir, 'no-such-program') } })
  await rejects(() => call(ctx, { server: 'gone', tool: 'x' }), 'MCP_SERVER_ERROR', "MCP server 'gone'")
  ctx.cleanup()
})

test("tools.list shows the MCP servers' tools beside the actions, with their input schemas", async () => {
  const ctx = mcpContext()
  const { tools } = (await toolsList.run({}, ctx)) as { tools: Array<{ name: string; parameters: unknown }> }
  const names = tools.map((t) => t.name)
  assert.ok(names.includes('tools.mcp'))
  assert.ok(names.includes('mcp.t.add') && names.includes('mcp.t.echo'), names.join(', '))
  assert.equal(tools.find((t) => t.name === 'mcp.t.add')!.parameters, {
    type: 'object',
    properties: { a: { type: 'number' }, b: { type: 'number' } },
    required: ['a', 'b'],
  })
  const only = (await toolsList.run({ names: ['mcp.t.echo'] }, ctx)) as { tools: Array<{ name: string }> }
  assert.equal(
    only.tools.map((t) => t.name),
    ['mcp.t.echo'],
  )
  ctx.cleanup()
})

test('tools.mcp calls a streamable HTTP server by url, where settings.http.allow lets it go', async () => {
  let child: ChildProcess | undefined
  try {
    child = spawn(process.execPath, [SERVER, '--http'], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout!.setEncoding('utf8')
    while (!/port (\d+)\n/.test(out)) {
      const [chunk] = (await once(child.stdout!, 'data')) as [string]
      out += chunk
    }
    const url = `http://127.0.0.1:${/port (\d+)/.exec(out)![1]}/mcp`
    const ctx = mcpContext({ web: { url } }, ['127.0.0.1'])
    assert.equal(await call(ctx, { server: 'web', tool: 'add', a: 20, b: 22 }), { result: '42', tool: 'add', server: 'web', success: true })
    assert.equal((await call(ctx, { server: { url }, tool: 'echo', text: 'over http' })).result, 'over http')
    ctx.cleanup()
    // Where tea's outbound HTTP may not go, neither may an MCP client: loopback needs settings.http.allow.
    const denied = mcpContext({ web: { url } })
    await rejects(() => call(denied, { server: 'web', tool: 'add', a: 1, b: 1 }), 'HTTP_DESTINATION_DENIED', '127.0.0.1')
    await rejects(() => call(denied, { server: { url: url.replace('127.0.0.1', 'localhost') }, tool: 'add' }), 'HTTP_DESTINATION_DENIED')
    denied.cleanup()
  } finally {
    child?.kill()
  }
})

test.run()
