/**
 * Issue 10: what TEA's Python runtime gives `run:` code beyond tea's own contract, as TEA's own agents rely on it —
 * a write into `state` in place is kept; a `dynamic_parallel` result reads as TEA's `ParallelFlowResult`; a name
 * the state holds but the code was never given is explained; and `reflection.loop` code in Python runs with TEA's
 * contract for reflection code (src/python/glue.ts, src/reasoning/reflection.ts).
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { errorMessage } from '../../src/core/errors.ts'
import { verifyAgent } from '../../src/agent/verify.ts'
import { load, nodesRun, run, testRegistry } from '../engine/harness.ts'

/** Values made by the interpreter cross as JSON; compare them as such. */
const plain = (v: unknown) => JSON.parse(JSON.stringify(v))

test("10 a write into state in place is kept, under what the code returns, and a when: edge routes on it (TEA's strict_known_good/dict_assignment)", async () => {
  const r = await run(
    `name: dict-assignment
settings:
  run_language: python
nodes:
  - name: writer
    run: |
      state["computed"] = "yes"
      state["nested"]["b"] = 2
      state["source"] = "in place"
      return {"source": "x"}
  - name: branch
    run: 'return {}'
edges:
  - from: __start__
    to: writer
  - from: writer
    to: branch
    when: "state.computed == 'yes'"
  - from: branch
    to: __end__
`,
    { input: { source: 's', nested: { a: 1 } } },
  )
  assert.is(r.status, 'completed', errorMessage(r.error))
  assert.equal(nodesRun(r.events), ['writer', 'branch'])
  assert.equal(plain([r.state.computed, r.state.nested, r.state.source]), ['yes', { a: 1, b: 2 }, 'x'])
})

test("10 a dynamic_parallel result reads in Python as TEA's ParallelFlowResult: attributes, and keys falling through to the branch's state", async () => {
  const r = await run(`name: dp
settings:
  run_language: python
nodes:
  - name: fan
    type: dynamic_parallel
    items: [1, 0, 4]
    item_var: n
    fan_in: collect
    output: checked
    steps:
      - run: |
          if state["n"] == 0:
              raise ValueError("zero")
          return {"inv": 1 / state["n"]}
  - name: collect
    run: |
      results = state.get("checked", [])
      ok = [r.state["inv"] for r in results if r.success]
      failed = [(r.branch, r.index, r["n"], r.error, r.error_type) for r in results if not r.success]
      falls = [r["inv"] for r in results if "inv" in r] + [results[0].get("missing", "default")]
      seen = [hasattr(results[0], "state"), results[0].retry_count, json.loads(json.dumps(results[0]))["branch"]]
      first = results[0]
`)
  assert.is(r.status, 'completed', errorMessage(r.error))
  assert.equal(plain(r.state.ok), [1, 0.25])
  const failed = plain(r.state.failed) as unknown[][]
  assert.equal(failed[0]!.slice(0, 3), ['fan[1]', 1, 0])
  assert.match(String(failed[0]![3]), 'ValueError: zero')
  assert.is(failed[0]![4], 'CODE_ERROR')
  assert.equal(plain(r.state.falls), [1, 0.25, 'default'])
  assert.equal(plain(r.state.seen), [true, 0, 'fan[0]'])
  assert.equal((r.state.first as { state: unknown }).state, { inv: 1, n: 1, index: 0 }, 'a result returned goes back as plain data')
})

test("10 a parallel fan-out's branch states read in Python as TEA's ParallelFlowResult too: r.state, r.success, r.error", async () => {
  const r = await run(`name: fan
nodes:
  - name: split
    run: "return {}"
  - name: a
    run: "return { v: 1 }"
    goto: join
  - name: b
    on_error: { mode: continue }
    run: "throw new Error('b broke')"
    goto: join
  - name: join
    language: python
    run: |
      seen = [(r.state.get("v"), r.success, r.error is not None, r["v"] if "v" in r else None) for r in parallel_results]
      same = state["parallel_results"] == parallel_results
edges:
  - { from: split, to: [a, b], fan_in: join }
`)
  assert.is(r.status, 'completed', errorMessage(r.error))
  assert.equal(plain(r.state.seen), [
    [1, true, false, 1],
    [null, false, true, null],
  ])
  assert.is(r.state.same, true)
  assert.equal(plain(r.state.parallel_results)[0], { v: 1 }, 'the branch states are left as they were (no write in place)')
})

test('10 a name the state holds but run: code never had is explained: read it as state[...], TEA has no such variable either', async () => {
  const r = await run(
    'name: n\nsettings:\n  run_language: python\nnodes:\n  - name: format_output\n    run: |\n      result["attempts"] = 1\n      return result\n',
    { input: { result: { a: 1 } } },
  )
  assert.is(r.error?.code, 'CODE_ERROR')
  assert.match(
    errorMessage(r.error),
    "line 1: NameError: name 'result' is not defined; run: code sees the state as state, not as variables: write state['result'] (TEA's Python runtime does not define 'result' either)",
  )
})

const REFLECTION = `name: custom-evaluator
settings:
  run_language: python
nodes:
  - name: generate
    uses: reflection.loop
    with:
      generator:
        run: |
          iteration = state.get("reflection_iteration", 1)
          result = {"content": "word " * (iteration * 3 + len(state.get("correction_hints", [])))}
      evaluator:
        type: custom
        language: python
        run: |
          words = len(output.get("content", "").split())
          errors = [] if words >= state["min_words"] else [{"message": f"{words} words", "type": "word_count"}]
          result = {"valid": not errors, "score": min(words / state["min_words"], 1.0), "errors": errors}
      corrector:
        run: |
          result = {"correction_hints": ["more" for e in reflection_errors if e["type"] == "word_count"]}
      max_iterations: 4
      on_failure: return_best
`

test("10 reflection.loop code in Python (settings.run_language or language: python) runs with TEA's contract: the variable result, output in scope", async () => {
  const r = await run(REFLECTION, { input: { min_words: 7 } })
  assert.is(r.status, 'completed', errorMessage(r.error))
  assert.is(r.state.valid, true)
  assert.is(r.state.reflection_iteration, 2, 'attempt 1: 3 words; the corrector adds 1; attempt 2: 7')
  const history = plain(r.state.reflection_history) as Array<{ score: number; errors: unknown[] }>
  assert.equal(history[0]!.errors, [{ message: '3 words', type: 'word_count' }])
  assert.is(String(r.state.content).split(' ').filter(Boolean).length, 7)
})

test("10 tea validate compiles reflection code in Python as it runs: as is, so a return outside a function is TEA's SyntaxError too", async () => {
  const spec = load(REFLECTION.replace('result = {"correction_hints"', 'return {"correction_hints"'))
  const found = await verifyAgent(spec, testRegistry())
  assert.equal(
    found.map((f) => [f.node, f.action, f.message.replace(/'return' outside function.*/, "'return' outside function")]),
    [['generate', 'reflection.loop', "corrector: Python, line 1: SyntaxError: 'return' outside function"]],
  )
  assert.equal(await verifyAgent(load(REFLECTION), testRegistry()), [])
})

test('10 a Python evaluator that raises is a failed evaluation, as in TEA, not a failed node', async () => {
  const r = await run(REFLECTION.replace('words = len(', 'words = undefined_name + len('), { input: { min_words: 7 } })
  assert.is(r.status, 'completed', errorMessage(r.error))
  assert.equal([r.state.valid, r.state.exhausted, r.state.reflection_iteration], [false, true, 4])
  const errors = plain(r.state.reflection_errors) as Array<{ message: string; type: string }>
  assert.is(errors[0]!.type, 'evaluator_error')
  assert.match(errors[0]!.message, 'custom evaluator error: ')
  assert.match(errors[0]!.message, "run: Python, line 1: NameError: name 'undefined_name' is not defined")
})

test.run()
