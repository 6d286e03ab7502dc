/**
 * The tool registry (../shared/specs/reasoning-test-design.md AC7): actions registered and found by name, their
 * parameters as JSON Schema, `tools.list` in the shapes the chat APIs take, and the ReAct toolbox's refusals.
 */

import { test } from 'uvu'
import * as assert from 'uvu/assert'
import * as v from 'valibot'
import { createRegistry } from '../../src/actions/registry.ts'
import { toolsList } from '../../src/actions/tools/index.ts'
import { defineAction } from '../../src/actions/types.ts'
import { buildRegistry } from '../../src/features.ts'
import { fromNativeName, nativeName, Toolbox } from '../../src/reasoning/tools.ts'
import { throwsCode } from '../support/expect.ts'
import { testContext } from '../actions/context.ts'

const configured = defineAction({
  name: 'text.render',
  description: 'Renders text with a config.',
  params: v.object({
    input: v.pipe(v.string(), v.description('The text')),
    config: v.object({ upper: v.boolean(), width: v.optional(v.number()) }),
  }),
  run: (p) => ({ out: p.config.upper ? p.input.toUpperCase() : p.input }),
})

test('001.4R-UNIT-026 a registered action is found by name', () => {
  const registry = buildRegistry()
  assert.is(registry.get('json.transform')?.name, 'json.transform')
  assert.is(registry.get('no.such'), undefined)
  throwsCode(() => registry.require('no.such'), 'UNKNOWN_ACTION')
})

test('001.4R-UNIT-027 an action with typed parameters {input: string, config: Config} has a JSON Schema with its properties', async () => {
  const ctx = testContext({ listActions: () => [configured] })
  const { tools } = (await toolsList.run({ names: ['text.render'] }, ctx)) as { tools: Array<{ name: string; parameters: any }> }
  const schema = tools[0]!.parameters
  assert.is(schema.type, 'object')
  assert.equal(schema.required, ['input', 'config'])
  assert.equal(schema.properties.input, { type: 'string', description: 'The text' })
  assert.is(schema.properties.config.type, 'object')
  assert.equal(schema.properties.config.required, ['upper'])
  assert.equal(schema.properties.config.properties.width, { type: 'number' })
  ctx.cleanup()
})

test('001.4R-UNIT-028 tools.list over 3 registered actions gives 3 tools with names, descriptions and schemas', async () => {
  const three = createRegistry([
    configured,
    ...buildRegistry()
      .list()
      .filter((a) => ['json.parse', 'memory.store'].includes(a.name)),
  ])
  const ctx = testContext({ listActions: () => three.list() })
  const { tools } = (await toolsList.run({}, ctx)) as { tools: Array<{ name: string; description: string; parameters: unknown }> }
  assert.equal(tools.map((t) => t.name).sort(), ['json.parse', 'memory.store', 'text.render'])
  for (const t of tools) {
    assert.ok(t.description.length > 0)
    assert.is((t.parameters as { type: string }).type, 'object')
  }
  const openai = (await toolsList.run({ format: 'openai' }, ctx)) as { tools: Array<{ type: string; function: { name: string } }> }
  assert.equal(openai.tools[0]!.type, 'function')
  assert.equal(openai.tools.map((t) => t.function.name).sort(), ['json.parse', 'memory.store', 'text.render'])
  ctx.cleanup()
})

test('001.4R-SEC-001 / 001.4R-SEC-003 the toolbox refuses path-like, unlisted and unknown names, and offers only its list', () => {
  const ctx = testContext({ listActions: () => buildRegistry().list() })
  const box = new Toolbox(ctx, ['json.parse', 'memory.store'])
  for (const bad of ['../../../etc/passwd', '/bin/sh', 'json.parse;rm -rf /', 'a..b', '.hidden', '', 'x y', 42, null]) {
    const r = box.lookup(bad)
    assert.is(r.ok, false, String(bad))
    assert.match((r as { reason: string }).reason, 'not a tool name')
  }
  assert.match(
    (box.lookup('file.write') as { reason: string }).reason,
    "there is no tool 'file.write'; nothing was run. The tools are: json.parse, memory.store",
  )
  assert.is(box.lookup('json.parse').ok, true)
  assert.equal(
    box.lines().map((l) => l.name),
    ['json.parse', 'memory.store'],
  )
  throwsCode(() => new Toolbox(ctx, ['nope.nothing']), 'UNKNOWN_ACTION', 'nope.nothing')
  ctx.cleanup()
})

test('native tool names have no dots, map back, and a finish function is offered', () => {
  assert.is(nativeName('memory.store'), 'memory__store')
  assert.is(fromNativeName('memory__store'), 'memory.store')
  const ctx = testContext({ listActions: () => buildRegistry().list() })
  const tools = new Toolbox(ctx, ['memory.store']).native()
  assert.equal(
    tools.map((t) => t.function.name),
    ['memory__store', 'finish'],
  )
  assert.ok(tools.every((t) => /^[a-zA-Z0-9_-]+$/.test(t.function.name)))
  ctx.cleanup()
})

test.run()
