/**
 * Python `run:` code as agents write it (issue 11, part 4): TEA's ways of naming the language plus tea's file-wide
 * `settings.run_language`, lowered at load onto `python.run` and run on a pool worker; TEA's template pass over the
 * code; unmarked Python run as Python (issue 29); a build without the interpreter that says so; a time limit
 * that stops a runaway loop without stopping parallel branches; `tea validate` compiling the code first.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { loadAgentText } from '../../src/agent/load.ts'
import { verifyAgent } from '../../src/agent/verify.ts'
import { errorMessage } from '../../src/core/errors.ts'
import { load, run, testRegistry } from '../engine/harness.ts'
import { branchResults, fanOutAgent, loadWithoutEngines } from '../support/languages.ts'

test('language: python, run: {type: python}, and settings.run_language: python all run Python; templates are rendered first, as TEA does', async () => {
  const r = await run(
    `name: ways
nodes:
  - name: words
    language: python
    run: |
      import re
      print("counting")
      return {"words": [w.lower() for w in re.findall(r"[A-Za-z]+", state["text"])]}
  - name: typed
    run:
      type: python
      code: "n = len(state['words'])"
  - name: rendered
    language: python
    run: |
      shout = "{{ state.text | upper }}"
      first = state["words"][:\${keep}]
      kept = "\${unknown}"
variables:
  keep: 1
`,
    { input: { text: 'Hello brave new World' } },
  )
  assert.is(r.status, 'completed', errorMessage(r.error))
  assert.equal(JSON.parse(JSON.stringify([r.state.words, r.state.n, r.state.shout])), [
    ['hello', 'brave', 'new', 'world'],
    4,
    'HELLO BRAVE NEW WORLD',
  ])
  assert.equal(JSON.parse(JSON.stringify([r.state.first, r.state.kept])), [['hello'], '${unknown}'])
  assert.ok(
    r.events.some((e) => e.type === 'log' && e.node === 'words' && e.message === 'counting'),
    'print() is a log event',
  )
  const spec = load(
    'name: f\nsettings:\n  run_language: python\nnodes:\n  - name: p\n    run: "x = 1"\n  - name: j\n    language: javascript\n    run: "return {}"\n',
  )
  assert.equal(
    spec.nodes.map((n) => n.uses ?? 'run'),
    ['python.run', 'run'],
  )
})

test("TEA's expression node (run: {type: expression, value, output_key}) is a Python expression; fan-in nodes see parallel_results", async () => {
  const r = await run(
    `name: expr
nodes:
  - name: split
    run: "return {}"
  - name: a
    run: "return { v: 1 }"
    goto: join
  - name: b
    run: "return { v: 2 }"
    goto: join
  - name: join
    language: python
    run: |
      total = sum(r["v"] for r in parallel_results)
  - name: check
    run:
      type: expression
      value: state["total"] > 2
      output_key: big
edges:
  - { from: split, to: [a, b], fan_in: join }
  - { from: join, to: check }
`,
  )
  assert.is(r.status, 'completed', errorMessage(r.error))
  assert.equal([r.state.total, r.state.big], [3, true])
})

test("a steps: node's language: is its steps' (TEA): each Python step runs and sees what the step before it set", async () => {
  const r = await run(
    'name: s\nnodes:\n  - name: sum\n    language: python\n    steps:\n      - name: double\n        run: |\n          items = [x * 2 for x in state["xs"]]\n      - name: total\n        run: |\n          total = sum(state["items"])\n',
    { input: { xs: [1, 2, 3] } },
  )
  assert.is(r.status, 'completed', errorMessage(r.error))
  assert.equal(JSON.parse(JSON.stringify([r.state.items, r.state.total])), [[2, 4, 6], 12])
})

test("29-1 Python code without a language runs as Python, as TEA's Python runtime runs it", async () => {
  const r = await run('name: h\nnodes:\n  - name: p\n    run: |\n      import re\n      return {"n": len(re.findall("a", state["t"]))}\n', {
    input: { t: 'banana' },
  })
  assert.is(r.status, 'completed', errorMessage(r.error))
  assert.is(r.state.n, 3)
})

test("10 29-1 TEA's Python is recognised by its comments, f-strings, comprehensions, `or []` and inline if-else too", () => {
  const language = (code: string) =>
    loadAgentText(`name: h\nnodes:\n  - name: p\n    run: |\n${code.replace(/^/gm, '      ')}\n`, '/tmp/h.yaml', testRegistry()).spec
      ?.runLanguages?.[0]
  for (const code of [
    '# defaults\nn = state.get("n", 0)',
    'return {"result": f"value={state.get(\'value\', 0)}"}',
    'nodes = state.get("rag", {})\nparts = [n.get("text", "") for n in nodes]\nreturn {"c": parts}',
    'return {"results": parallel_results or []}',
    'text = state.get("input", "")\nscore = 0.5 if "x" in text.lower() else 0.3\nreturn {"score": score}',
  ])
    assert.equal(language(code), { key: 'p', language: 'python', reason: 'decided' }, code)
  const broken = loadAgentText('name: h\nnodes:\n  - name: p\n    run: "return { a: state.x ? 1 : 2 "\n', '/tmp/h.yaml', testRegistry())
  assert.is(broken.problems[0]?.code, 'CODE_ERROR')
  assert.not.match(String(broken.problems[0]?.message), 'it looks like')
})

test("CODE_ERROR node 'x': run: is Python; this build lacks the 'python' feature", () => {
  assert.equal(
    loadWithoutEngines('python', 'x = 1').map((p) => [p.code, p.message, p.where.node]),
    [
      [
        'CODE_ERROR',
        "run: is Python; this build (source) lacks the 'python' feature: the linux-arm64 and linux-x64 builds have it (or port the code to JavaScript)",
        'x',
      ],
    ],
  )
})

test('an error names the node, the line and the exception; a module beyond the standard library is named', async () => {
  const r = await run('name: e\nnodes:\n  - name: calc\n    language: python\n    run: |\n      a = 1\n      return {"b": a + None}\n')
  assert.is(r.error?.code, 'CODE_ERROR')
  assert.match(errorMessage(r.error), "node 'calc' (python.run), run: Python, line 2: TypeError: unsupported operand")
  const m = await run('name: m\nnodes:\n  - name: np\n    language: python\n    run: "import numpy"\n')
  assert.match(errorMessage(m.error), "Python module 'numpy' is not available in tea")
})

test('a runaway loop is stopped at its time limit; parallel branches are isolated and not stopped', async () => {
  const r = await run(
    fanOutAgent('python', {
      left: { run: 'import builtins\nbuiltins.shared = "left was here"\ndone = "yes"' },
      runaway: { run: 'while True:\n    pass', timeout: 2 },
    }),
  )
  assert.is(r.status, 'completed', errorMessage(r.error))
  const results = branchResults(r.state)
  assert.is(results[0]!.done, 'yes')
  const err = results[1]!.__error__ as { code: string; message: string }
  assert.is(err.code, 'NODE_TIMEOUT')
  assert.match(err.message, 'the Python code ran over its time limit of 2 s and was stopped')
})

test('tea validate compiles Python before any run: a syntax error with its line', async () => {
  const spec = load('name: v\nnodes:\n  - name: calc\n    language: python\n    run: |\n      x = 1\n      if x\n          pass\n')
  const found = await verifyAgent(spec, testRegistry())
  assert.equal(
    found.map((f) => [f.node, f.action, /^Python, line 2: SyntaxError/.test(f.message)]),
    [['calc', 'python.run', true]],
  )
})

test.run()
