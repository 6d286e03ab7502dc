/**
 * The peer for a ReAct step: LangGraph.js's prebuilt `createReactAgent` with the same work per step — a scripted
 * chat model that asks for one tool call (parse a small JSON text) until the last step, a tool doing that parse,
 * and MemorySaver checkpointing every step (LangGraph's in-memory checkpointer; tea's counterpart is its in-memory
 * store). Timing is `invoke()` wall time; the model answers at once, so everything measured is the framework's.
 *
 * LangGraph is imported dynamically so that importing this file costs nothing until the peer is measured.
 */

export async function langGraphReact(steps: number, runIndex: number): Promise<number> {
  const { createReactAgent } = await import('@langchain/langgraph/prebuilt')
  const { MemorySaver } = await import('@langchain/langgraph')
  const { BaseChatModel } = await import('@langchain/core/language_models/chat_models')
  const { AIMessage, HumanMessage } = await import('@langchain/core/messages')
  const { tool } = await import('@langchain/core/tools')
  const { z } = await import('zod')

  class ScriptedModel extends BaseChatModel {
    private n = 0
    _llmType(): string {
      return 'scripted'
    }
    override bindTools(): this {
      return this
    }
    async _generate() {
      const i = ++this.n
      const message =
        i < steps
          ? new AIMessage({
              content: 'parse it',
              tool_calls: [{ id: `call_${i}`, name: 'parse_json', args: { text: '{"a": [1, 2, 3]}' } }],
            })
          : new AIMessage('ok')
      return { generations: [{ message, text: typeof message.content === 'string' ? message.content : '' }] }
    }
  }
  const parseJson = tool((input: { text: string }) => JSON.stringify(JSON.parse(input.text)), {
    name: 'parse_json',
    description: 'Parses JSON text',
    schema: z.object({ text: z.string() }),
  })
  const agent = createReactAgent({ llm: new ScriptedModel({}), tools: [parseJson], checkpointSaver: new MemorySaver() })
  const t = performance.now()
  await agent.invoke(
    { messages: [new HumanMessage('bench')] },
    { recursionLimit: steps * 2 + 10, configurable: { thread_id: `react-${steps}-${runIndex}` } },
  )
  return performance.now() - t
}
