/**
 * What calling an agent's tool does: an ordinary run of the agent (a new run id in the store, so `tea runs` lists it
 * and `tea resume` continues it), its input the call's arguments, its final state the result. A run that does not
 * complete is a tool error saying how it ended and how to resume it. Node ends are reported as progress.
 */

import type { Registry } from '../../actions/registry.ts'
import { requireAgentLoading } from '../../agent/load.ts'
import type { AgentSpec } from '../../agent/types.ts'
import { errorMessage } from '../../core/errors.ts'
import type { RunEvent } from '../../core/events.ts'
import { sortableId } from '../../core/ids.ts'
import { isPlainObject, type State } from '../../core/util.ts'
import { startRun } from '../../engine/lifecycle.ts'
import type { LlmClient } from '../../llm/types.ts'
import type { Store } from '../../store/types.ts'
import { agentFileOf, agentTools, type AgentTool } from './agent-tools.ts'

export interface ToolReply {
  content: Array<{ type: 'text'; text: string }>
  structuredContent?: Record<string, unknown>
  isError?: boolean
  _meta?: Record<string, unknown>
}

export interface AgentCalls {
  list(): Promise<AgentTool[]>
  call(
    tool: string,
    args: unknown,
    options: { signal: AbortSignal; progress?: (step: number, message: string) => void },
  ): Promise<ToolReply>
}

export interface AgentRunsOptions {
  dir: string
  registry: Registry
  store: Store
  dataDir: string
  llm: (spec: AgentSpec) => LlmClient
  model?: string
  warn(line: string): void
}

export function agentRuns(o: AgentRunsOptions): AgentCalls {
  return {
    list: () => agentTools(o.dir, o.registry, o.warn),
    async call(tool, args, { signal, progress }) {
      const file = agentFileOf(o.dir, tool)
      if (!file) return failure(`no agent '${tool}' in ${o.dir}; tools/list lists them`)
      if (args !== undefined && !isPlainObject(args)) return failure('the arguments must be an object of input keys')
      let spec: AgentSpec
      try {
        spec = await requireAgentLoading(file, o.registry, o.warn)
      } catch (e) {
        return failure(`agent '${tool}' does not load: ${errorMessage(e)}`)
      }
      const runId = sortableId()
      const emit = (e: RunEvent): void => {
        if (e.type === 'node_end') progress?.(e.step, `node ${e.node} done`)
      }
      const result = await startRun(
        spec,
        { store: o.store, registry: o.registry, llm: o.llm, dataDir: o.dataDir, signal, emit, ...(o.model && { model: o.model }) },
        { runId, input: (args as Record<string, unknown> | undefined) ?? {} },
      )
      return runReply(runId, spec.name, {
        ...result,
        ...(result.error && { error: { code: result.error.code, message: errorMessage(result.error) } }),
      })
    },
  }
}

/** How a run that ended answers its tool call: its final state, or (not completed) how it ended and how to resume it. */
export function runReply(
  runId: string,
  agent: string,
  run: { status: string; state: State; node?: string; interrupt?: string; error?: { code: string; message: string } },
  resume = `tea resume ${runId}`,
): ToolReply {
  const meta = { 'tea/run_id': runId, 'tea/status': run.status }
  if (run.status === 'completed')
    return { content: [{ type: 'text', text: JSON.stringify(run.state) }], structuredContent: run.state, _meta: meta }
  const how =
    run.status === 'interrupted'
      ? `paused ${run.interrupt ?? 'at'} node '${run.node}'`
      : `${run.status}${run.error ? `: ${run.error.code}: ${run.error.message}` : ''}`
  return { ...failure(`run ${runId} of ${agent} ${how}; continue it with: ${resume}`), _meta: meta }
}

export function failure(text: string): ToolReply {
  return { content: [{ type: 'text', text }], isError: true }
}
