import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { errorMessage } from '../../src/core/errors.ts'
import { calls, nodesRun, run } from './harness.ts'

const Run = suite('engine run loop')
Run.before.each(() => {
  for (const k of Object.keys(calls)) delete calls[k]
})

Run('chains nodes in list order and shallow-merges each update', async () => {
  const r = await run(`
name: chain
initial_state: { keep: 1 }
nodes:
  - name: a
    run: "return { a: 1, n: 1 }"
  - name: b
    run: "return { b: state.a + 1, n: state.n + 1 }"
  - name: c
    uses: test.echo
    with: { c: "{{ state.b * 10 }}", text: "b={{ state.b }}" }
`)
  assert.is(r.status, 'completed')
  assert.equal(r.state, { keep: 1, a: 1, n: 2, b: 2, c: 20, text: 'b=2' })
  assert.equal(nodesRun(r.events), ['a', 'b', 'c'])
})

Run('goto jumps, __end__ stops, and output: key nests the result', async () => {
  const r = await run(`
name: jumps
nodes:
  - name: a
    uses: test.echo
    with: { x: 1 }
    output: first
    goto: c
  - name: b
    run: "return { b: true }"
  - name: c
    run: "return { c: true }"
    goto: __end__
  - name: d
    run: "return { d: true }"
`)
  assert.equal(r.state, { first: { x: 1 }, c: true })
  assert.equal(nodesRun(r.events), ['a', 'c'])
})

Run("goto rules see state and the node's own result; first true rule wins", async () => {
  const r = await run(
    `
name: rules
nodes:
  - name: check
    uses: test.echo
    with: { status: ok, n: "{{ state.n }}" }
    output: { verdict: "{{ result.status }}" }
    goto:
      - if: "result.status == 'bad'"
        to: bad
      - if: "result.status == 'ok' and state.n > 2"
        to: good
      - to: bad
  - name: bad
    run: "return { route: 'bad' }"
    goto: __end__
  - name: good
    run: "return { route: 'good' }"
`,
    { input: { n: 3 } },
  )
  assert.is(r.state.route, 'good')
  assert.is(r.state.verdict, 'ok')
})

Run('a goto loop bounded by a counter rule ends normally', async () => {
  const r = await run(`
name: loop
initial_state: { i: 0 }
nodes:
  - name: inc
    run: "return { i: state.i + 1 }"
    goto:
      - if: "state.i < 5"
        to: inc
      - to: __end__
`)
  assert.is(r.status, 'completed')
  assert.is(r.state.i, 5)
})

Run('an endless loop stops with MAX_STEPS_EXCEEDED naming the node', async () => {
  const r = await run(`
name: forever
settings: { max_steps: 25 }
nodes:
  - name: spin
    run: "return { i: (state.i || 0) + 1 }"
    goto: spin
`)
  assert.is(r.status, 'failed')
  assert.is(r.error?.code, 'MAX_STEPS_EXCEEDED')
  assert.equal(r.error!.where, { node: 'spin' })
  assert.is(errorMessage(r.error), "node 'spin': the run reached settings.max_steps (25)")
  assert.is(r.state.i, 25)
})

Run('no matching goto rule without a fallback is NO_ROUTE naming the node', async () => {
  const r = await run(`
name: noroute
nodes:
  - name: a
    run: "return { x: 1 }"
    goto:
      - if: "state.x == 2"
        to: a
`)
  assert.is(r.status, 'failed')
  assert.is(r.error?.code, 'NO_ROUTE')
  assert.equal(r.error!.where, { node: 'a' })
  assert.match(errorMessage(r.error), /^node 'a': no goto rule matched/)
})

Run('on_error continue records __error__ and routes normally', async () => {
  const r = await run(`
name: cont
nodes:
  - name: boom
    run: throw new Error('kaput')
    on_error: { mode: continue }
  - name: after
    run: "return { after: true }"
`)
  assert.is(r.status, 'completed')
  assert.is(r.state.after, true)
  const err = r.state.__error__ as { code: string; message: string; node: string }
  assert.is(err.code, 'CODE_ERROR')
  assert.is(err.node, 'boom')
  assert.match(err.message, /kaput/)
})

Run('on_error retry retries with backoff until the node succeeds', async () => {
  const r = await run(`
name: retry
nodes:
  - name: flaky
    uses: test.flaky
    with: { key: f1, succeed_after: 2 }
    on_error: { mode: retry, max_retries: 3, retry_delay: 0.001 }
`)
  assert.is(r.status, 'completed')
  assert.is(r.state.flaky_ok, 3)
  assert.is(calls.f1, 3)
})

Run('on_error retry gives up after max_retries and fails the run naming node and action', async () => {
  const r = await run(`
name: retry2
nodes:
  - name: flaky
    uses: test.flaky
    with: { key: f2, succeed_after: 10 }
    on_error: { mode: retry, max_retries: 2, retry_delay: 0.001 }
`)
  assert.is(r.status, 'failed')
  assert.is(calls.f2, 3)
  assert.is(r.error?.code, 'HTTP_ERROR')
  assert.equal(r.error!.where, { node: 'flaky', action: 'test.flaky' })
  assert.match(errorMessage(r.error), /^node 'flaky' \(test\.flaky\): /)
})

Run('on_error fallback really routes to the named node', async () => {
  const r = await run(`
name: fb
nodes:
  - name: risky
    run: throw new Error('nope')
    on_error: { fallback: recover }
  - name: normal
    run: "return { normal: true }"
    goto: __end__
  - name: recover
    run: "return { recovered: state.__error__.node }"
`)
  assert.is(r.status, 'completed')
  assert.equal(nodesRun(r.events), ['risky', 'recover'])
  assert.is(r.state.recovered, 'risky')
  assert.is(r.state.normal, undefined)
})

Run('a per-node timeout stops a slow action with NODE_TIMEOUT', async () => {
  const r = await run(`
name: slow
nodes:
  - name: wait
    uses: test.sleep
    with: { ms: 5000 }
    timeout: 0.05
`)
  assert.is(r.status, 'failed')
  assert.is(r.error?.code, 'NODE_TIMEOUT')
  assert.equal(r.error!.where, { node: 'wait', action: 'test.sleep' })
  assert.is(errorMessage(r.error), "node 'wait' (test.sleep): exceeded its timeout of 0.05 s")
})

Run('run: code that loops forever is stopped by its time limit', async () => {
  const r = await run(`
name: spin
settings: { run_timeout: 0.1 }
nodes:
  - name: hang
    run: "while (true) { state.x = 1 }"
`)
  assert.is(r.status, 'failed')
  assert.is(r.error?.code, 'NODE_TIMEOUT')
})

Run('run: code that throws fails the run with CODE_ERROR and the message', async () => {
  const r = await run(`
name: throws
nodes:
  - name: bad
    run: "throw new Error('no such thing')"
`)
  assert.is(r.status, 'failed')
  assert.is(r.error?.code, 'CODE_ERROR')
  assert.match(r.error!.message, /no such thing/)
})

Run('parallel fan-out gives each branch its own state copy and the join parallel_results in declaration order', async () => {
  const r = await run(`
name: fan
initial_state: { shared: [1] }
nodes:
  - name: split
    run: "return { started: true }"
  - name: slow
    uses: test.sleep
    with: { ms: 30 }
    goto: join
  - name: fast
    run: "state.shared.push(2); return { fast: true, seen: state.shared.length }"
    goto: join
  - name: join
    run: "return { order: state.parallel_results.map(r => r.slept ? 'slow' : 'fast'), shared: state.shared }"
edges:
  - { from: split, to: [slow, fast], fan_in: join }
`)
  assert.is(r.status, 'completed')
  assert.equal(r.state.order, ['slow', 'fast'])
  assert.equal(r.state.shared, [1], 'a branch mutating its copy does not leak into the main state')
  const results = r.state.parallel_results as Array<Record<string, unknown>>
  assert.is(results[1]!.seen, 2)
  assert.is(results[0]!.started, true)
})

Run('a failing branch fails the run', async () => {
  const r = await run(`
name: fanfail
nodes:
  - name: split
    run: "return {}"
  - name: ok
    run: "return { ok: true }"
    goto: join
  - name: bad
    run: throw new Error('branch broke')
    goto: join
  - name: join
    run: "return { joined: true }"
edges:
  - { from: split, to: [ok, bad], fan_in: join }
`)
  assert.is(r.status, 'failed')
  assert.match(r.error!.message, /branch broke/)
})

Run('cancelling stops before the next node with status cancelled', async () => {
  const c2 = new AbortController()
  setTimeout(() => c2.abort(new Error('SIGINT')), 30)
  const r2 = await run(
    `
name: cancel2
nodes:
  - name: a
    run: "return { a: 1 }"
  - name: wait
    uses: test.sleep
    with: { ms: 10000 }
  - name: c
    run: "return { c: 1 }"
`,
    { signal: c2.signal },
  )
  assert.is(r2.status, 'cancelled')
  assert.is(r2.node, 'wait')
  const saved = await r2.store.loadLatest('run-1')
  assert.equal(saved?.state, { a: 1 })
  assert.equal(saved?.cursor, { next: 'wait' })
})

Run('objects returned by run: code are plain data to templates and goto rules', async () => {
  const r = await run(`
name: nested
nodes:
  - name: make
    run: "return { user: { name: 'ada', tags: ['x'] } }"
    goto:
      - if: "result.user.name == 'ada'"
        to: greet
      - to: __end__
  - name: greet
    uses: test.echo
    with: { text: "hi {{ state.user.name }} ({{ state.user.tags | length }})" }
`)
  assert.is(r.status, 'completed', r.error?.message)
  assert.is(r.state.text, 'hi ada (1)')
})

Run('a resumed run gets a fresh max_steps budget', async () => {
  const { createMemoryStore } = await import('../../src/store/memory-store.ts')
  const store = createMemoryStore()
  const yaml = `
name: budget
settings: { max_steps: 10 }
initial_state: { i: 0 }
nodes:
  - name: inc
    run: "return { i: state.i + 1 }"
    goto:
      - if: "state.i < 15"
        to: inc
      - to: __end__
`
  const first = await run(yaml, { store })
  assert.is(first.error?.code, 'MAX_STEPS_EXCEEDED')
  const second = await run(yaml, { store, resume: true })
  assert.is(second.status, 'completed')
  assert.is(second.state.i, 15)
})

Run('params an action renders itself (Action.raw) reach it as written, other params are rendered', async () => {
  const r = await run(`
name: raw
initial_state: { user: { name: ada } }
nodes:
  - name: shape
    uses: json.transform
    with:
      data: "{{ state.user }}"
      mapping: { who: "{{ data.name | upper }}", n: "data.name | length" }
`)
  assert.is(r.status, 'completed', r.error?.message)
  assert.equal(r.state.result, { who: 'ADA', n: 3 })
})

Run.run()
