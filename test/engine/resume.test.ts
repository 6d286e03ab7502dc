import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { loadAgentText } from '../../src/agent/load.ts'
import { resumeRun } from '../../src/engine/lifecycle.ts'
import { createMemoryStore } from '../../src/store/memory-store.ts'
import { calls, load, nodesRun, noModel, run, testRegistry } from './harness.ts'

const Resume = suite('interrupts, checkpoints and resume')
Resume.before.each(() => {
  for (const k of Object.keys(calls)) delete calls[k]
})

const REVIEW = `
name: review
config:
  interrupt_after: [draft]
nodes:
  - name: draft
    uses: test.count
    with: { key: draft }
  - name: publish
    interrupt: before
    uses: test.count
    with: { key: publish }
  - name: archive
    interrupt: before
    run: "return { archived: true }"
`

Resume('interrupt_after pauses after the node; resume does not repeat it', async () => {
  const spec = load(REVIEW)
  const store = createMemoryStore()
  const first = await run(spec, { store })
  assert.is(first.status, 'interrupted')
  assert.is(first.interrupt, 'after')
  assert.is(first.node, 'draft')
  assert.equal(nodesRun(first.events), ['draft'])

  const second = await run(spec, { store, resume: true })
  assert.is(second.status, 'interrupted', 'interrupt: before on publish still applies after a resume')
  assert.is(second.interrupt, 'before')
  assert.is(second.node, 'publish')
  assert.equal(nodesRun(second.events), [])
  assert.is(calls.draft, 1, 'the interrupt_after node is not re-executed on resume')

  const third = await run(spec, { store, resume: true })
  assert.is(third.status, 'interrupted')
  assert.is(third.node, 'archive', 'a later configured interrupt still fires after a resume')
  assert.equal(nodesRun(third.events), ['publish'], 'the interrupt_before node runs on resume')

  const fourth = await run(spec, { store, resume: true })
  assert.is(fourth.status, 'completed')
  assert.equal(fourth.state, { draft: 1, publish: 1, archived: true })
  assert.is(calls.publish, 1)
})

Resume('a failed run resumes at the failed node and never re-runs recorded nodes', async () => {
  const yaml = `
name: fail-then-fix
nodes:
  - name: one
    uses: test.count
    with: { key: one }
  - name: two
    uses: test.flaky
    with: { key: two, succeed_after: 1 }
  - name: three
    uses: test.count
    with: { key: three }
`
  const spec = load(yaml)
  const store = createMemoryStore()
  const failed = await run(spec, { store })
  assert.is(failed.status, 'failed')
  assert.is(failed.node, 'two')
  const run1 = await store.getRun('run-1')
  assert.is(run1?.status, 'failed')
  assert.is(run1?.error?.code, 'HTTP_ERROR')
  const resumed = await run(spec, { store, resume: true })
  assert.is(resumed.status, 'completed')
  assert.equal(nodesRun(resumed.events), ['two', 'three'])
  assert.equal(calls, { one: 1, two: 2, three: 1 })
  assert.equal(resumed.state, { one: 1, flaky_ok: 2, three: 1 })
})

Resume('checkpoints are incremental: a long run of 1-key updates stores updates, not whole states', async () => {
  const store = createMemoryStore()
  const big = 'x'.repeat(20_000)
  const r = await run(
    `
name: long
settings: { max_steps: 5000 }
nodes:
  - name: inc
    run: "return { i: state.i + 1 }"
    goto:
      - if: "state.i < 2000"
        to: inc
      - to: __end__
`,
    { store, input: { i: 0, big } },
  )
  assert.is(r.status, 'completed')
  const loaded = await store.loadLatest('run-1')
  assert.is(loaded?.state.i, 2000)
  assert.is(loaded?.state.big, big)
  const bytes = await store.checkpointBytes('run-1')
  assert.ok(bytes < (2000 * 20_000) / 10, `checkpoint bytes ${bytes} should not grow with steps × state size`)
})

Resume('29-1 the run: languages chosen at start are recorded with the run, and a resume keeps them after the file changed', async () => {
  // 'check' reads as JavaScript and as Python (it fails as JavaScript: `type` is Python's); it is Python because
  // 'first' is. The edited file drops the Python from 'first', so loaded afresh both would be JavaScript.
  const agent = (first: string) =>
    `name: lang\nnodes:\n  - name: first\n    run: ${JSON.stringify(first)}\n  - name: check\n    interrupt: before\n    run: 'return {"kind": type(state["x"]).__name__}'\n`
  const store = createMemoryStore()
  const paused = await run(agent('# Python\nreturn {"x": 1}'), { store })
  assert.is(paused.status, 'interrupted')
  assert.equal((await store.getRun('run-1'))?.runLanguages, { first: 'python', check: 'python' })
  const edited = agent('return {"x": 1}')
  const registry = testRegistry()
  assert.equal(
    loadAgentText(edited, '/tmp/lang.yaml', registry).spec!.runLanguages!.map((c) => c.language),
    ['javascript', 'javascript'],
  )
  const services = { store, registry, llm: noModel }
  const resumed = await resumeRun(services, {
    runId: 'run-1',
    load: (path, runLanguages) => loadAgentText(edited, path, registry, { ...(runLanguages && { runLanguages }) }).spec!,
  })
  assert.is(resumed.status, 'completed', JSON.stringify(resumed.error))
  assert.is(resumed.state.kind, 'int')
})

Resume.run()
