/**
 * The feature list (src/feature-list.ts) against the folders it names and the build that reads it: each entry's
 * declared action namespaces, pool task kinds and language are what its entry module has.
 */

import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { enabledFeatures, FEATURES, featureForAction, featureTaskHandlers, FEATURE_FACTS, targetsWith } from '../src/feature-list.ts'
// @ts-expect-error plain JavaScript build script without type declarations
import { readFeatureList } from '../scripts/build/features.mjs'
// @ts-expect-error plain JavaScript build script without type declarations
import { FLAGS, featureTargets } from '../scripts/build/targets.mjs'

test("each feature's entry has the actions, task handlers and run: language its entry in the list declares", async () => {
  for (const f of FEATURES) {
    assert.ok(f.load, `${f.name} is on from source`)
    const code = await f.load!()
    const names = (code.actions?.() ?? []).map((a) => a.name)
    assert.equal(names.length > 0, (f.actions ?? []).length > 0, `${f.name}: actions declared iff the entry has some`)
    for (const n of names)
      assert.ok(
        f.actions!.some((p) => n.startsWith(`${p}.`)),
        `${n} is not in ${f.name}'s namespaces`,
      )
    assert.equal(Object.keys(code.taskHandlers ?? {}).sort(), [...(f.tasks ?? [])].sort(), `${f.name}: task kinds`)
    if (f.language) assert.ok(names.includes(`${f.language}.run`), `${f.name} runs run: in ${f.language} by ${f.language}.run`)
  }
})

test('from source every feature is on; UNKNOWN_ACTION names a feature only when the build lacks it', () => {
  assert.equal(enabledFeatures(), ['planning', 'reasoning', 'prolog', 'lua', 'python', 'fleet', 'llama'])
  assert.is(featureForAction('reflection.loop'), 'reasoning')
  assert.is(featureForAction('json.parse'), undefined)
  assert.is(FEATURE_FACTS.lacking('plan.execute'), undefined)
  assert.equal(FEATURE_FACTS.languages, ['prolog', 'lua', 'python'])
  assert.equal(Object.keys(featureTaskHandlers()).sort(), ['lua', 'prolog', 'python'])
})

test("the build reads the same list: one flag per feature, and the engine files of the languages' features", () => {
  const read = readFeatureList() as { name: string; files?: { package: string; names: string[] } }[]
  assert.equal(
    read.map((f) => f.name),
    FEATURES.map((f) => f.name),
  )
  assert.equal(
    FLAGS,
    FEATURES.map((f) => f.name),
  )
  assert.equal(
    read.filter((f) => f.files).map((f) => f.name),
    ['prolog', 'lua', 'python'],
  )
})

test('34-2 which builds have each feature is read from the target files, from source as the build writes it into a bundle', () => {
  const built = featureTargets(join(import.meta.dirname, '..')) as Record<string, string[]>
  for (const f of FEATURES) assert.equal(targetsWith(f.name), built[f.name], f.name)
  assert.ok(targetsWith('python').includes('linux-x64') && !targetsWith('python').includes('linux-arm64-core'))
})

test.run()
