/**
 * The sub-agent calls of one node that have answered, kept in the store's memory under the run and node as each
 * one answers (as reason.react keeps its steps). A run killed while an `agent.*` node works resumes that node from
 * its last checkpoint with the same state; the node's calls that had answered are then taken from here instead of
 * being made again. A call is taken only when its prompt is the one recorded, so a resumed node never receives an
 * answer to a question it did not ask. The records are also kept apart by the state the node started from, so
 * the items of a flow.map running one agent.* action (one node, many states) never share them. When the action
 * ends the records are removed: the node's own checkpoint holds the outcome, and the next visit of the node (a
 * loop) asks afresh.
 */

import { createHash } from 'node:crypto'
import type { ActionContext } from '../types.ts'
import type { AgentReply } from './agents.ts'

interface Entry {
  prompt: string
  reply: AgentReply
}

export class CallJournal {
  private readonly namespace: string
  private readonly keys = new Set<string>()

  private constructor(
    private readonly ctx: ActionContext,
    private readonly saved: Map<string, Entry>,
  ) {
    this.namespace = namespaceOf(ctx)
    for (const k of saved.keys()) this.keys.add(k)
  }

  static async open(ctx: ActionContext): Promise<CallJournal> {
    const namespace = namespaceOf(ctx)
    const saved = new Map<string, Entry>()
    for (const key of await ctx.store.memoryList(namespace)) {
      const got = await ctx.store.memoryGet(namespace, key)
      if (got.found && isEntry(got.value)) saved.set(key, got.value)
    }
    return new CallJournal(ctx, saved)
  }

  /** The recorded answer of call `id`, when it was asked `prompt`. */
  recall(id: string, prompt: string): AgentReply | undefined {
    const entry = this.saved.get(id)
    return entry && entry.prompt === prompt ? entry.reply : undefined
  }

  record(id: string, prompt: string, reply: AgentReply): Promise<void> {
    this.keys.add(id)
    return this.ctx.store.memoryPut(this.namespace, id, { prompt, reply })
  }

  async clear(): Promise<void> {
    // Issued together: the store commits the writes of one turn in one transaction.
    await Promise.all([...this.keys].map((k) => this.ctx.store.memoryDelete(this.namespace, k)))
  }
}

const namespaceOf = (ctx: ActionContext): string => journalNamespace(ctx.runId, ctx.node, ctx.state)

/** Where the journal of `node` in run `runId`, started from `state`, is kept in the store's memory. */
export function journalNamespace(runId: string, node: string, state: unknown): string {
  const digest = createHash('sha256')
    .update(JSON.stringify(state) ?? '')
    .digest('hex')
    .slice(0, 16)
  return `agent.calls:${runId}:${node}:${digest}`
}

function isEntry(x: unknown): x is Entry {
  const e = x as Entry | null
  return typeof e === 'object' && e !== null && typeof e.prompt === 'string' && typeof e.reply === 'object' && e.reply !== null
}
