/**
 * The tools of an agent's MCP servers under tea's names for them, `mcp.<server>.<tool>`: what `tools.list` shows
 * beside tea's actions and what `reason.react` offers a model when its `tools:` names them (`mcp.<server>` names
 * every tool of that server). Listing a server's tools starts it.
 */

import { TeaError } from '../../../core/errors.ts'
import type { AgentSettingsView } from '../../types.ts'
import { serverTools } from './servers.ts'
import { mcpSettings, resolveServer } from './spec.ts'

export interface NamedMcpTool {
  /** `mcp.<server>.<tool>` */
  name: string
  description: string
  /** The server's JSON Schema of the tool's arguments. */
  parameters: Record<string, unknown>
  server: string
  tool: string
}

export function isMcpToolName(name: string): boolean {
  return name.startsWith('mcp.')
}

/**
 * The tools `names` select (`mcp.<server>.<tool>` or `mcp.<server>`), or every server's with `names` absent, in
 * the order named. A server the settings lack or a tool its server lacks is UNKNOWN_ACTION.
 */
export async function mcpTools(
  agentSettings: Pick<AgentSettingsView, 'sections' | 'http_allow' | 'workspace'>,
  names?: readonly string[],
  signal?: AbortSignal,
): Promise<NamedMcpTool[]> {
  const settings = mcpSettings(agentSettings.sections)
  const wanted = names ?? Object.keys(settings?.servers ?? {}).map((s) => `mcp.${s}`)
  const out: NamedMcpTool[] = []
  for (const name of wanted) {
    const [, server = '', ...rest] = name.split('.')
    const tool = rest.join('.')
    if (!settings?.servers[server])
      throw new TeaError('UNKNOWN_ACTION', `'${name}' names MCP server '${server}', which settings.mcp.servers does not have`, {
        details: { action: name },
      })
    const resolved = resolveServer(server, settings, { httpAllow: agentSettings.http_allow, workspace: agentSettings.workspace })
    const listed = await serverTools(resolved, signal)
    const picked = tool ? listed.filter((t) => t.name === tool) : listed
    if (tool && picked.length === 0)
      throw new TeaError(
        'UNKNOWN_ACTION',
        `MCP server '${server}' has no tool '${tool}'; it has: ${listed.map((t) => t.name).join(', ') || 'none'}`,
        {
          details: { action: name },
        },
      )
    for (const t of picked)
      out.push({
        name: `mcp.${server}.${t.name}`,
        description: t.description ?? '',
        parameters: t.inputSchema as Record<string, unknown>,
        server,
        tool: t.name,
      })
  }
  return out
}
