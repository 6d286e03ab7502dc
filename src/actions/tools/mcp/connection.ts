/**
 * One connection to an MCP server through the official SDK (@modelcontextprotocol/sdk), the only module of the
 * client side that imports it: a program started as a child and spoken to over its stdin and stdout, or a
 * streamable HTTP endpoint. servers.ts imports this module with `import()` when an agent first calls an MCP tool,
 * so a run that uses none never evaluates the SDK (bench/RESULTS.md, MCP).
 *
 * Everything the server sends is untrusted (docs/security.md): a stdio line and an HTTP body are bounded
 * (`MAX_MESSAGE_BYTES`), a reply that is not MCP or a transport that closes makes the connection `broken` and fails
 * the call in flight at once (the caller then drops the connection and starts the server again on the next call),
 * and a call has a time limit the server cannot stretch.
 */

import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { isTeaError, TeaError } from '../../../core/errors.ts'
import type { McpServerSpec } from './spec.ts'

/** Most bytes one message from a server may take: a stdio line, an HTTP body. */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024
/** The last bytes of a stdio server's stderr kept, to say why it ended. */
const STDERR_TAIL = 2048

export interface McpToolInfo {
  name: string
  description?: string
  inputSchema: unknown
}

export interface McpCallReply {
  content?: unknown
  structuredContent?: unknown
  isError?: boolean
}

export interface McpConnection {
  /** Set once the transport failed (closed, or sent something that is not MCP): the connection is of no more use. */
  readonly broken: TeaError | undefined
  listTools(timeoutMs: number, signal?: AbortSignal): Promise<McpToolInfo[]>
  callTool(
    tool: string,
    args: Record<string, unknown>,
    options: { timeoutMs: number; signal?: AbortSignal; onProgress?: (progress: number, message?: string) => void },
  ): Promise<McpCallReply>
  /**
   * Ends the connection (over stdio: closes the server's stdin, which ends a well-behaved server). `force`, for a
   * server that broke or overran: its process is killed first, since it may not be reading its stdin any more.
   */
  close(force?: boolean): Promise<void>
}

/** Connects to (and, over stdio, starts) the server `name`, within `timeoutMs`. */
export async function openConnection(name: string, spec: McpServerSpec, timeoutMs: number): Promise<McpConnection> {
  const client = new Client({ name: 'tea', version: '1' }, { capabilities: {} })
  let stderr = ''
  const transport =
    'command' in spec
      ? new StdioClientTransport({
          command: spec.command,
          ...(spec.args && { args: spec.args }),
          ...(spec.env && { env: spec.env }),
          ...(spec.cwd && { cwd: spec.cwd }),
          stderr: 'pipe',
          maxBufferSize: MAX_MESSAGE_BYTES,
        })
      : new StreamableHTTPClientTransport(new URL(spec.url), {
          fetch: boundedFetch,
          ...(spec.headers && { requestInit: { headers: spec.headers } }),
        })
  if (transport instanceof StdioClientTransport)
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL)
    })

  let broken: TeaError | undefined
  const failures = new Set<(e: TeaError) => void>()
  const breakWith = (why: string): void => {
    if (broken) return
    const tail = stderr.trim() ? `; its stderr ends: ${stderr.trim().slice(-400)}` : ''
    broken = new TeaError('MCP_SERVER_ERROR', `MCP server '${name}' ${why}${tail}`, { details: { server: name } })
    for (const fail of failures) fail(broken)
  }
  // The transport's own errors (a line that is not JSON-RPC, a stream that fails) break the connection; the
  // client's other complaints (a late progress notification) do not. Set before connect, which keeps it.
  transport.onerror = (e) => breakWith(`sent what is not MCP: ${e.message}`)
  client.onclose = () => breakWith('closed the connection (the server ended)')

  /** `work`, unless the connection breaks, the signal fires or the time is up first. */
  const guarded = async <T>(
    what: string,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    work: (s: AbortSignal) => Promise<T>,
  ): Promise<T> => {
    if (broken) throw broken
    const stop = new AbortController()
    let timer: NodeJS.Timeout | undefined
    let fail: ((e: TeaError) => void) | undefined
    const onAbort = (): void => fail?.(isTeaError(signal?.reason) ? signal.reason : new TeaError('MCP_TIMEOUT', `${what} was stopped`))
    const failed = new Promise<never>((_, reject) => {
      fail = (e) => {
        reject(e) // first: aborting makes the SDK reject the call's own promise at once
        stop.abort(e)
      }
      failures.add(fail)
      timer = setTimeout(
        () =>
          fail!(
            new TeaError('MCP_TIMEOUT', `${what}: MCP server '${name}' did not answer within ${timeoutMs / 1000} s`, {
              details: { server: name },
            }),
          ),
        timeoutMs,
      )
      signal?.addEventListener('abort', onAbort, { once: true })
    })
    try {
      const running = work(stop.signal)
      running.catch(() => {}) // settled after the race was lost: nobody left to tell
      return await Promise.race([running, failed])
    } catch (e) {
      if (isTeaError(e)) throw e
      // The SDK's own errors: a program that cannot start, a JSON-RPC error reply, a reply of the wrong shape.
      throw new TeaError('MCP_SERVER_ERROR', `${what}: MCP server '${name}': ${e instanceof Error ? e.message : String(e)}`, {
        details: { server: name },
      })
    } finally {
      clearTimeout(timer)
      if (fail) failures.delete(fail)
      signal?.removeEventListener('abort', onAbort)
    }
  }

  try {
    await guarded('starting', timeoutMs, undefined, (signal) => client.connect(transport, { signal, timeout: timeoutMs + 1000 }))
  } catch (e) {
    const why = broken ?? e // before close, which says 'closed'
    await client.close().catch(() => {})
    throw why
  }

  return {
    get broken() {
      return broken
    },
    listTools: (timeoutMs, signal) =>
      guarded('listing tools', timeoutMs, signal, async (s) => {
        const tools: McpToolInfo[] = []
        let cursor: string | undefined
        // A server that pages without end is stopped by the caller's bound on the number of tools, or the time.
        do {
          const page = await client.listTools(cursor === undefined ? {} : { cursor }, { signal: s, timeout: timeoutMs + 1000 })
          tools.push(...(page.tools as McpToolInfo[]))
          cursor = page.nextCursor
        } while (cursor !== undefined && tools.length <= 1024)
        return tools
      }),
    callTool: (tool, args, { timeoutMs, signal, onProgress }) =>
      guarded(
        `calling ${tool}`,
        timeoutMs,
        signal,
        (s) =>
          client.callTool({ name: tool, arguments: args }, undefined, {
            signal: s,
            timeout: timeoutMs + 1000,
            ...(onProgress && {
              onprogress: (p: { progress: number; message?: string }) =>
                onProgress(p.progress, typeof p.message === 'string' ? p.message.slice(0, 200) : undefined),
            }),
          }) as Promise<McpCallReply>,
      ),
    async close(force) {
      const pid = transport instanceof StdioClientTransport ? transport.pid : null
      if (force && pid !== null) {
        try {
          process.kill(pid, 'SIGKILL')
        } catch {
          // gone already
        }
      }
      await client.close().catch(() => {})
    },
  }
}

/** fetch whose response bodies end with an error past MAX_MESSAGE_BYTES (a server cannot fill tea's memory). */
const boundedFetch: typeof fetch = async (input, init) => {
  const response = await fetch(input, init)
  if (!response.body) return response
  let seen = 0
  const limit = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      seen += chunk.byteLength
      if (seen > MAX_MESSAGE_BYTES) controller.error(new TeaError('MCP_REPLY_TOO_LARGE', `an MCP reply over ${MAX_MESSAGE_BYTES} bytes`))
      else controller.enqueue(chunk)
    },
  })
  return new Response(response.body.pipeThrough(limit), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  })
}
