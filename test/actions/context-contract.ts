/**
 * The ActionContext contract (STYLE 10): what an action may rely on, whichever thread it runs in. One suite, run
 * against the engine's context (a real run's node, main thread) and the worker's (remoteContext, its services
 * forwarded over a real MessagePort to the main thread's), so the two cannot drift apart again.
 *
 * A side is a factory that hands the suite a live context for node `probe` of a run with state `{n: 2, word:
 * 'hi'}` and variables `{unit: 'kg'}`, plus handles on what lies behind it: the events the run received, the model
 * requests that reached the run's client, the run's store, a way to cancel the run, and `settle` to end it.
 */

import * as v from 'valibot'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { ACTION_STORE_METHODS, defineAction, type Action, type ActionContext } from '../../src/actions/types.ts'
import type { RunEvent } from '../../src/core/events.ts'
import type { LlmClient, LlmRequest } from '../../src/llm/types.ts'
import type { Store } from '../../src/store/types.ts'
import { errorMessage, isTeaError, type ErrorCode, type TeaError } from '../../src/core/errors.ts'
import { rejects } from '../support/expect.ts'

export interface Side {
  ctx: ActionContext
  /** Events the run's sink received so far (a worker's arrive once `flush` resolves). */
  events: RunEvent[]
  flush(): Promise<void>
  requests: LlmRequest[]
  store: Store
  /** Messages the run's AOF router (`ctx.aof`) was given. */
  aofMessages: unknown[]
  cancel(): void
  settle(): Promise<void>
}

export const STATE = { n: 2, word: 'hi' }
export const VARIABLES = { unit: 'kg' }

/** Actions every side's registry has, beside the built-ins. */
export function contractActions(): Action[] {
  return [
    defineAction({
      name: 'contract.double',
      description: 'doubles n',
      params: v.object({ n: v.number() }),
      run: ({ n }, ctx) => ({ doubled: n * 2, node: ctx.node, seen: ctx.state.word }),
    }),
    defineAction({ name: 'contract.scalar', description: 'returns a bare number', params: v.object({}), run: () => 42 as never }),
  ]
}

/** A model client that records what reaches it and answers with the prompt's length. */
export function recordingLlm(requests: LlmRequest[]): LlmClient {
  return {
    async call(request) {
      requests.push(request)
      const text = request.messages.map((m) => m.content).join('|')
      return {
        content: `len ${text.length}`,
        model: request.model ?? 'none',
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        attempts: 1,
      }
    },
    close: async () => {},
  }
}

export function contextContract(name: string, open: () => Promise<Side>): void {
  const it = (title: string, body: (side: Side) => Promise<void>): void => {
    test(`${name}: ${title}`, async () => {
      const side = await open()
      try {
        await body(side)
      } finally {
        await side.settle()
      }
    })
  }

  it('knows its run, node, state and variables', async ({ ctx }) => {
    assert.is(ctx.node, 'probe')
    assert.equal(ctx.state, STATE)
    assert.equal(ctx.variables, VARIABLES)
    assert.type(ctx.runId, 'string')
    assert.is(ctx.settings.max_steps, 1000)
  })

  it('renders templates over state, variables and extra names, natively for a single expression', async ({ ctx }) => {
    assert.is(ctx.render('{{ state.word }} {{ state.n * 3 }} {{ variables.unit }}'), 'hi 6 kg')
    assert.equal(ctx.render({ a: '{{ state.n }}', b: ['{{ who }}'] }, { who: 'me' }), { a: 2, b: ['me'] })
    const value = { x: '{{ state.n + 1 }}' }
    assert.equal(ctx.render(value), { x: 3 })
    assert.equal(ctx.render(value), { x: 3 }, 'a cached compile renders the same')
  })

  it('a template error is TEMPLATE_ERROR placed at the node and the field', async ({ ctx }) => {
    const e = await rejects(async () => ctx.render('{{ nope.deeper }}', undefined, 'with.prompt'), 'TEMPLATE_ERROR')
    assert.equal(e.where, { node: 'probe', field: 'with.prompt', template: '{{ nope.deeper }}' })
    assert.match(errorMessage(e), /^node 'probe', with\.prompt: /)
  })

  it("lists the actions of the run's registry", async ({ ctx }) => {
    const names = ctx.listActions().map((a) => a.name)
    for (const n of ['llm.call', 'memory.get', 'contract.double']) assert.ok(names.includes(n), n)
  })

  it('invokes an action by name with validated params, on its own state or a given one', async ({ ctx }) => {
    assert.equal(await ctx.invoke('contract.double', { n: 5 }), { doubled: 10, node: 'probe', seen: 'hi' })
    assert.equal(await ctx.invoke('contract.double', { n: 1 }, { word: 'other' }), { doubled: 2, node: 'probe', seen: 'other' })
    assert.equal(await ctx.invoke('contract.scalar', {}), { result: 42 }, 'a non-object result is kept under result')
    await rejects(() => ctx.invoke('contract.double', { n: 'five' }), 'INVALID_PARAMS')
    await rejects(() => ctx.invoke('contract.nope', {}), 'UNKNOWN_ACTION')
  })

  it("model calls reach the run's model client", async ({ ctx, requests }) => {
    const reply = await ctx.llm.call({ model: 'ollama:tiny', messages: [{ role: 'user', content: 'abc' }] })
    assert.is(reply.content, 'len 3')
    assert.is(requests.length, 1)
    assert.is(requests[0]!.model, 'ollama:tiny')
    const viaAction = await ctx.invoke('llm.call', { model: 'ollama:tiny', prompt: 'hello' })
    assert.is(viaAction.content, 'len 5')
  })

  it("the store port is memory and plan records, and reaches the run's store", async ({ ctx, store }) => {
    assert.equal(Object.keys(ctx.store).sort(), [...ACTION_STORE_METHODS].sort())
    assert.not.ok('createRun' in ctx.store, "runs and checkpoints are not an action's business")
    await ctx.store.memoryPut('ns', 'k', { v: 1 })
    assert.equal(await store.memoryGet('ns', 'k'), { found: true, value: { v: 1 } })
    assert.equal(await ctx.invoke('memory.get', { namespace: 'ns', key: 'k' }), { value: { v: 1 }, found: true })
  })

  it("emitted events reach the run's event stream", async ({ ctx, events, flush }) => {
    ctx.emit({ type: 'log', node: 'probe', message: 'from the contract' })
    await flush()
    assert.ok(events.some((e) => e.type === 'log' && e.message === 'from the contract'))
  })

  it("aof.* messages reach the run's AOF router, and its outcome comes back", async ({ ctx, aofMessages }) => {
    assert.ok(ctx.aof, 'the run was given a router')
    assert.equal(await ctx.aof.route({ type: 'status.update', n: 1 }), { outcome: 'accepted', reason: 'recorded 1' })
    assert.equal(aofMessages, [{ type: 'status.update', n: 1 }])
  })

  it('the signal fires when the run is cancelled', async ({ ctx, cancel }) => {
    assert.is(ctx.signal.aborted, false)
    const fired = new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }))
    cancel()
    await fired
    assert.is(ctx.signal.aborted, true)
  })
}
