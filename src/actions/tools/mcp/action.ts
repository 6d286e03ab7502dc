/**
 * `tools.mcp`, as TEA writes it: `with: {server, tool, timeout?, …the tool's parameters}` calls one tool of an MCP
 * server and returns `{result, tool, server, success}`. `server` names one of `settings.mcp.servers` or is written
 * out (`{command, args, env}` or `{url}`).
 */

import * as v from 'valibot'
import { defineAction } from '../../types.ts'
import { mcpServerSchema } from '../../tea-sections.ts'
import { callTool } from './servers.ts'
import { mcpSettings, resolveServer } from './spec.ts'

const params = v.looseObject({
  server: v.pipe(
    v.union([v.pipe(v.string(), v.minLength(1, 'must not be empty')), mcpServerSchema]),
    v.description('A server of settings.mcp.servers by name, or {command, args, env} / {url}'),
  ),
  tool: v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.description('The tool to call')),
  timeout: v.optional(
    v.pipe(v.number(), v.gtValue(0, 'must be > 0'), v.maxValue(3600, 'must be ≤ 3600 seconds'), v.description('Seconds (default 30)')),
  ),
})

export const toolsMcp = defineAction({
  name: 'tools.mcp',
  description: "Call a tool of an MCP server; every other parameter is the tool's. Returns {result, tool, server, success}.",
  params,
  async run({ server, tool, timeout, ...args }, ctx) {
    const resolved = resolveServer(server, mcpSettings(ctx.settings.sections), {
      timeoutS: timeout,
      httpAllow: ctx.settings.http_allow,
      workspace: ctx.settings.workspace,
    })
    // A server's progress (tea mcp: each node's end) shows in the run's events as a log line of this node.
    const onProgress = (progress: number, message?: string): void =>
      ctx.emit({ type: 'log', node: ctx.node, message: `${resolved.name} ${tool}: ${message ?? `progress ${progress}`}` })
    return { ...(await callTool(resolved, tool, args, { signal: ctx.signal, onProgress })) }
  },
})
