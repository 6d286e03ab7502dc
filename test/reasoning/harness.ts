/**
 * Reasoning actions run as a user runs them: agent YAML through the real loader and engine, the real model client
 * talking HTTP to the scripted fake model server (Ollama's API), the real registry with every built-in action as a
 * possible tool, plus a few test tools that count their calls.
 */

import { rmSync } from 'node:fs'
import { suite } from 'uvu'
import * as v from 'valibot'
import { defineAction, type Action } from '../../src/actions/types.ts'
import { TeaError } from '../../src/core/errors.ts'
import { buildRegistry } from '../../src/features.ts'
import { createLlmClient } from '../../src/llm/client.ts'
import type { LlmClient } from '../../src/llm/types.ts'
import type { Store } from '../../src/store/types.ts'
import { startFakeModelServer, type FakeModelServer } from '../support/fake-model-server.ts'
import { run, testActions, type Ran } from '../engine/harness.ts'
import { tempDir } from '../support/temp-dir.ts'

/** Calls of the test tools, by tool name, with their parameters. */
export const toolCalls: Array<{ tool: string; params: Record<string, unknown> }> = []

export function reasoningTestTools(): Action[] {
  return [
    defineAction({
      name: 'calc.add',
      description: 'Adds two numbers: {a, b} → {sum}.',
      params: v.object({ a: v.number(), b: v.number() }),
      run: (p) => (toolCalls.push({ tool: 'calc.add', params: p }), { sum: p.a + p.b }),
    }),
    defineAction({
      name: 'tool.fails',
      description: 'Always throws.',
      params: v.record(v.string(), v.unknown()),
      run: (p) => {
        toolCalls.push({ tool: 'tool.fails', params: p })
        throw new TeaError('HTTP_ERROR', 'the upstream service is down')
      },
    }),
    defineAction({
      name: 'tool.hangs',
      description: 'Never answers (until cancelled).',
      params: v.record(v.string(), v.unknown()),
      run: (p, ctx) => {
        toolCalls.push({ tool: 'tool.hangs', params: p })
        return new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true }))
      },
    }),
  ]
}

export interface Bench {
  server: FakeModelServer
  llm: LlmClient
  workspace: string
  go(yaml: string, options?: { input?: Record<string, unknown>; store?: Store; runId?: string; resume?: boolean }): Promise<Ran>
  close(): Promise<void>
}

export async function bench(): Promise<Bench> {
  const server = await startFakeModelServer()
  // The fake server answers any number of calls at once; saying so keeps the call scheduler from sending one at a time.
  const llm = createLlmClient({ env: { OLLAMA_HOST: server.url, OLLAMA_NUM_PARALLEL: '8' }, backoffBaseMs: 1 })
  const workspace = tempDir('tea-reasoning-')
  toolCalls.length = 0
  const registry = () => buildRegistry([...testActions(), ...reasoningTestTools()])
  return {
    server,
    llm,
    workspace,
    go: (yaml, options = {}) => run(yaml.replaceAll('$WORKSPACE', workspace), { ...options, registry: registry(), llm }),
    async close() {
      await llm.close()
      await server.close()
      rmSync(workspace, { recursive: true, force: true })
    },
  }
}

/** A uvu suite whose every test gets a fresh Bench as `b`, closed after it. */
export function benchSuite(name: string) {
  const t = suite<{ b: Bench }>(name)
  t.before.each(async (c) => {
    c.b = await bench()
  })
  t.after.each(async (c) => {
    await c.b.close()
  })
  return t
}

export interface OneNode {
  /** The agent's and its node's names. */
  agent: string
  node: string
  uses: string
  /** The model of settings.llm; default "ollama:tiny". */
  model?: string
  /** settings.workspace: the bench's workspace. */
  workspace?: boolean
  /** The node's `output:`; none when absent. */
  output?: string
}

/** An agent of one node running a reasoning action; `withBlock` is the node's `with:` as YAML lines. */
export function oneNodeAgent(o: OneNode, withBlock: string): string {
  const settings = [`  llm: { model: "${o.model ?? 'ollama:tiny'}" }`, ...(o.workspace ? ['  workspace: $WORKSPACE'] : [])]
  const params = withBlock
    .trim()
    .split('\n')
    .map((l) => `      ${l}`)
  return [
    `name: ${o.agent}`,
    'settings:',
    ...settings,
    'nodes:',
    `  - name: ${o.node}`,
    `    uses: ${o.uses}`,
    '    with:',
    ...params,
    ...(o.output ? [`    output: ${o.output}`] : []),
    '',
  ].join('\n')
}
