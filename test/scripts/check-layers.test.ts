import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
// @ts-expect-error: a plain .mjs script without types
import { check } from '../../scripts/check-layers.mjs'
import { tempDir } from '../support/temp-dir.ts'

const root = join(dirname(new URL(import.meta.url).pathname), '..', '..')

function tree(files: Record<string, string>): string {
  const dir = tempDir('tea-layers-')
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), text)
  }
  return dir
}

test('the source tree passes the layer check: every import down the order, no cycles', () => {
  const { problems, files } = check(root)
  assert.equal(problems, [])
  assert.ok(files > 100)
})

test('an import against the layer order is reported with both files', () => {
  const dir = tree({ 'src/core/a.ts': "import { x } from '../engine/b.ts'\n", 'src/engine/b.ts': 'export const x = 1\n' })
  try {
    assert.equal(check(dir).problems, ['src/core/a.ts imports src/engine/b.ts: core may not import engine'])
  } finally {
    rmSync(dir, { recursive: true })
  }
})

test('a type-only file cycle and a dynamic import of a feature are reported; comments are not imports', () => {
  const dir = tree({
    'src/engine/a.ts': "import type { B } from './b.ts'\n// import { c } from '../cli/c.ts'\nexport type A = 1\n",
    'src/engine/b.ts': "import type { A } from './a.ts'\nexport type B = 2\nexport const f = () => import('../planning/p.ts')\n",
    'src/planning/p.ts': 'export const p = 1\n',
    'src/feature-list.ts': "export const FEATURES = [{ name: 'planning', load: () => import('./planning/p.ts') }]\n",
  })
  try {
    const { problems } = check(dir)
    assert.ok(problems.includes('src/engine/b.ts imports src/planning/p.ts: engine may not import planning'), problems.join('\n'))
    assert.ok(
      problems.includes(
        "src/engine/b.ts imports src/planning/p.ts of the optional feature planning: only src/feature-list.ts may (add what it needs to the feature's entry there)",
      ),
    )
    assert.ok(problems.includes('file cycle: src/engine/a.ts → src/engine/b.ts → src/engine/a.ts'))
    assert.not.ok(problems.some((p: string) => p.includes('cli/c.ts')))
  } finally {
    rmSync(dir, { recursive: true })
  }
})

test('a feature is named once: only the feature list imports its folder (a nested one too) or reads its build flag', () => {
  const dir = tree({
    'src/feature-list.ts': [
      'export const FEATURES = [',
      "  { name: 'lua', load: typeof __FEATURE_LUA__ === 'undefined' || __FEATURE_LUA__ ? () => import('./lua/index.ts') : undefined },",
      "  { name: 'fleet', load: () => import('./aof/store/nats/store.ts') },",
      ']',
    ].join('\n'),
    'src/lua/index.ts': "import { run } from './run.ts'\nexport const actions = () => [run]\n",
    'src/lua/run.ts': 'export const run = 1\n',
    'src/aof/store/nats/store.ts': 'export const openNatsStore = 1\n',
    'src/actions/x.ts':
      "import type { run } from '../lua/run.ts'\nexport const on = __FEATURE_LUA__\n// __FEATURE_PYTHON__ in a comment names nothing\n",
    'src/cli/y.ts': "export const load = () => import('../aof/store/nats/store.ts')\n",
  })
  try {
    assert.equal(check(dir).problems, [
      'src/actions/x.ts imports src/lua/run.ts: actions may not import lua',
      "src/actions/x.ts imports src/lua/run.ts of the optional feature lua: only src/feature-list.ts may (add what it needs to the feature's entry there)",
      "src/cli/y.ts imports src/aof/store/nats/store.ts of the optional feature fleet: only src/feature-list.ts may (add what it needs to the feature's entry there)",
      "src/actions/x.ts reads the build flag __FEATURE_LUA__: only src/feature-list.ts may (give the feature's entry what it needs)",
    ])
  } finally {
    rmSync(dir, { recursive: true })
  }
})

test('a folder cycle through files that are not themselves a cycle is reported', () => {
  const dir = tree({
    'src/agent/a.ts': "import { e } from '../engine/e.ts'\nexport const a = e\n",
    'src/engine/e.ts': 'export const e = 1\n',
    'src/engine/f.ts': "import { g } from '../agent/g.ts'\nexport const f = g\n",
    'src/agent/g.ts': 'export const g = 1\n',
  })
  try {
    const { problems } = check(dir)
    assert.ok(problems.includes('folder cycle: agent → engine → agent'), problems.join('\n'))
    assert.ok(problems.includes('src/agent/a.ts imports src/engine/e.ts: agent may not import engine'))
  } finally {
    rmSync(dir, { recursive: true })
  }
})

test('inside src/aof/ the rooms hold: the backends never import each other, roles and protocol never a backend', () => {
  const dir = tree({
    'src/aof/protocol/status.ts': 'export const s = 1\n',
    'src/aof/protocol/outcome.ts': "import { r } from '../roles/router.ts'\nexport const o = r\n",
    'src/aof/store/port.ts': "import type { S } from '../protocol/status.ts'\nexport type P = S\n",
    'src/aof/store/shared.ts': "import { s } from '../protocol/status.ts'\nexport const h = s\n",
    'src/aof/store/fs/store.ts': "import { h } from '../shared.ts'\nexport const f = h\n",
    'src/aof/store/nats/store.ts': "import { f } from '../fs/store.ts'\nexport const n = f\n",
    'src/aof/roles/router.ts': "import type { P } from '../store/port.ts'\nimport { f } from '../store/fs/store.ts'\nexport const r = f\n",
    'src/aof/roles/worker.ts': "import { h } from '../store/shared.ts'\nexport const w = h\n",
    'src/aof/index.ts': "import { f } from './store/fs/store.ts'\nimport { r } from './roles/router.ts'\nexport const i = [f, r]\n",
    'src/aof/stray.ts': 'export const x = 1\n',
  })
  try {
    const { problems } = check(dir)
    const rooms = problems.filter((p: string) => p.includes('aof') && !p.startsWith('file cycle'))
    assert.equal(rooms.sort(), [
      'src/aof/protocol/outcome.ts imports src/aof/roles/router.ts: aof protocol may not import aof roles',
      'src/aof/roles/router.ts imports src/aof/store/fs/store.ts: aof roles may not import aof fs',
      'src/aof/roles/worker.ts imports src/aof/store/shared.ts: aof roles may not import aof shared',
      'src/aof/store/nats/store.ts imports src/aof/store/fs/store.ts: aof nats may not import aof fs',
      'src/aof/stray.ts: in no room of src/aof/ (protocol/, store/port.ts, store/shared.ts, store/fs/, store/nats/, roles/)',
    ])
  } finally {
    rmSync(dir, { recursive: true })
  }
})

test.run()
