import { mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { loadAgentText } from '../../src/agent/load.ts'
import { parseAgentYaml } from '../../src/agent/parse-cache.ts'
import { parseYaml } from '../../src/agent/parse.ts'
import { sha256Hex } from '../../src/core/sha256.ts'
import { buildRegistry } from '../../src/features.ts'
import { tempDir } from '../support/temp-dir.ts'

// The YAML parse of an agent file kept for its next load (src/agent/parse-cache.ts).

const root = tempDir('tea-parse-cache-')
test.after(() => rmSync(root, { recursive: true, force: true }))
let n = 0
const freshDir = (): string => join(root, `build-${n++}`)

const AGENT = `name: kept
initial_state:
  who: world
nodes:
  - name: greet
    run: |
      return { greeting: 'hello ' + state.who }
  - name: shape
    uses: json.transform
    with:
      data: "{{ state }}"
      pick: [greeting]
`

const parse = (text: string, dir: string) => parseAgentYaml(text, sha256Hex(text), dir)
const files = (dir: string): string[] => readdirSync(dir).sort()

test('a parse is kept once the load keeps it, and read back with the same data and positions', () => {
  const dir = freshDir()
  const first = parse(AGENT, dir)
  assert.ok(first.keep, 'a plain file can be kept')
  assert.equal(first.locate(['nodes', 1]), { line: 8, col: 5 })
  first.keep!()
  assert.equal(files(dir), [`${sha256Hex(AGENT)}.json`])
  const again = parse(AGENT, dir)
  assert.is(again.keep, undefined, 'a kept parse is not written again')
  assert.equal(again.data, parseYaml(AGENT).data)
  assert.equal(again.errors, [])
  assert.equal(again.locate(['nodes', 1]), { line: 8, col: 5 })
})

test('a position the first load did not ask for is found by parsing the text after all', () => {
  const dir = freshDir()
  parse(AGENT, dir).keep!()
  const kept = parse(AGENT, dir)
  const real = parseYaml(AGENT)
  for (const [path, key] of [
    [['nodes', 1, 'with', 'pick'], false],
    [['initial_state', 'who'], true],
    [['nodes', 0, 'run'], false],
  ] as const) {
    assert.equal(kept.locate(path, key), real.locate(path, key), path.join('.'))
  }
  assert.equal(kept.at(30), real.at(30))
})

test('the data read back is a fresh copy each time: lowering one load does not change the next', () => {
  const dir = freshDir()
  parse(AGENT, dir).keep!()
  const a = parse(AGENT, dir).data as { nodes: Array<Record<string, unknown>> }
  a.nodes[0]!.name = 'changed'
  assert.is((parse(AGENT, dir).data as typeof a).nodes[0]!.name, 'greet')
})

test('what JSON would not give back exactly is never kept: syntax errors, .inf, .nan, -0, aliases', () => {
  const dir = freshDir()
  const texts = [
    'name: [unclosed\nnodes: []\n',
    'name: x\nn: .inf\nnodes: []\n',
    'name: x\nn: .nan\nnodes: []\n',
    'name: x\nn: -0\nnodes: []\n',
    'name: x\nbase: &b { run: "return {}" }\nnodes:\n  - *b\n  - *b\n',
  ]
  for (const text of texts) assert.is(parse(text, dir).keep, undefined, text)
  assert.equal(readdirSync(root).includes(dir.split('/').pop()!), false, 'nothing was written')
})

test('a __proto__ key comes back as the own key it was, not as a prototype', () => {
  const dir = freshDir()
  const text = 'name: x\n__proto__: { polluted: true }\nnodes: []\n'
  parse(text, dir).keep!()
  const data = parse(text, dir).data as Record<string, unknown>
  assert.equal(Object.getOwnPropertyDescriptor(data, '__proto__')?.value, { polluted: true })
  assert.is(Object.getPrototypeOf(data), Object.prototype)
  assert.is(({} as Record<string, unknown>).polluted, undefined)
})

test('a damaged kept file is a miss: the text is parsed again, and the file is written anew', () => {
  const dir = freshDir()
  mkdirSync(dir, { recursive: true })
  const file = join(dir, `${sha256Hex(AGENT)}.json`)
  for (const damaged of ['{"marks":[["v[\\"nodes\\",', '{"marks":[],"data":5}', '{"data":{"name":"x"}}', 'null']) {
    writeFileSync(file, damaged)
    const parsed = parse(AGENT, dir)
    assert.equal(parsed.data, parseYaml(AGENT).data, damaged)
    parsed.keep!()
    assert.equal(JSON.parse(readFileSync(file, 'utf8')).data, parseYaml(AGENT).data)
  }
})

test('a folder keeps the 64 newest parses, and the cache the 4 newest builds; nothing else is removed', () => {
  const builds = join(root, 'pruned')
  const build = (b: number): string => `${b}`.padStart(16, '0')
  for (let b = 0; b < 5; b++) {
    const dir = join(builds, build(b))
    mkdirSync(dir, { recursive: true })
    utimesSync(dir, 1000 + b, 1000 + b) // older than any folder written now
  }
  mkdirSync(join(builds, 'not-a-build'))
  utimesSync(join(builds, 'not-a-build'), 500, 500)
  const dir = join(builds, build(5))
  mkdirSync(dir)
  writeFileSync(join(dir, 'notes.txt'), 'mine')
  for (let i = 0; i < 66; i++) parse(`name: a${i}\nnodes:\n  - name: n\n    run: 'return {}'\n`, dir).keep!()
  assert.is(files(dir).filter((f) => f.endsWith('.json')).length, 64)
  assert.ok(files(dir).includes('notes.txt'))
  assert.equal(files(builds), [build(2), build(3), build(4), build(5), 'not-a-build'])
})

test('a folder that is not named as a build prunes only its own parses, never its parent', () => {
  const parent = join(root, 'library-user')
  const dir = join(parent, 'parses')
  mkdirSync(dir, { recursive: true })
  for (let i = 0; i < 6; i++) writeFileSync(join(parent, `file-${i}`), 'x')
  parse(AGENT, dir).keep!()
  assert.is(files(parent).length, 7)
})

test('an agent loads the same from a kept parse: nodes, their lines, hash, warnings and their places', () => {
  const dir = freshDir()
  // A TEA key tea sets aside (a warning with a place) and a node after it.
  const text = `${AGENT}  - name: later\n    run: 'return {}'\nsettings:\n  ltm:\n    backend: sqlite\n`
  const registry = buildRegistry()
  const first = loadAgentText(text, '/tmp/kept.yaml', registry, { parseCache: dir })
  assert.equal(first.problems, [])
  assert.ok(files(dir).length === 1, 'the load kept its parse')
  const second = loadAgentText(text, '/tmp/kept.yaml', registry, { parseCache: dir })
  const plain = loadAgentText(text, '/tmp/kept.yaml', registry)
  for (const r of [first, second]) {
    assert.equal(
      r.spec!.nodes.map((x) => [x.name, x.line, x.uses]),
      plain.spec!.nodes.map((x) => [x.name, x.line, x.uses]),
    )
    assert.is(r.spec!.hash, plain.spec!.hash)
    assert.equal(r.warnings, plain.warnings)
    assert.equal(r.spec!.initialState, plain.spec!.initialState)
  }
})

test('a file with problems is not kept, and its problems keep their places', () => {
  const dir = freshDir()
  const text = AGENT.replace('json.transform', 'json.transfrom')
  const registry = buildRegistry()
  const r = loadAgentText(text, '/tmp/bad.yaml', registry, { parseCache: dir })
  assert.ok(r.problems.length > 0)
  assert.equal(r.problems, loadAgentText(text, '/tmp/bad.yaml', registry).problems)
  assert.equal(readdirSync(root).includes(dir.split('/').pop()!), false)
})

test.run()
