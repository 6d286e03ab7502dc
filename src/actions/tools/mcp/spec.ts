/**
 * Which MCP server a call means: a name from `settings.mcp.servers`, or a server written out in the call itself as
 * TEA writes it (`server: {command, args, env}`; tea also takes `{url}`). Pure: no SDK, no process.
 */

import { resolve } from 'node:path'
import * as v from 'valibot'
import { TeaError } from '../../../core/errors.ts'
import { closest } from '../../../core/util.ts'
import { mcpServerSchema, mcpSettingsSchema } from '../../tea-sections.ts'

export type McpServerSpec = v.InferOutput<typeof mcpServerSchema>
export type McpSettings = v.InferOutput<typeof mcpSettingsSchema>

/** TEA's default time limit of an MCP call (tools_actions.py), seconds. */
export const DEFAULT_MCP_TIMEOUT_S = 30

export interface ResolvedServer {
  /** The name results and errors give it: its key in settings, or its command or URL. */
  name: string
  spec: McpServerSpec
  /** The pool's key: one connection per distinct server (and destination policy: one that refuses never reuses one that let it). */
  key: string
  timeoutMs: number
  /** `settings.http.allow`: where a server by URL may be (core/http-policy.ts). */
  httpAllow: readonly string[]
}

/** The agent's `settings.mcp`, as the loader checked it. */
export function mcpSettings(sections: Readonly<Record<string, unknown>>): McpSettings | undefined {
  return sections.mcp as McpSettings | undefined
}

export function resolveServer(
  server: string | McpServerSpec,
  settings: McpSettings | undefined,
  options: { timeoutS?: number | undefined; httpAllow?: readonly string[]; workspace?: string } = {},
): ResolvedServer {
  const { timeoutS, httpAllow = [], workspace } = options
  // A program runs in the agent's workspace (its file's folder unless settings.workspace), a relative cwd: below
  // it, so that `args: [server.mjs]` beside the agent works from wherever tea was started.
  const placed = (spec: McpServerSpec): McpServerSpec =>
    'command' in spec && workspace ? { ...spec, cwd: resolve(workspace, spec.cwd ?? '.') } : spec
  const seconds = (spec: McpServerSpec): number => (timeoutS ?? spec.timeout ?? settings?.timeout ?? DEFAULT_MCP_TIMEOUT_S) * 1000
  if (typeof server === 'string') {
    const named = settings?.servers[server]
    if (!named) {
      const names = Object.keys(settings?.servers ?? {})
      const near = closest(server, names)
      throw new TeaError(
        'INVALID_PARAMS',
        `no MCP server '${server}' in settings.mcp.servers${near.length ? ` (did you mean '${near[0]}'?)` : ''}; it has: ${names.join(', ') || 'none'}`,
        { details: { server } },
      )
    }
    const spec = placed(named)
    return {
      name: server,
      spec,
      key: `${server}\u0000${JSON.stringify(spec)}\u0000${httpAllow.join(' ')}`,
      timeoutMs: seconds(spec),
      httpAllow,
    }
  }
  const name = 'command' in server ? server.command : server.url
  const spec = placed(server)
  return { name, spec, key: `\u0000${JSON.stringify(spec)}\u0000${httpAllow.join(' ')}`, timeoutMs: seconds(spec), httpAllow }
}
