/**
 * `tea serve`'s `/mcp`: the agents folder as the tools of an MCP server over streamable HTTP (docs/serve.md), behind
 * the same Host/Origin guard and token as the API (app.ts checks them before this runs). A tool call is a run the
 * daemon queues and runs like one started with POST /api/runs (its limits, its list, its cancel and resume); the
 * call answers when the run ends, with a progress notification at each node's end. The SDK is loaded with the
 * first request (cli/mcp/server.ts).
 */

import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Registry } from '../../actions/registry.ts'
import { requireAgentLoading } from '../../agent/load.ts'
import type { AgentSpec } from '../../agent/types.ts'
import { errorMessage } from '../../core/errors.ts'
import type { RunEvent } from '../../core/events.ts'
import { sortableId } from '../../core/ids.ts'
import { isPlainObject } from '../../core/util.ts'
import type { Store } from '../../store/types.ts'
import { type AgentCalls, failure, runReply } from '../mcp/agent-runs.ts'
import { agentFileOf, agentTools } from '../mcp/agent-tools.ts'
import { readJson } from './http-kit.ts'
import type { RunManager } from './run-manager.ts'

export interface McpRouteOptions {
  store: Store
  registry: Registry
  manager: RunManager
  agentsDir: string
  bodyLimit: number
}

/** The `/mcp` handler: one stateless MCP exchange per request. */
export function mcpRoute(opts: McpRouteOptions): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const calls = serveCalls(opts)
  // The daemon's runs stop with it (RunManager.shutdown); a call in flight then answers with how its run ended.
  const never = new AbortController().signal
  return async (req, res) => {
    const body = req.method === 'POST' ? await readJson(req, opts.bodyLimit) : undefined
    const { handleHttp } = await import('../mcp/server.ts')
    await handleHttp(calls, never, req, res, body)
  }
}

function serveCalls(o: McpRouteOptions): AgentCalls {
  return {
    list: () => agentTools(o.agentsDir, o.registry, () => {}),
    async call(tool, args, { signal, progress }) {
      const file = agentFileOf(o.agentsDir, tool)
      if (!file) return failure(`no agent '${tool}' in the agents folder; tools/list lists them`)
      if (args !== undefined && !isPlainObject(args)) return failure('the arguments must be an object of input keys')
      let spec: AgentSpec
      const runId = sortableId()
      try {
        spec = await requireAgentLoading(file, o.registry)
        await o.manager.start(spec, runId, args ?? {})
      } catch (e) {
        return failure(`agent '${tool}' was not started: ${errorMessage(e)}`)
      }
      const interrupt = await followToEnd(o.manager, runId, signal, progress)
      const run = await o.store.getRun(runId)
      const state = (await o.store.loadLatest(runId))?.state ?? {}
      if (!run) return failure(`run ${runId} of ${spec.name} did not start (tea serve stopped)`)
      const ended = {
        status: run.status,
        state,
        ...(run.node && { node: run.node }),
        ...(interrupt && { interrupt }),
        ...(run.error && { error: run.error }),
      }
      return runReply(runId, spec.name, ended, `POST /api/runs/${runId}/resume`)
    },
  }
}

/**
 * Waits for the run's feed to end, telling each node's end; the caller cancelling the call cancels the run. Gives
 * which side of its node an interrupt paused the run at (the run record names only the node).
 */
function followToEnd(
  manager: RunManager,
  runId: string,
  signal: AbortSignal,
  progress?: (step: number, message: string) => void,
): Promise<'before' | 'after' | undefined> {
  const feed = manager.feed(runId)
  if (!feed) return Promise.resolve(undefined)
  let interrupt: 'before' | 'after' | undefined
  return new Promise((done) => {
    const onAbort = (): void => manager.cancel(runId)
    signal.addEventListener('abort', onAbort, { once: true })
    const finish = (): void => {
      signal.removeEventListener('abort', onAbort)
      unsubscribe()
      done(interrupt)
    }
    const unsubscribe = feed.subscribe({
      write(frame) {
        if (frame.startsWith('data: ')) {
          const event = JSON.parse(frame.slice(6)) as RunEvent
          if (event.type === 'node_end') progress?.(event.step, `node ${event.node} done`)
          if (event.type === 'interrupt') interrupt = event.when
        }
        return true
      },
      onDrain: (resume) => resume(),
      end: finish,
      drop: finish,
    })
  })
}
