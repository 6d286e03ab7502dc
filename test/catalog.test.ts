import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { BUILTIN_GROUPS } from '../src/actions/catalog.ts'
import { type ActionGroup, createLazyRegistry } from '../src/actions/registry.ts'
import { defineAction } from '../src/actions/types.ts'
import { requireAgentLoading } from '../src/agent/load.ts'
import { lazyRegistry } from '../src/catalog.ts'
import { errorMessage, isTeaError } from '../src/core/errors.ts'
import { buildRegistry } from '../src/features.ts'
import * as v from 'valibot'
// @ts-expect-error plain JavaScript build script without type declarations
import { scan } from '../scripts/check-layers.mjs'
import { tempDir } from './support/temp-dir.ts'

const names = (r: { list(): { name: string }[] }): string[] => r.list().map((a) => a.name)
/** Every action of this build: the registry of features.ts, loaded whole. */
const whole = async (): Promise<string[]> => {
  const r = buildRegistry()
  await r.load()
  return names(r)
}

test('loaded whole, the lazy registry has exactly the actions of the registry built at once', async () => {
  const lazy = lazyRegistry()
  assert.equal(names(lazy), [], 'nothing is loaded before it is asked for')
  await lazy.load()
  assert.equal(names(lazy), await whole())
})

test("the library's registry has every action at once, the features' too; a lazy one says when one is asked for unloaded", async () => {
  const r = buildRegistry()
  assert.ok(r.get('json.transform') && r.get('plan.execute') && r.get('lua.run'))
  const lazy = lazyRegistry()
  assert.ok(isTeaError(lazy.unknown('plan.execute'), 'INTERNAL'), 'asking before the load says so, not that the build lacks planning')
  await lazy.load(['plan.execute'])
  assert.is(lazy.require('plan.execute').name, 'plan.execute')
})

test('each core group loads only actions named with one of its prefixes, and no two groups share a prefix', async () => {
  const prefixes = BUILTIN_GROUPS.flatMap((g) => g.prefixes)
  assert.is(new Set(prefixes).size, prefixes.length)
  for (const g of BUILTIN_GROUPS) {
    for (const a of await g.load()) assert.ok(g.prefixes.includes(a.name.split('.')[0]!), `${a.name} is not in group ${g.prefixes}`)
  }
})

test('asking for json.transform loads the json actions alone; the same again loads nothing more', async () => {
  const r = lazyRegistry()
  await r.load(['json.transform'])
  assert.equal(names(r), ['json.parse', 'json.transform'])
  await r.load(['json.parse', 'json.transform'])
  assert.equal(names(r), ['json.parse', 'json.transform'])
  assert.is(r.require('json.transform').name, 'json.transform')
})

test('an action that runs others by name (flow.map, tools.list, plan.execute) loads every group', async () => {
  for (const name of ['flow.map', 'tools.list', 'retry.loop', 'plan.execute']) {
    const r = lazyRegistry()
    await r.load([name])
    assert.equal(names(r), await whole(), name)
  }
})

test('an unknown name loads every group, so that its error names the closest actions', async () => {
  for (const name of ['json.transfrom', 'nope.x']) {
    const r = lazyRegistry()
    await r.load([name])
    assert.equal(names(r), await whole())
  }
  const r = lazyRegistry()
  await r.load(['json.transfrom'])
  try {
    r.require('json.transfrom')
    assert.unreachable()
  } catch (e) {
    assert.ok(isTeaError(e, 'UNKNOWN_ACTION'))
    assert.match(errorMessage(e), "did you mean 'json.transform'")
  }
})

test('loads at once of the same group load its module once', async () => {
  let loads = 0
  const ping = defineAction({ name: 'x.ping', description: 'ping', params: v.object({}), run: () => ({ pong: true }) })
  const group: ActionGroup = {
    prefixes: ['x'],
    load: async () => {
      loads++
      return [ping]
    },
  }
  const extra = defineAction({ name: 'mine.one', description: 'mine', params: v.object({}), run: () => ({}) })
  const r = createLazyRegistry([group], [extra])
  assert.equal(names(r), ['mine.one'], 'extra actions are there from the start')
  await Promise.all([r.load(['x.ping']), r.load(['x.ping']), r.load()])
  assert.is(loads, 1)
  assert.equal(names(r), ['mine.one', 'x.ping'])
})

function agentFile(yaml: string): { path: string; done: () => void } {
  const dir = tempDir('tea-catalog-')
  const path = join(dir, 'agent.yaml')
  writeFileSync(path, yaml)
  return { path, done: () => rmSync(dir, { recursive: true, force: true }) }
}

test('requireAgentLoading loads no action for a run:-only agent, and the actions its uses: name otherwise', async () => {
  const runOnly = agentFile('name: a\nnodes:\n  - name: a\n    run: "return { a: 1 }"\n')
  const withLlm = agentFile(
    'name: b\nnodes:\n  - name: a\n    run: "return { a: 1 }"\n  - name: b\n    uses: llm.call\n    with: { model: "ollama:x", prompt: hi }\n',
  )
  try {
    const r1 = lazyRegistry()
    const spec = await requireAgentLoading(runOnly.path, r1)
    assert.is(spec.name, 'a')
    assert.equal(names(r1), [])
    const r2 = lazyRegistry()
    assert.is((await requireAgentLoading(withLlm.path, r2)).nodes[1]?.uses, 'llm.call')
    assert.equal(names(r2), ['llm.call', 'llm.chat', 'llm.embed', 'llm.retry', 'llm.stream', 'llm.tools'])
  } finally {
    runOnly.done()
    withLlm.done()
  }
})

test("requireAgentLoading loads every action for run: code that uses ctx, and for TEA's node kinds lowered to flow actions", async () => {
  const withCtx = agentFile("name: a\nnodes:\n  - name: a\n    run: \"return ctx.invoke('json.parse', { text: '1' })\"\n")
  const teaSteps = agentFile(
    'name: b\nnodes:\n  - name: a\n    steps:\n      - name: s\n        uses: json.parse\n        with: { text: "1" }\n',
  )
  try {
    for (const file of [withCtx, teaSteps]) {
      const r = lazyRegistry()
      await requireAgentLoading(file.path, r)
      assert.equal(names(r), await whole(), file.path)
    }
  } finally {
    withCtx.done()
    teaSteps.done()
  }
})

test('requireAgentLoading reports an unknown action with the closest names, as requireAgent does', async () => {
  const bad = agentFile('name: a\nnodes:\n  - name: a\n    uses: json.transfrom\n    with: { data: 1 }\n')
  try {
    await requireAgentLoading(bad.path, lazyRegistry())
    assert.unreachable()
  } catch (e) {
    assert.ok(isTeaError(e, 'AGENT_INVALID'), String(e))
    assert.match(errorMessage(e), "unknown action 'json.transfrom' (did you mean 'json.transform'?)")
  } finally {
    bad.done()
  }
})

/** The source files a process has loaded once `entries` are evaluated: their static (not type-only, not dynamic) imports, followed. */
function loadedAtStart(entries: string[]): string[] {
  const root = join(__dirname, '..')
  const { edges } = scan(join(root, 'src')) as { edges: { from: string; to: string; typeOnly: boolean; dynamic: boolean }[] }
  const next = new Map<string, string[]>()
  for (const e of edges) if (!e.typeOnly && !e.dynamic) next.set(e.from, [...(next.get(e.from) ?? []), e.to])
  const reached = new Set<string>()
  const visit = (f: string): void => {
    if (reached.has(f)) return
    reached.add(f)
    for (const t of next.get(f) ?? []) visit(t)
  }
  for (const entry of entries) visit(join(root, entry))
  return [...reached].map((f) => f.slice(root.length + 1))
}

test('what tea run loads at start (its static imports) holds no action group but the two the loader reads, no feature and no model client', () => {
  const files = loadedAtStart(['src/cli/bin.ts', 'src/cli/run.ts'])
  assert.ok(files.includes('src/catalog.ts') && files.includes('src/agent/load.ts'), 'the walk follows the run path')
  // agent/load.ts reads these two for TEA's keys (the extraction prompt, LTM backends); each is one small module.
  const allowed = new Set(['src/actions/validate/extraction.ts', 'src/actions/ltm/index.ts'])
  const groups = BUILTIN_GROUPS.flatMap((g) => g.prefixes).map((p) => `src/actions/${p}/`)
  const wrong = files.filter(
    (f) =>
      (groups.some((g) => f.startsWith(g)) && !allowed.has(f)) ||
      /^src\/(planning|reasoning|prolog|lua|python)\//.test(f) ||
      f === 'src/features.ts' ||
      f === 'src/llm/client.ts',
  )
  assert.equal(wrong, [])
})

test('the MCP SDK is loaded only when an agent uses MCP: no command, nor the tools actions, statically reaches a module that imports it', () => {
  const entries = [
    'src/cli/bin.ts',
    'src/cli/run.ts',
    'src/cli/serve.ts',
    'src/cli/worker.ts',
    'src/cli/mcp.ts',
    'src/actions/tools/index.ts',
  ]
  const files = loadedAtStart(entries)
  assert.ok(
    files.includes('src/actions/tools/mcp/servers.ts') && files.includes('src/cli/mcp/agent-runs.ts'),
    'the walk follows the MCP paths',
  )
  // The two modules that import @modelcontextprotocol/sdk: the client's connection and tea mcp's server.
  assert.equal(
    files.filter((f) => f === 'src/actions/tools/mcp/connection.ts' || f === 'src/cli/mcp/server.ts'),
    [],
  )
})

test('the NATS client is loaded only when --nats is given: no command statically reaches src/aof/store/nats/ or @nats-io', () => {
  const files = loadedAtStart(['src/cli/bin.ts', 'src/cli/run.ts', 'src/cli/aof.ts', 'src/cli/worker.ts', 'src/cli/resume.ts'])
  assert.ok(files.includes('src/cli/worker.ts') && files.some((f) => f.startsWith('src/aof/')), 'the walk follows the aof and worker paths')
  assert.equal(
    files.filter((f) => f.startsWith('src/aof/store/nats/')),
    [],
  )
})

test("the MQTT client is loaded only by an agent that publishes or a serve config with mqtt:: no command's start reaches src/actions/mqtt/ or serve's triggers", () => {
  const files = loadedAtStart(['src/cli/bin.ts', 'src/cli/run.ts', 'src/cli/serve.ts', 'src/cli/resume.ts'])
  assert.ok(files.includes('src/cli/serve/run-manager.ts'), 'the walk follows the serve path')
  assert.equal(
    files.filter(
      (f) => f.startsWith('src/actions/mqtt/') || f === 'src/cli/serve/mqtt-triggers.ts' || f === 'src/cli/serve/trigger-journal.ts',
    ),
    [],
  )
})

test.run()
