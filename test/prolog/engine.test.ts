/**
 * TEA's Prolog contract on the real engine (SWI-Prolog in WebAssembly), started once in this thread: state/2 in,
 * return/2 out, each clause read by Prolog and asserted or run, in a module of its own per run. The cases follow
 * TEA's parity report (../shared/tea-corpus/docs/docs_shared_prolog-parity-report.md): state access, type
 * coercion, CLP(FD), errors, unicode, nesting, empty collections, return/2, and isolation between runs.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { PrologEngine, type RunOutcome } from '../../src/prolog/engine.ts'
import { prologFiles } from '../../src/prolog/files.ts'

const t = suite<{ engine: PrologEngine }>('Prolog engine')
t.before(async (c) => {
  c.engine = await PrologEngine.start(prologFiles())
})

const returns = (o: RunOutcome): Record<string, unknown> => {
  if (o.kind === 'error') throw new Error(`Prolog error at line ${o.line}: ${o.message}`)
  if (o.kind === 'memory') throw new Error('Prolog: over the memory limit')
  return o.returns
}

t('parity basic-state-access: state/2 reads every JSON type, return/2 sets keys', ({ engine }) => {
  const state = { n: 41, f: 2.5, s: 'text', b: true, z: null, list: [1, 'a', [2]], obj: { k: 'v', deep: { x: 1 } } }
  const r = returns(
    engine.run(
      `state(n, N), M is N + 1, return(n1, M),
       state(f, F), G is F * 2, return(f2, G),
       state(s, S), atom_length(S, L), return(len, L),
       state(b, B), return(b, B), state(z, Z), return(z, Z),
       state(list, Xs), length(Xs, C), return(count, C),
       state(obj, O), get_dict(deep, O, D), get_dict(x, D, X), return(x, X), return(obj, O)`,
      state,
    ),
  )
  assert.equal(r, { n1: 42, f2: 5, len: 4, b: true, z: null, count: 3, x: 1, obj: { k: 'v', deep: { x: 1 } } })
})

t('parity type-coercion: strings arrive as atoms (TEA), numbers stay numbers, and come back as JSON', ({ engine }) => {
  const r = returns(
    engine.run('state(name, N), atom(N), atom_concat(N, "!", A), return(a, A), state(age, G), integer(G), return(g, G)', {
      name: 'ann',
      age: 7,
    }),
  )
  assert.equal(r, { a: 'ann!', g: 7 })
})

t('parity clpfd-deterministic and clpfd-multiple-solutions: CLP(FD) is loaded; the first solution is taken', ({ engine }) => {
  assert.equal(returns(engine.run('X #= 6 * 7, return(x, X)', {})), { x: 42 })
  assert.equal(returns(engine.run('[X, Y] ins 1..3, X #< Y, label([X, Y]), return(pair, [X, Y])', {})), { pair: [1, 2] })
})

t('parity return-predicate: the last value of a key wins; inline rules and facts are asserted, goals run', ({ engine }) => {
  assert.equal(returns(engine.run('return(x, 1), return(x, 2), return(x, 3)', {})), { x: 3 })
  const code = `parent(alice, bob).
parent(bob, carol).
grandparent(X, Z) :- parent(X, Y), parent(Y, Z).
add_ten(X, Y) :- Y is X + 10.
state(v, V), add_ten(V, R), return(r, R),
findall(Z, grandparent(alice, Z), Gs), return(grandchildren, Gs).`
  assert.equal(returns(engine.run(code, { v: 5 })), { r: 15, grandchildren: ['carol'] })
})

t('parity unicode-strings and nested-objects: UTF-8 survives; five levels of nesting come back whole', ({ engine }) => {
  const deep = { a: { b: { c: { d: { e: 'fünf ✓ 五' } } } } }
  assert.equal(returns(engine.run('state(deep, D), return(deep, D), state(s, S), atom_length(S, L), return(l, L)', { deep, s: 'ñ日本' })), {
    deep,
    l: 3,
  })
})

t('parity empty-collections: [] stays [] (TEA Python; its Rust runtime gave null), an empty dict stays {}', ({ engine }) => {
  assert.equal(returns(engine.run('state(xs, X), return(xs, X), state(o, O), return(o, O), return(e, [])', { xs: [], o: {} })), {
    xs: [],
    o: {},
    e: [],
  })
})

t('terms that are not JSON come back as their text; an unbound variable as null', ({ engine }) => {
  assert.equal(returns(engine.run('return(t, point(1, 2)), return(v, _), return(s, "a string")', {})), {
    t: 'point(1,2)',
    v: null,
    s: 'a string',
  })
})

t('isolation: a run never sees the rules, facts or returns of the run before it', ({ engine }) => {
  returns(engine.run('secret(42). helper(X) :- X = 1. return(first, yes)', {}))
  const second = engine.run('( catch(secret(X), _, fail) -> return(leak, X) ; return(leak, none) )', {})
  assert.equal(returns(second), { leak: 'none' })
  const called = engine.run('helper(X), return(x, X)', {})
  assert.ok(called.kind === 'error' && /Unknown procedure: helper\/1/.test(called.message), 'the rule of the run before is gone')
  assert.equal(returns(engine.run('state(k, V), return(v, V)', { k: 'new' })), { v: 'new' })
})

t('parity error-syntax: a syntax error names its line and what is wrong', ({ engine }) => {
  const o = engine.run('state(a, A),\nreturn(b, A).\nfoo(:- .\n', { a: 1 })
  assert.is(o.kind, 'error')
  if (o.kind !== 'error') return
  assert.is(o.line, 3)
  assert.match(o.message, /Syntax error/i)
  assert.not.match(o.message, /0x[0-9a-f]+/, 'no stream address')
})

t('a goal that raises names its line and the error; an unknown predicate is named without the temporary module', ({ engine }) => {
  const o = engine.run('return(a, 1).\natom_length(X, Y).', {})
  assert.equal(o.kind === 'error' && [o.line, /not sufficiently instantiated/.test(o.message)], [2, true])
  const u = engine.run('nope(1) :- true.\nstate(x, X), missing_pred(X)', { x: 1 })
  assert.ok(u.kind === 'error' && /Unknown procedure: missing_pred\/1/.test(u.message) && !/tmp-/.test(u.message), JSON.stringify(u))
})

t('a goal that fails stops the code there; what was returned before it stands (TEA), and the line is reported', ({ engine }) => {
  assert.equal(engine.run('return(a, 1),\nfail.\nreturn(b, 2).', {}), { kind: 'failed', line: 1, returns: { a: 1 } })
})

t('hostile strings in the state are data: quotes, a closing clause, halt, newlines and NUL never run as code', ({ engine }) => {
  const nasty = ["O'Brien", "'), halt.", '\\n"; halt. %', 'line1\nline2', 'a\u0000b', ':- halt.']
  const r = returns(engine.run('state(xs, Xs), length(Xs, N), return(n, N), return(xs, Xs)', { xs: nasty }))
  assert.equal(r, { n: nasty.length, xs: nasty })
  assert.equal(returns(engine.run('return(alive, yes)', {})), { alive: 'yes' }, 'the engine still answers')
})

t("TEA's tea_load_code/1 loads clauses held in the state into the run's own module", ({ engine }) => {
  const r = returns(
    engine.run('state(facts, F), tea_load_code(F), findall(X, parent(tom, X), Xs), return(children, Xs)', {
      facts: 'parent(tom, ann). parent(tom, bob)',
    }),
  )
  assert.equal(r, { children: ['ann', 'bob'] })
  const after = engine.run('( catch(parent(tom, _), _, fail) -> return(leak, yes) ; return(leak, no) )', {})
  assert.equal(returns(after), { leak: 'no' })
})

t('10 an error in the code tea_load_code/1 loads names its line there, after the line of the run: code that loaded it', ({ engine }) => {
  const o = engine.run('% loads the facts\nstate(facts, F),\ntea_load_code(F)', { facts: 'speed(30).\nzone(sample zone).' })
  assert.equal(o.kind === 'error' && [o.line, o.message], [
    2,
    'tea_load_code/1, line 2 of the code it loads: Syntax error: Operator expected (column 12)',
  ])
})

t('DCG rules are translated (TEA asserted them as facts)', ({ engine }) => {
  const code = `greeting --> [hello], name.
name --> [world].
( phrase(greeting, [hello, world]) -> return(ok, true) ; return(ok, false) )`
  assert.equal(returns(engine.run(code, {})), { ok: true })
})

t('check reads without running: the first syntax error with its line, or none', ({ engine }) => {
  assert.is(engine.check('a :- b.\nc(X) :- X > 1.'), undefined)
  const bad = engine.check('a :- b.\nc :- (d.\n')
  assert.equal([bad?.line, /Syntax error/.test(bad?.message ?? '')], [2, true])
})

t('query: facts given as data, a program, and the solutions of a goal as JSON bindings', ({ engine }) => {
  const program = 'validation_error(low, E) :- entity(E, _, C), C < 0.5.\nvalidation_error(self, E) :- relationship(_, E, E).'
  const facts = [
    ['entity', "Ali'ce", 'person', 0.9],
    ['entity', "'), halt.", 'org', 0.2],
    ['relationship', 'knows', 'Bo', 'Bo'],
  ]
  const o = engine.query(program, facts, 'validation_error(Type, Context)', 100)
  assert.equal(o, {
    kind: 'solutions',
    rows: [
      { Context: "'), halt.", Type: 'low' },
      { Context: 'Bo', Type: 'self' },
    ],
  })
  assert.equal(
    engine.query(
      '',
      [
        ['p', 1],
        ['p', 2],
        ['p', 3],
      ],
      'p(X)',
      2,
    ),
    { kind: 'solutions', rows: [{ X: 1 }, { X: 2 }] },
  )
  const bad = engine.query('ok.\nbroken( :- .', [], 'ok', 1)
  assert.equal(bad.kind === 'error' && bad.line, 2)
  assert.equal(engine.query('', [], 'undefined_thing(X)', 1).kind, 'error')
})

t.run()
