/**
 * The agent's limits on Prolog code, through the pool as an agent meets them (issue 28 items 5 and 6):
 * `settings.run_memory_mb` stops an allocation bomb as NODE_MEMORY_LIMIT with the process still under its bound and
 * the next Prolog node running; `settings.allow_inline_code: false` refuses prolog.run and prolog.query, code from
 * the state included. Before: the list bomb ran to SWI's 1 GB stack limit (CODE_ERROR), and code ran 3/3.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { errorMessage, isTeaError } from '../../src/core/errors.ts'
import { prologQuery, prologRun } from '../../src/prolog/actions.ts'
import { testContext } from '../actions/context.ts'
import { run } from '../engine/harness.ts'

const bombs: Array<[string, string]> = [
  ['a list that keeps growing (the stacks)', 'numlist(1, 100000000, L), length(L, N), return(n, N).'],
  [
    'an assert loop (clauses on the heap)',
    ':- dynamic(f/2).\n( between(1, inf, I), assertz(f(I, "padding padding padding")), fail ; true ).',
  ],
  ['atom table growth', '( between(1, inf, I), atom_concat(some_prefix_for_atoms_, I, A), assertz(g(A)), fail ; true ).'],
]

for (const [what, code] of bombs) {
  test(`item 6: ${what} ends as NODE_MEMORY_LIMIT naming the node and the limit; the next Prolog node runs`, async () => {
    const r = await run(
      `name: bomb
settings: { run_memory_mb: 64 }
nodes:
  - name: grow
    language: prolog
    timeout: 60
    run: ${JSON.stringify(code)}
    on_error: { mode: continue }
  - name: after
    language: prolog
    run: "X is 6 * 7, return(after, X)."
`,
    )
    assert.is(r.status, 'completed', errorMessage(r.error))
    const err = r.state.__error__ as { code: string; message: string; hint?: string; where?: unknown }
    assert.is(err.code, 'NODE_MEMORY_LIMIT', JSON.stringify(err))
    assert.match(err.message, 'the Prolog code went over its memory limit of 64 MiB and was stopped')
    assert.equal(err.where, { node: 'grow', action: 'prolog.run', field: 'run' })
    assert.match(String(err.hint ?? ''), 'settings.run_memory_mb')
    assert.is(r.state.after, 42)
    // The engine's heap is capped near 64 MiB above what it started with: the process stays far from SWI's 1 GB.
    const rss = process.memoryUsage().rss / 2 ** 20
    assert.ok(rss < 700, `process RSS ${rss.toFixed(0)} MiB`)
  })
}

for (const [name, action, params] of [
  ['prolog.run', prologRun, { code: 'return(x, 1).' }],
  ['prolog.query', prologQuery, { query: '{{ state.goal }}', facts: [['person', 'ann']], max_solutions: 10 }],
] as const) {
  test(`item 5: allow_inline_code: false refuses ${name} when it runs, whoever invoked it (the loader refuses run: nodes)`, async () => {
    // A goal from the state arrives rendered: the action is refused whatever the code's source.
    const ctx = testContext({ settings: { allow_inline_code: false }, state: { goal: 'person(Who)' } })
    try {
      const err = await (action.run as (p: unknown, c: unknown) => Promise<unknown>)(params, ctx).then(
        () => undefined,
        (e: unknown) => e,
      )
      assert.ok(isTeaError(err, 'INLINE_CODE_FORBIDDEN'), String(err))
      assert.match((err as Error).message, `${name} runs Prolog code, which settings.allow_inline_code: false forbids`)
    } finally {
      ctx.cleanup()
    }
  })
}

test.run()
