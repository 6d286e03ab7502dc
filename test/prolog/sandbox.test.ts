/**
 * Prolog `run:` code and `prolog.query` reach only what tea hands them (issue 28 item 3, security probe round 2
 * finding B): every bridge to JavaScript in swipl-wasm, the shell, files, the environment, other modules and
 * thread-wide flags are refused by the sandbox, each with a message that names what was refused; a second wall in
 * the loader keeps the bridges closed below Prolog; and a warm engine carries nothing from one run to the next.
 * Each vector was open before the sandbox (the probe ran `id` through js_run_script/1).
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { PrologEngine, type QueryOutcome, type RunOutcome } from '../../src/prolog/engine.ts'
import { prologFiles } from '../../src/prolog/files.ts'
import { closeBridges } from '../../src/prolog/loader.ts'

const t = suite<{ engine: PrologEngine }>('Prolog sandbox')
t.before(async (c) => {
  c.engine = await PrologEngine.start(prologFiles())
})

const probe = globalThis as { __teaProbe?: unknown }

const refusal = (o: RunOutcome | QueryOutcome): string => {
  assert.is(o.kind, 'error', `expected a refusal, got ${JSON.stringify(o)}`)
  return (o as { message: string }).message
}

/** [vector, code, what the message names]: each ran (or reached the engine's files or environment) before. */
const VECTORS: Array<[string, string, RegExp]> = [
  [
    'js_run_script/1 (eval of any JavaScript)',
    'js_run_script("globalThis.__teaProbe = 1"), return(x, ran)',
    /^js_run_script\/1 is not allowed/,
  ],
  ['js_script/2', 'js_script("globalThis.__teaProbe = 2", _), return(x, ran)', /^js_script\/2 reaches '\$js_call'\/2/],
  [':=/2 (js_call)', "X := 'globalThis', return(x, ran)", /^'\$js_call'\/2 is not allowed|reaches '\$js_call'\/2/],
  ['fetch/3', "fetch('http://127.0.0.1:9/', text, T), return(x, T)", /^fetch\/3 reaches/],
  ['await/2', 'await(x, Y), return(x, Y)', /^await\/2 reaches/],
  ['shell/1', "shell('id > pwned'), return(x, ran)", /^shell\/1 reaches shell\/2/],
  ['shell/2', "shell('id', S), return(x, S)", /^shell\/2 is not allowed/],
  ['getenv/2', "getenv('HOME', H), return(x, H)", /^getenv\/2 is not allowed/],
  ['setenv/2', "setenv('TEA_X', y), return(x, ran)", /^setenv\/2 is not allowed/],
  ['open/3 for reading', "open('/etc/passwd', read, S), return(x, ran)", /^open\/3 is not allowed/],
  ['open/3 for writing', "open('/tmp/tea-prolog-pwned', write, S), return(x, ran)", /^open\/3 is not allowed/],
  ['exists_file/1', "( exists_file('/etc/passwd') -> return(x, yes) ; return(x, no) )", /^exists_file\/1 is not allowed/],
  ['directory_files/2', "directory_files('/', L), return(x, L)", /^directory_files\/2 is not allowed/],
  ['absolute_file_name/3', 'absolute_file_name(library(lists), F, []), return(x, F)', /^absolute_file_name\/3 reaches/],
  ['working_directory/2', "working_directory(D, '/'), return(x, D)", /^working_directory\/2 reaches/],
  ['consult/1', "consult('/etc/passwd'), return(x, ran)", /^consult\/1 reaches/],
  ['load_files/2', "load_files('/tmp/x', []), return(x, ran)", /^load_files\/2 reaches/],
  ['ensure_loaded/1 of a path', "ensure_loaded('/tmp/x'), return(x, ran)", /^ensure_loaded\/1 reaches/],
  ['use_module/1 of a path', "use_module('/tmp/x'), return(x, ran)", /^use_module\/1 reaches/],
  ['use_module/1 of a library outside the list', 'use_module(library(shell)), return(x, ran)', /^use_module\/1 reaches/],
  ['halt/0', 'halt', /^halt\/0 reaches halt\/1|^halt\/1 is not allowed/],
  ['assertz/1 into system', 'assertz(system:foo(1)), return(x, ran)', /^assertz\/1 is not allowed/],
  ['assertz/1 into user', 'assertz(user:foo(1)), return(x, ran)', /^assertz\/1 is not allowed/],
  [
    'assertz/1 of a rule (only facts may be asserted by a goal)',
    'assertz((foo :- shell(id))), return(x, ran)',
    /^assertz\/1 is not allowed/,
  ],
  [
    'a clause whose head names another module (a user hook)',
    'user:exception(undefined_predicate, _, fail) :- true.',
    /^a clause for user:exception\(/,
  ],
  ['a fact whose head names another module', 'user:portray(x).', /^a clause for user:portray\(x\)/],
  ['set_prolog_flag/2 of a global flag', 'set_prolog_flag(stack_limit, 2000000000), return(x, ran)', /^set_prolog_flag\/2 is not allowed/],
  ['nb_setval/2 (a global variable outlives the run)', 'nb_setval(k, 1), return(x, ran)', /^nb_setval\/2 is not allowed/],
  ['op/3 in another module', 'op(700, xfx, user:(===>)), return(x, ran)', /^op\/3 is not allowed/],
  ["the glue's own predicates", "tea_glue:tea_set_state('{}'), return(x, ran)", /^tea_set_state\/1 is not allowed/],
  [
    'a goal built at run time (=.. then call/1)',
    'G =.. [shell, id], call(G), return(x, ran)',
    /^a goal that is unknown until the code runs/,
  ],
  ['format/3 with ~@ (calls a goal)', 'format(atom(A), "~@", [shell(id)]), return(x, A)', /^shell\/1 reaches shell\/2/],
  ['catch/3 around a refused goal', 'catch(shell(id), _, true), return(x, ran)', /^shell\/1 reaches shell\/2/],
  ['a rule of the code whose body is refused', 'evil :- js_run_script("globalThis.__teaProbe = 4").', /^js_run_script\/1 is not allowed/],
  [
    'write_term/2 (its portray_goal option calls a goal)',
    'write_term(x, [portray_goal(shell)]), return(x, ran)',
    /^write_term\/2 is not allowed/,
  ],
]

for (const [vector, code, names] of VECTORS) {
  t(`B: ${vector} is refused with a message that names it`, ({ engine }) => {
    const message = refusal(engine.run(code, {}))
    assert.match(message, names)
    assert.not.match(message, /tmp-/, 'the temporary module stays out of the message')
    assert.is(probe.__teaProbe, undefined, 'no JavaScript ran')
  })
}

t('B: a rule added by tea_load_code/1 in the middle of a goal is checked before that goal can call it', ({ engine }) => {
  const direct = engine.run(':- dynamic(foo/0).\ntea_load_code("foo :- shell(id)."), foo, return(x, ran).', {})
  assert.match(refusal(direct), /^tea_load_code\/1, line 1 of the code it loads: shell\/1 reaches shell\/2/)
  const deferred = engine.run(
    ':- dynamic(foo/0).\nfreeze(X, foo), tea_load_code("foo :- js_run_script(\\"globalThis.__teaProbe = 3\\")."), X = 1, return(x, ran).',
    {},
  )
  assert.match(refusal(deferred), /js_run_script\/1 is not allowed/)
  assert.is(probe.__teaProbe, undefined)
})

t('B: prolog.query refuses the same: a refused goal, a program rule, and facts that are clauses or name a module', ({ engine }) => {
  assert.match(refusal(engine.query('p(1).', [], 'shell(id)', 10)), /^shell\/1 reaches shell\/2/)
  assert.match(refusal(engine.query('p(X) :- shell(X).', [], 'p(id)', 10)), /^shell\/1 reaches shell\/2/)
  assert.match(refusal(engine.query('', [[':-', 'go', 'halt']], 'go', 10)), /^halt\/0 reaches halt\/1|^halt\/1 is not allowed/)
  assert.match(refusal(engine.query('', [[':', 'user', 'x']], 'true', 10)), /^a clause for user:x/)
})

t("TEA's Prolog still runs: declarations, its libraries, DCGs, output to nowhere, facts asserted in the run's module", ({ engine }) => {
  const code = `:- dynamic(counter/1).
:- use_module(library(clpfd)).
:- use_module(library(lists)).
greeting --> [hello], name.
name --> [world].
twice(X, Y) :- Y is X * 2, helper(Y).
helper(_).
assertz(counter(1)), counter(C), return(c, C),
phrase(greeting, [hello, world]), return(dcg, ok),
X #= 2 + 3, return(x, X),
twice(4, T), return(t, T),
write(x), tab(2), print(y), nl, writeln(z), format("~w~n", [w]),
format(atom(A), "~a-~d", [n, 7]), return(a, A),
maplist([I, O]>>(O is I + 1), [1, 2], L), return(l, L),
aggregate_all(count, member(_, [a, b]), N), return(n, N).`
  assert.equal(engine.run(code, {}), { kind: 'done', returns: { c: 1, dcg: 'ok', x: 5, t: 8, a: 'n-7', l: [2, 3], n: 2 } })
  const q = engine.query(
    ':- dynamic(entity/2), dynamic(entity/3). validation_error(missing, E) :- entity(E, _), \\+ entity(E, _, _).',
    [['entity', 'a', 'person']],
    'validation_error(T, C)',
    10,
  )
  assert.equal(q, { kind: 'solutions', rows: [{ T: 'missing', C: 'a' }] })
})

t('a warm engine carries nothing from one run to the next: thread-wide flags the sandbox allows are put back', ({ engine }) => {
  assert.equal(engine.run('set_prolog_flag(occurs_check, error), set_prolog_flag(prefer_rationals, true), return(x, set)', {}), {
    kind: 'done',
    returns: { x: 'set' },
  })
  assert.equal(
    engine.run(
      'current_prolog_flag(occurs_check, O), return(o, O), current_prolog_flag(prefer_rationals, P), return(p, P), X is 1 / 2, return(h, X)',
      {},
    ),
    { kind: 'done', returns: { o: false, p: false, h: 0.5 } },
  )
})

t("B, second wall: with the sandbox bypassed, the loader's js_run_script and js_call do nothing", ({ engine }) => {
  // Straight into the engine, as a goal that slipped past the sandbox would be: the bridge itself is closed.
  const swipl = (engine as unknown as { swipl: { prolog: { query(goal: string): { once(): Record<string, unknown> } } } }).swipl
  swipl.prolog.query('js_run_script("globalThis.__teaProbe = 5")').once()
  swipl.prolog.query("catch(_ := 'globalThis', _, true)").once()
  assert.is(probe.__teaProbe, undefined)
})

t('the loader refuses to start an engine whose JavaScript bridges it cannot close', () => {
  assert.throws(
    () => closeBridges('var x=1', '/x/swipl-web.js'),
    (e: Error) => /is not the one tea knows: cannot close js_run_script\/1/.test(e.message),
  )
})

t.run()
