/**
 * The MCP servers this process talks to, each started (or connected to) on its first call and kept for the next:
 * once per `tea run`, once per process under `tea serve`, `tea worker` and `tea mcp`. The CLI stops them all when
 * its command ends (core/command-end.ts). A server that broke (ended, sent garbage) or ran over a call's time limit is
 * dropped, its process ended, and started again by the next call.
 *
 * The SDK is reached only through connection.ts, imported here on first use.
 */

import { atCommandEnd } from '../../../core/command-end.ts'
import { isTeaError, TeaError } from '../../../core/errors.ts'
import { destinationPolicy } from '../../../core/http-policy.ts'
import type { McpCallReply, McpConnection, McpToolInfo } from './connection.ts'
import type { ResolvedServer } from './spec.ts'

/** Most tools tea takes from one server, and most bytes of one tool's description and input schema. */
export const MAX_TOOLS = 256
const MAX_DESCRIPTION = 4096
const MAX_SCHEMA_BYTES = 64 * 1024
/** Most characters of a call's result that reach state (the text of its content). */
export const MAX_RESULT_CHARS = 1024 * 1024

/**
 * A tool name that can stand in `mcp.<server>.<tool>` and in a model's function name: letters, digits, `_`, `-` and
 * single dots, at most 128, without `__` (a native function name spells a dot `__`, reasoning/tools.ts).
 */
const USABLE_TOOL_NAME = /^(?!.*__)(?=.{1,128}$)[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$/

const open = new Map<string, Promise<McpConnection>>()
const tools = new Map<string, Promise<McpToolInfo[]>>()

async function connection(server: ResolvedServer): Promise<McpConnection> {
  let c = open.get(server.key)
  if (!c) {
    atCommandEnd(closeMcpServers)
    const spec = server.spec
    c = ('url' in spec ? checkDestination(new URL(spec.url), server.httpAllow) : Promise.resolve())
      .then(() => import('./connection.ts'))
      .then((m) => m.openConnection(server.name, spec, server.timeoutMs))
    open.set(server.key, c)
    c.catch(() => {
      if (open.get(server.key) === c) open.delete(server.key)
    })
  }
  const conn = await c
  if (!conn.broken) return conn
  drop(server.key, c)
  return connection(server)
}

/**
 * Refuses a server by URL where tea's outbound HTTP may not go (loopback, private ranges… unless
 * `settings.http.allow` names them; docs/security.md): its address, or every address its name resolves to. The
 * SDK then connects with its own lookup, so a name that resolves elsewhere a moment later is not caught.
 */
async function checkDestination(url: URL, allow: readonly string[]): Promise<void> {
  const policy = destinationPolicy(allow)
  policy.check(url)
  await new Promise<void>((ok, fail) => policy.lookup(url)(url.hostname.replace(/^\[(.*)\]$/, '$1'), {}, (e) => (e ? fail(e) : ok())))
}

/** Forgets a connection and ends it (its server's process, over stdio). */
function drop(key: string, c: Promise<McpConnection>): void {
  if (open.get(key) !== c) return
  open.delete(key)
  tools.delete(key)
  void c.then((conn) => conn.close(true)).catch(() => {})
}

/** Runs `work` on the server's connection; a failure of the server itself drops the connection for a fresh start. */
async function onServer<T>(server: ResolvedServer, work: (conn: McpConnection) => Promise<T>): Promise<T> {
  const c = connection(server)
  const conn = await c
  try {
    return await work(conn)
  } catch (e) {
    if (conn.broken || isTeaError(e, 'MCP_TIMEOUT')) {
      const current = open.get(server.key)
      if (current) drop(server.key, current)
    }
    throw e
  }
}

/** The server's tools whose names tea can offer, each description and schema bounded. Listed once per connection. */
export async function serverTools(server: ResolvedServer, signal?: AbortSignal): Promise<McpToolInfo[]> {
  let listed = tools.get(server.key)
  if (!listed) {
    listed = onServer(server, (conn) => conn.listTools(server.timeoutMs, signal)).then((all) => checkedTools(server.name, all))
    tools.set(server.key, listed)
    listed.catch(() => tools.delete(server.key))
  }
  return listed
}

function checkedTools(name: string, all: McpToolInfo[]): McpToolInfo[] {
  if (all.length > MAX_TOOLS)
    throw new TeaError(
      'MCP_REPLY_TOO_LARGE',
      `MCP server '${name}' lists ${all.length > 1024 ? 'over 1024' : all.length} tools; tea takes at most ${MAX_TOOLS}`,
    )
  const usable: McpToolInfo[] = []
  for (const t of all) {
    if (typeof t?.name !== 'string' || !USABLE_TOOL_NAME.test(t.name)) continue
    const schema = isObject(t.inputSchema) ? t.inputSchema : { type: 'object' }
    if (JSON.stringify(schema).length > MAX_SCHEMA_BYTES)
      throw new TeaError('MCP_REPLY_TOO_LARGE', `MCP server '${name}': the input schema of ${t.name} is over ${MAX_SCHEMA_BYTES} bytes`)
    usable.push({
      name: t.name,
      ...(typeof t.description === 'string' && { description: t.description.slice(0, MAX_DESCRIPTION) }),
      inputSchema: schema,
    })
  }
  return usable
}

export interface McpCallResult {
  result: unknown
  tool: string
  server: string
  success: boolean
  error?: string
}

/**
 * Calls `tool` on the server and gives TEA's result shape: `result` is the reply's structured content when it has
 * some, else the text of its content. A tool that reports its own failure (`isError`) is `success: false` with the
 * text as `error`, a value the agent (or a model) reads; the server failing is an error (MCP_*).
 */
export async function callTool(
  server: ResolvedServer,
  tool: string,
  args: Record<string, unknown>,
  options: { signal?: AbortSignal; onProgress?: (progress: number, message?: string) => void } = {},
): Promise<McpCallResult> {
  const reply = await onServer(server, (conn) => conn.callTool(tool, args, { timeoutMs: server.timeoutMs, ...options }))
  const text = contentText(server.name, reply.content)
  const structured = isObject(reply.structuredContent) ? reply.structuredContent : undefined
  if (structured && JSON.stringify(structured).length > MAX_RESULT_CHARS) throw tooLarge(server.name, tool)
  if (reply.isError === true) return { result: structured ?? text, tool, server: server.name, success: false, error: text }
  return { result: structured ?? text, tool, server: server.name, success: true }
}

/** The text parts of a reply's content, joined; other parts (images, resources) as a note of what they were. */
function contentText(server: string, content: unknown): string {
  if (!Array.isArray(content)) return ''
  const parts: string[] = []
  let size = 0
  for (const c of content) {
    const part =
      isObject(c) && c.type === 'text' && typeof c.text === 'string' ? c.text : `[${isObject(c) ? String(c.type) : 'unknown'} content]`
    size += part.length
    if (size > MAX_RESULT_CHARS) throw tooLarge(server, '')
    parts.push(part)
  }
  return parts.join('\n')
}

function tooLarge(server: string, tool: string): TeaError {
  return new TeaError(
    'MCP_REPLY_TOO_LARGE',
    `MCP server '${server}'${tool ? ` (${tool})` : ''} answered with over ${MAX_RESULT_CHARS} characters`,
  )
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x)
}

/** Ends every server this process started or connected to (the CLI, when its command ends). */
export async function closeMcpServers(): Promise<void> {
  const all = [...open.values()]
  open.clear()
  tools.clear()
  await Promise.all(all.map((c) => c.then((conn) => conn.close()).catch(() => {})))
}
