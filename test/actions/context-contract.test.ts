/**
 * The ActionContext contract (context-contract.ts) against both contexts: the engine's, captured from a node of a
 * real run through the run lifecycle, and a worker's, built by the pool's worker side (dispatchTask + remoteContext)
 * with its services forwarded over a real MessageChannel to the main thread's host methods.
 */

import { MessageChannel } from 'node:worker_threads'
import * as v from 'valibot'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { hostMethods, remoteContext, taskContext, type TaskContext } from '../../src/actions/remote.ts'
import { defineAction, type ActionContext } from '../../src/actions/types.ts'
import { loadAgentText } from '../../src/agent/load.ts'
import { cancelled } from '../../src/core/signals.ts'
import type { RunEvent } from '../../src/core/events.ts'
import type { Where } from '../../src/core/issues.ts'
import { startRun } from '../../src/engine/lifecycle.ts'
import { buildRegistry } from '../../src/features.ts'
import type { LlmRequest } from '../../src/llm/types.ts'
import { serveHost } from '../../src/pool/pool.ts'
import { dispatchTask } from '../../src/pool/worker.ts'
import { createMemoryStore } from '../../src/store/memory-store.ts'
import { contextContract, contractActions, recordingLlm, STATE, VARIABLES, type Side } from './context-contract.ts'

/** An action that hands its context to the test and holds the node open until the test is done with it. */
function captureAction(got: (ctx: ActionContext) => void, hold: Promise<void>) {
  return defineAction({
    name: 'contract.capture',
    description: 'hands its context to the test',
    params: v.object({}),
    async run(_p, ctx) {
      got(ctx)
      await hold
      return {}
    },
  })
}

const AGENT = `
name: contract
initial_state: ${JSON.stringify(STATE)}
variables: ${JSON.stringify(VARIABLES)}
nodes:
  - name: probe
    uses: contract.capture
  - name: helper
    run: "return { helped: (state.x ?? 0) + 1 }"
`

async function engineSide(): Promise<Side> {
  let release!: () => void
  const hold = new Promise<void>((r) => (release = r))
  let got!: (ctx: ActionContext) => void
  const captured = new Promise<ActionContext>((r) => (got = r))
  const registry = buildRegistry([...contractActions(), captureAction(got, hold)])
  const { spec, problems } = loadAgentText(AGENT, '/tmp/contract.yaml', registry)
  assert.equal(problems, [])
  const store = createMemoryStore()
  const events: RunEvent[] = []
  const requests: LlmRequest[] = []
  const aofMessages: unknown[] = []
  const aof = {
    route: async (m: unknown) => ({ outcome: 'accepted' as const, reason: `recorded ${aofMessages.push(m)}` }),
  }
  const controller = new AbortController()
  const run = startRun(
    spec!,
    { store, registry, llm: recordingLlm(requests), emit: (e) => events.push(e), signal: controller.signal, aof },
    { runId: 'contract' },
  )
  const ctx = await captured
  return {
    ctx,
    events,
    requests,
    store,
    aofMessages,
    flush: async () => {},
    cancel: () => controller.abort(cancelled()),
    async settle() {
      release()
      await run
    },
  }
}

/**
 * The worker's side, in this thread: the same code a pool worker runs (dispatchTask → handler → remoteContext),
 * the same host methods the pool serves, a real MessagePort between them. Only the thread is missing, which the
 * pool's own tests (test/pool) cover.
 */
async function workerSide(): Promise<Side> {
  const { ctx: host, events, requests, store, aofMessages, cancel: cancelHost, settle: settleHost } = await engineSide()
  const registry = buildRegistry(contractActions())
  const channel = new MessageChannel()
  serveHost(channel.port1, hostMethods(host))
  let release!: () => void
  const hold = new Promise<void>((r) => (release = r))
  let got!: (ctx: ActionContext) => void
  const captured = new Promise<ActionContext>((r) => (got = r))
  const task = { kind: 'capture', where: { node: 'contract task' }, context: taskContext(host, { ...STATE }), port: channel.port2 }
  const done = dispatchTask(task, {
    capture: async (t: { context: TaskContext; where?: Where }, caller) => {
      got(remoteContext(t.context, t.where, caller, registry))
      await hold
      return { value: null }
    },
  })
  const ctx = await captured
  return {
    ctx,
    events,
    requests,
    store,
    aofMessages,
    // A round trip on the port: every notice sent before it has been handled.
    flush: async () => void (await ctx.store.memoryList('__flush__')),
    cancel() {
      channel.port1.postMessage({ abort: true })
      cancelHost()
    },
    async settle() {
      release()
      const reply = await done
      assert.ok(reply.ok, JSON.stringify(reply))
      channel.port1.close()
      await settleHost()
    },
  }
}

contextContract('engine context', engineSide)
contextContract('worker context', workerSide)

test('engine context: runNode runs another node of the agent and returns its update; an unknown one is UNKNOWN_NODE', async () => {
  const side = await engineSide()
  try {
    // run: code returns objects of its own vm realm; the engine spreads updates into state, as here
    assert.equal({ ...(await side.ctx.runNode('helper', { x: 1 })) }, { helped: 2 })
    const e = await side.ctx.runNode('missing', {}).then(
      () => undefined,
      (x: unknown) => x as { code?: string },
    )
    assert.is(e?.code, 'UNKNOWN_NODE')
  } finally {
    await side.settle()
  }
})

test('worker context: runNode fails with UNKNOWN_NODE saying there is no agent to run nodes of', async () => {
  const side = await workerSide()
  try {
    const e = await side.ctx.runNode('probe', {}).then(
      () => undefined,
      (x: unknown) => x as { code?: string; message?: string },
    )
    assert.is(e?.code, 'UNKNOWN_NODE')
    assert.match(e?.message ?? '', /no agent to run nodes of/)
  } finally {
    await side.settle()
  }
})

test.run()
