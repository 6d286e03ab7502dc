/**
 * tea as an MCP server, over the official SDK (@modelcontextprotocol/sdk), the only module of the server side that
 * imports it: `tools/list` lists the agents of the folder, `tools/call` runs one (agent-runs.ts). A call with a
 * progress token gets a progress notification at each node's end. Over stdio for `tea mcp`; `tea serve` hands its
 * `/mcp` requests to `handleHttp`, one stateless transport per request, behind its own request guard.
 */

import type { IncomingMessage, ServerResponse } from 'node:http'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { buildInfo } from '../../core/build-info.ts'
import type { AgentCalls } from './agent-runs.ts'

function agentServer(calls: AgentCalls, stop: AbortSignal): Server {
  const server = new Server({ name: 'tea', version: buildInfo().version }, { capabilities: { tools: {} } })
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: (await calls.list()).map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema as never })),
  }))
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const token = request.params._meta?.progressToken
    // The caller's cancel or the process's stop ends the run after its current checkpoint.
    const signal = AbortSignal.any([extra.signal, stop])
    const progress =
      token === undefined
        ? undefined
        : (step: number, message: string): void => {
            extra
              .sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: step, message } })
              .catch(() => {}) // a client gone does not stop the run
          }
    return (await calls.call(request.params.name, request.params.arguments, { signal, ...(progress && { progress }) })) as never
  })
  return server
}

/** Serves `calls` on stdin and stdout until stdin closes (or `stop` fires); resolves once the calls in flight ended. */
export async function serveStdio(calls: AgentCalls, stop: AbortSignal): Promise<void> {
  const inFlight = new Set<Promise<unknown>>()
  const tracked: AgentCalls = {
    list: () => calls.list(),
    call(tool, args, options) {
      const p = calls.call(tool, args, options)
      inFlight.add(p)
      void p.finally(() => inFlight.delete(p)).catch(() => {})
      return p
    },
  }
  const ended = new AbortController()
  const server = agentServer(tracked, AbortSignal.any([stop, ended.signal]))
  const closed = new Promise<void>((resolve) => {
    server.onclose = resolve
    stop.addEventListener('abort', () => resolve(), { once: true })
  })
  // The SDK's stdio server transport does not notice the end of stdin: tea does, as the client leaving.
  process.stdin.once('end', () => void server.close())
  await server.connect(new StdioServerTransport())
  await closed
  ended.abort()
  await Promise.allSettled([...inFlight])
  await server.close().catch(() => {})
}

/** Answers one HTTP request of `tea serve`'s `/mcp` (stateless: no session, a transport per request). */
export async function handleHttp(
  calls: AgentCalls,
  stop: AbortSignal,
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
): Promise<void> {
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: false })
  const server = agentServer(calls, stop)
  res.on('close', () => {
    void transport.close()
    void server.close()
  })
  await server.connect(transport)
  await transport.handleRequest(req, res, body)
}
