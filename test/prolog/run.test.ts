/**
 * Prolog `run:` code as agents write it (issue 11, part 3): the ways TEA selects the language, lowered at load onto
 * `prolog.run`, run through the engine on a pool worker; time limits that stop a runaway query without stopping
 * parallel branches; errors that name the node and the line; a build without the engine that says so; and
 * `prolog.query` and validate.extraction's Prolog constraints (issue 13).
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { loadAgentText } from '../../src/agent/load.ts'
import { errorMessage } from '../../src/core/errors.ts'
import { verifyAgent } from '../../src/agent/verify.ts'
import { load, run, testRegistry } from '../engine/harness.ts'
import { branchResults, fanOutAgent, loadWithoutEngines } from '../support/languages.ts'

test('the three ways TEA names Prolog (language:, run: {type, code}, a % prolog first line) all run; language: javascript is JavaScript', async () => {
  const r = await run(
    `name: ways
nodes:
  - name: by_language
    language: prolog
    run: |
      state(value, V), D is V * 2, return(doubled, D).
  - name: by_type
    run:
      type: prolog
      code: "state(doubled, D), X #= D + 1, return(plus_one, X)."
  - name: by_marker
    run: |
      % prolog
      state(plus_one, P), atom_concat(n, P, A), return(tag, A).
  - name: js
    language: javascript
    run: "return { js: state.tag + '!' }"
`,
    { input: { value: 20 } },
  )
  assert.is(r.status, 'completed', errorMessage(r.error))
  assert.equal([r.state.doubled, r.state.plus_one, r.state.tag, r.state.js], [40, 41, 'n41', 'n41!'])
  const spec = load('name: l\nnodes:\n  - name: p\n    language: prolog\n    run: "return(a, 1)."\n')
  assert.is(spec.nodes.find((n) => n.name === 'p')!.uses, 'prolog.run')
})

test('without a language, run: stays JavaScript (TEA guessed from the look of the code; tea does not)', () => {
  const { problems } = loadAgentText('name: g\nnodes:\n  - name: p\n    run: "state(x, X), return(y, X)."\n', '/tmp/g.yaml', testRegistry())
  assert.ok(
    problems.some((p) => p.code === 'CODE_ERROR'),
    'compiled as JavaScript',
  )
})

test("a build without the prolog feature names it at load: CODE_ERROR node 'x': run: is Prolog; this build lacks the 'prolog' feature", () => {
  assert.equal(
    loadWithoutEngines('prolog', 'return(a, 1).').map((p) => [p.code, p.message, p.where.node]),
    [
      [
        'CODE_ERROR',
        "run: is Prolog; this build (source) lacks the 'prolog' feature: the linux-arm64, linux-armv7 and linux-x64 builds have it (or port the code to JavaScript)",
        'x',
      ],
    ],
  )
})

test('an error names the node and the line of the clause; a failing goal is logged, and what was returned stands', async () => {
  const bad = await run('name: e\nnodes:\n  - name: calc\n    language: prolog\n    run: |\n      return(a, 1).\n      X is foo + 1.\n')
  assert.is(bad.status, 'failed')
  assert.is(bad.error?.code, 'CODE_ERROR')
  assert.match(errorMessage(bad.error), /^node 'calc' \(prolog\.run\), run: Prolog, line 2: .*foo/)
  const failed = await run(
    'name: f\nnodes:\n  - name: calc\n    language: prolog\n    run: |\n      return(a, 1),\n      1 > 2,\n      return(b, 2).\n',
  )
  assert.is(failed.status, 'completed')
  assert.equal([failed.state.a, failed.state.b], [1, undefined])
  assert.ok(
    failed.events.some((e) => e.type === 'log' && /the goal at line 1 failed/.test(e.message)),
    'the failure is in the log',
  )
})

test('a runaway query is stopped at its time limit (its worker terminated), and the next Prolog node still runs', async () => {
  // CPU time, not wall time: a loop left running burns it; other test files on the machine do not add to it.
  const cpu0 = process.cpuUsage()
  const r = await run(
    `name: spin
nodes:
  - name: forever
    language: prolog
    timeout: 1
    run: |
      spin :- spin.
      spin.
    on_error: { mode: continue }
  - name: after
    language: prolog
    run: "return(after, yes)."
`,
  )
  assert.is(r.status, 'completed', errorMessage(r.error))
  const err = r.state.__error__ as { code: string; message: string }
  assert.is(err.code, 'NODE_TIMEOUT')
  assert.match(err.message, 'the Prolog code ran over its time limit of 1 s and was stopped')
  assert.is(r.state.after, 'yes')
  const cpu = process.cpuUsage(cpu0)
  assert.ok(cpu.user + cpu.system < 20_000_000, `took ${(cpu.user + cpu.system) / 1000} ms of CPU`)
})

test('parallel branches run Prolog in isolation; a runaway branch is stopped without stopping the other', async () => {
  const r = await run(
    fanOutAgent('prolog', {
      left: { run: 'secret(left).\nsecret(X), return(left, X).' },
      right: { run: '( catch(secret(X), _, fail) -> return(right_saw, X) ; return(right_saw, nothing) ).' },
      runaway: { run: 'spin :- spin.\nspin.', timeout: 1 },
    }),
  )
  assert.is(r.status, 'completed', errorMessage(r.error))
  const results = branchResults(r.state)
  assert.is(results[0]!.left, 'left')
  assert.is(results[1]!.right_saw, 'nothing', 'no branch sees the facts of another')
  assert.is((results[2]!.__error__ as { code: string }).code, 'NODE_TIMEOUT')
})

test('prolog.query: solutions of a goal over facts given as data', async () => {
  const r = await run(`name: q
nodes:
  - name: ask
    uses: prolog.query
    with:
      program: "adult(P) :- person(P, Age), Age >= 18."
      facts: [[person, ann, 34], [person, bo, 9], [person, "Cy'); halt. %", 40]]
      query: adult(Who)
    output: found
`)
  assert.is(r.status, 'completed', errorMessage(r.error))
  const solutions = [{ Who: 'ann' }, { Who: "Cy'); halt. %" }]
  assert.equal(JSON.parse(JSON.stringify(r.state.found)), { solutions, count: 2, bindings: solutions, success: true })
})

test("prolog.query in TEA's spelling: code with clauses and a ?- line, facts as clause text (TEA's qa-neurosymbolic-wasm example)", async () => {
  const r = await run(
    `name: tea
nodes:
  - name: classify
    action: prolog.query
    with:
      code: |
        classify(Q, geography) :- sub_string(Q, _, _, _, "capital"), !.
        classify(_, general).

        ?- classify("{{ state.question }}", Category).
    output: prolog_result
  - name: path
    action: prolog.query
    with:
      facts: |
        edge(a, b).
        edge(b, c).
        path(X, Y) :- edge(X, Y).
        path(X, Y) :- edge(X, Z), path(Z, Y).
      code: "path(a, X)"
    output: paths
`,
    { input: { question: 'What is the capital of Peru?' } },
  )
  assert.is(r.status, 'completed', errorMessage(r.error))
  const result = JSON.parse(JSON.stringify(r.state))
  assert.equal([result.prolog_result.bindings, result.prolog_result.success], [[{ Category: 'geography' }], true])
  assert.equal(result.paths.bindings, [{ X: 'b' }, { X: 'c' }])
})

const EXTRACTION = (rules: string, extra = '') => `name: x
extraction_schema:
  entities: { required_fields: [name, type] }
  confidence_tracking: true
validation_constraints:
  language: prolog
  rules: |
${rules
  .split('\n')
  .map((l) => `    ${l}`)
  .join('\n')}
nodes:
  - name: v
    uses: validate.extraction
${extra}`

test('validation_constraints: each validation_error(Type, Context) is a prolog_constraint_violation; the facts carry confidence and dates', async () => {
  const rules = `% A person cannot be their own parent.
validation_error(self_parent, P) :- relationship(parent_of, P, P).
validation_error(low_confidence, E) :- entity(E, _, C), C < 0.5.
validation_error(undated_affair, S) :- relationship(affair, S, _), \\+ relationship(affair, S, _, _, _).`
  const r = await run(EXTRACTION(rules), {
    input: {
      entities: [
        { name: 'Ann', type: 'person', confidence: 0.9 },
        { name: "Bo'); halt. %", type: 'person', confidence: 0.2 },
      ],
      relationships: [
        { type: 'parent_of', subject: 'Ann', object: 'Ann' },
        { type: 'affair', subject: 'Ann', object: 'Cy' },
        { type: 'affair', subject: 'Di', object: 'Ed', start_date: '1901', end_date: '1902' },
      ],
    },
  })
  assert.is(r.status, 'completed', errorMessage(r.error))
  assert.is(r.state.valid, false)
  const errors = JSON.parse(JSON.stringify(r.state.errors)) as Array<Record<string, unknown>>
  assert.equal(
    errors.map((e) => [e.type, e.error_type, e.context]),
    [
      ['prolog_constraint_violation', 'self_parent', 'Ann'],
      ['prolog_constraint_violation', 'low_confidence', "Bo'); halt. %"],
      ['prolog_constraint_violation', 'undated_affair', 'Ann'],
    ],
  )
  assert.match(String(errors[0]!.message), 'Constraint violation: self_parent(Ann)')
  const ok = await run(EXTRACTION('validation_error(never, x) :- fail.'), {
    input: { entities: [{ name: 'A', type: 'p' }], relationships: [] },
  })
  assert.equal([ok.state.valid, ok.state.errors], [true, []])
})

test('the structural layer stops first: with a missing field, the Prolog rules are not consulted', async () => {
  const r = await run(EXTRACTION('validation_error(always, x).'), { input: { entities: [{ name: 'A' }], relationships: [] } })
  const errors = JSON.parse(JSON.stringify(r.state.errors)) as Array<{ type: string }>
  assert.equal(
    errors.map((e) => e.type),
    ['missing_required_field'],
  )
})

test('a rule with a syntax error fails with its line; a rule that loops forever is stopped by the time limit', async () => {
  const bad = await run(EXTRACTION('validation_error(a, X) :- entity(X, _).\nvalidation_error(b, X) :- entity(X, .'), {
    input: { entities: [], relationships: [] },
  })
  assert.is(bad.status, 'failed')
  assert.is(bad.error?.code, 'CODE_ERROR')
  assert.match(errorMessage(bad.error), /validation_constraints: rules, line 2: .*Syntax error/)
  const loop = await run(
    `${EXTRACTION('validation_error(loop, X) :- forever(X).\nforever(X) :- forever(X).')}settings:\n  run_timeout: 1\n`,
    { input: { entities: [], relationships: [] } },
  )
  assert.is(loop.status, 'failed')
  assert.is(loop.error?.code, 'NODE_TIMEOUT')
  assert.match(errorMessage(loop.error), 'the Prolog query ran over its time limit of 1 s')
})

test('T17.3 a Prolog constraint violation triggers retry.loop: the correction node is called and fixes it', async () => {
  const r = await run(
    `name: retry
validation_constraints: |
  validation_error(unknown_entity, N) :- relationship(_, _, N), \\+ entity(N, _).
nodes:
  - name: check
    uses: retry.loop
    with:
      validate: validate.extraction
      validate_args: { entities: "{{ state.entities }}", relationships: "{{ state.relationships }}" }
      correct: fix
      max_retries: 2
  - name: fix
    run: "return { entities: [...state.entities, { name: state._retry_errors[0].message.split('(')[1].replace(')', ''), type: 'person' }] }"
  - name: done
    run: "return { valid: state._retry_result.valid, tries: state._retry_count }"
edges:
  - { from: check, to: done }
  - { from: done, to: __end__ }
`,
    { input: { entities: [{ name: 'Ann', type: 'person' }], relationships: [{ type: 'child_of', subject: 'Ann', object: 'Bo' }] } },
  )
  assert.is(r.status, 'completed', errorMessage(r.error))
  assert.equal([r.state.valid, r.state.tries], [true, 1], JSON.stringify(r.state))
  assert.equal(
    JSON.parse(JSON.stringify((r.state.entities as Array<{ name: string }>).map((e) => e.name))),
    ['Ann', 'Bo'],
    'the correction read the violation and added the missing entity',
  )
})

test('tea validate reads Prolog before any run: a syntax error in run: code or in validation_constraints, with its line', async () => {
  const spec = load(`name: bad
validation_constraints:
  rules: |
    validation_error(a, X) :- entity(X, _).
    validation_error(b, X) :- entity(X, .
nodes:
  - name: calc
    language: prolog
    run: |
      state(x, X),
      Y is X +* 1.
  - name: v
    uses: validate.extraction
`)
  assert.equal(await verifyAgent(spec, testRegistry()), [
    { node: 'calc', action: 'prolog.run', message: 'Prolog, line 2: Syntax error: Operator expected (column 6)' },
    {
      node: 'v',
      action: 'validate.extraction',
      message: 'validation_constraints: rules, line 2: Syntax error: Unexpected end of clause (column 36)',
    },
  ])
  assert.equal(
    await verifyAgent(load('name: ok\nnodes:\n  - name: p\n    language: prolog\n    run: "return(a, 1)."\n'), testRegistry()),
    [],
  )
})

test.run()
