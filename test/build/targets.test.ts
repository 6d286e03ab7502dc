import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
// @ts-expect-error plain JavaScript build script without type declarations
import { hasSeaAssets, listTargets, loadTarget } from '../../scripts/build/targets.mjs'
import { tempDir } from '../support/temp-dir.ts'

const root = tempDir('tea-targets-test-')
mkdirSync(join(root, 'targets'))
test.after(() => rmSync(root, { recursive: true, force: true }))

function write(name: string, body: Record<string, unknown>): void {
  writeFileSync(join(root, 'targets', `${name}.json`), JSON.stringify(body))
}
const base = { platform: 'linux', arch: 'arm64', node: '24.21.0', lmdbPrebuild: '@lmdb/lmdb-linux-arm64' }

function refusal(name: string): string {
  try {
    loadTarget(root, name)
  } catch (e) {
    return (e as Error).message
  }
  return assert.unreachable(`target ${name} was accepted`) as never
}

test('a complete target loads', () => {
  write('good', {
    ...base,
    features: { planning: true, reasoning: false, prolog: true, lua: false, python: false, fleet: true, llama: false },
  })
  const t = loadTarget(root, 'good')
  assert.is(t.name, 'good')
  assert.equal(t.features, { planning: true, reasoning: false, prolog: true, lua: false, python: false, fleet: true, llama: false })
})

test('a target that leaves a feature flag unset is refused, naming the flag', () => {
  write('partial', { ...base, features: { planning: true } })
  assert.match(refusal('partial'), /feature flag\(s\) not set: reasoning, prolog, lua, python, fleet, llama/)
  write('none', { ...base })
  assert.match(refusal('none'), /planning, reasoning, prolog, lua, python, fleet, llama/)
})

test('a target that names an unknown feature flag is refused', () => {
  write('extra', {
    ...base,
    features: { planning: true, reasoning: true, prolog: true, lua: true, python: true, fleet: true, llama: true, telepathy: true },
  })
  assert.match(refusal('extra'), /unknown feature flag\(s\): telepathy/)
})

test('a flag must be a boolean, the arch known and the node version exact', () => {
  write('str', { ...base, features: { planning: 'yes', reasoning: true } })
  assert.match(refusal('str'), /not set: planning/)
  const all = { planning: true, reasoning: true, prolog: true, lua: true, python: true, fleet: true, llama: true }
  write('arch', { ...base, arch: 'mips', features: all })
  assert.match(refusal('arch'), /arch 'mips'/)
  write('ver', { ...base, node: '24', features: all })
  assert.match(refusal('ver'), /exact version/)
})

test('an unknown target is refused with the known names', () => {
  assert.match(refusal('linux-sparc'), /unknown target 'linux-sparc' \(known: .*good/)
})

test('the repository targets: x64/arm64 on Node 24.21.0 with SEA assets, armv7 on 20.11.0 without (and without Python), core has every feature off (the fleet and llama.cpp too)', () => {
  const repo = resolve('.')
  assert.equal(listTargets(repo), ['linux-arm64', 'linux-arm64-core', 'linux-armv7', 'linux-x64'])
  const t = Object.fromEntries(listTargets(repo).map((n: string) => [n, loadTarget(repo, n)]))
  assert.is(t['linux-x64'].node, '24.21.0')
  assert.is(t['linux-arm64'].node, '24.21.0')
  assert.is(t['linux-armv7'].node, '20.11.0')
  assert.is(t['linux-armv7'].arch, 'arm')
  const off = { planning: false, reasoning: false, prolog: false, lua: false, python: false, fleet: false, llama: false }
  assert.equal(t['linux-arm64-core'].features, off)
  assert.equal(t['linux-armv7'].features, {
    planning: true,
    reasoning: true,
    prolog: true,
    lua: true,
    python: false,
    fleet: true,
    llama: true,
  })
  assert.equal(t['linux-x64'].features, {
    planning: true,
    reasoning: true,
    prolog: true,
    lua: true,
    python: true,
    fleet: true,
    llama: true,
  })
  assert.is(hasSeaAssets(t['linux-x64']), true)
  assert.is(hasSeaAssets(t['linux-armv7']), false)
})

test.run()
