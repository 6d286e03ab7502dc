/**
 * Issue 29 item 1: the language of a `run:` body that names none, chosen at load as TEA's runtimes choose it — a
 * body that is not JavaScript and reads as Python or Lua is that language, the file's other unmarked bodies follow
 * the first such body, and `language:`, `run: {type, code}` and `settings.run_language` pin it.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { loadAgentText } from '../../src/agent/load.ts'
import { decisiveLanguage, type RunLanguage } from '../../src/agent/run-language.ts'
import { testRegistry } from '../engine/harness.ts'

// The engines' actions load on first use: loaded once here, as the CLI loads those a file names.
const registry = testRegistry()
test.before(() => registry.load())

const PYTHON = '# TEA Python\nx = state.get("a", 0)\nreturn {"b": x + 1}'
const LUA = 'local n = state.a or 0\nif n > 1 then\n  n = n * 2\nend\nreturn { b = n }'
/** Valid JavaScript and valid Python alike. */
const BOTH = 'return {"a": 1}'

function agent(bodies: Array<{ name: string; run: string | Record<string, string>; language?: string }>, settings = ''): string {
  const nodes = bodies.map(
    (b) => `  - name: ${b.name}\n${b.language ? `    language: ${b.language}\n` : ''}    run: ${JSON.stringify(b.run)}\n`,
  )
  return `name: l\n${settings}nodes:\n${nodes.join('')}`
}

function languages(yaml: string, runLanguages?: Record<string, string>): Record<string, [string, string]> {
  const { spec, problems } = loadAgentText(yaml, '/tmp/l.yaml', registry, runLanguages && { runLanguages })
  assert.equal(problems, [])
  return Object.fromEntries((spec!.runLanguages ?? []).map((c: RunLanguage) => [c.key, [c.language, c.reason]]))
}

function uses(yaml: string): Record<string, string | undefined> {
  const { spec } = loadAgentText(yaml, '/tmp/l.yaml', registry)
  return Object.fromEntries(spec!.nodes.map((n) => [n.name, n.uses ?? (n.run !== undefined ? 'run' : undefined)]))
}

test('29-1 a body that is not JavaScript and reads as Python is Python; one that reads as Lua is Lua', () => {
  assert.is(decisiveLanguage(PYTHON), 'python')
  assert.is(decisiveLanguage(LUA), 'lua')
  assert.is(decisiveLanguage(BOTH), undefined)
  assert.is(decisiveLanguage('return { a: state.x ? 1 : 2 '), undefined, 'broken JavaScript that reads as nothing else stays JavaScript')
  assert.equal(languages(agent([{ name: 'p', run: PYTHON }])), { p: ['python', 'decided'] })
  assert.equal(languages(agent([{ name: 'q', run: LUA }])), { q: ['lua', 'decided'] })
  assert.equal(
    uses(
      agent([
        { name: 'p', run: PYTHON },
        { name: 'q', run: LUA },
      ]),
    ),
    { p: 'python.run', q: 'lua.run' },
  )
})

test('29-1 a body valid as both JavaScript and Python keeps JavaScript in a file with nothing else', () => {
  assert.equal(languages(agent([{ name: 'a', run: BOTH }])), { a: ['javascript', 'default'] })
  assert.equal(uses(agent([{ name: 'a', run: BOTH }])), { a: 'run' })
})

test("29-1 one decisive Python body makes the file's ambiguous bodies Python, before it or after it", () => {
  const yaml = agent([
    { name: 'first', run: BOTH },
    { name: 'py', run: PYTHON },
    { name: 'last', run: 'return {"c": 3}' },
  ])
  assert.equal(languages(yaml), { first: ['python', 'file'], py: ['python', 'decided'], last: ['python', 'file'] })
  assert.equal(uses(yaml), { first: 'python.run', py: 'python.run', last: 'python.run' })
})

test('29-1 language:, run: {type, code} and settings.run_language each win over the decision', () => {
  const named = agent([
    { name: 'py', run: PYTHON },
    { name: 'js', run: BOTH, language: 'javascript' },
    { name: 'typed', run: { type: 'javascript', code: BOTH } },
  ])
  assert.equal(languages(named), { py: ['python', 'decided'], js: ['javascript', 'named'], typed: ['javascript', 'named'] })
  assert.equal(uses(named), { py: 'python.run', js: 'run', typed: 'run' })
  const pinned = agent(
    [
      { name: 'a', run: BOTH },
      { name: 'b', run: LUA },
    ],
    'settings:\n  run_language: lua\n',
  )
  assert.equal(languages(pinned), { a: ['lua', 'settings'], b: ['lua', 'settings'] })
  assert.equal(uses(pinned), { a: 'lua.run', b: 'lua.run' })
})

test("29-1 a step's body is chosen like a node's, keyed by its node and index", () => {
  const yaml = `name: s\nnodes:\n  - name: p\n    run: ${JSON.stringify(PYTHON)}\n  - name: s\n    steps:\n      - name: one\n        run: ${JSON.stringify(BOTH)}\n`
  assert.equal(languages(yaml), { p: ['python', 'decided'], 's.steps[0]': ['python', 'file'] })
})

test("29-1 a reflection loop's code is chosen like a node's, and says what the file's language is", () => {
  const yaml = `name: r\nnodes:\n  - name: loop\n    uses: reflection.loop\n    with:\n      generator: { run: ${JSON.stringify(PYTHON)} }\n      evaluator: { run: ${JSON.stringify(BOTH)} }\n  - name: after\n    run: ${JSON.stringify(BOTH)}\n`
  assert.equal(languages(yaml), {
    'loop.generator': ['python', 'decided'],
    'loop.evaluator': ['python', 'file'],
    after: ['python', 'file'],
  })
})

test('29-1 the languages a run started with win over the decision, so a resume keeps them after the file changed', () => {
  const yaml = agent([{ name: 'a', run: BOTH }])
  assert.equal(languages(yaml, { a: 'python' }), { a: ['python', 'recorded'] })
  assert.equal(languages(yaml, { other: 'python' }), { a: ['javascript', 'default'] })
})

test.run()
