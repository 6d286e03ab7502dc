/** The public API (src/index.ts) used as a library user would: a custom action, an agent from text, a run and a resume. */
import * as v from 'valibot'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import {
  buildRegistry,
  createMemoryStore,
  defineAction,
  isTeaError,
  loadAgentText,
  resumeRun,
  startRun,
  type LlmClient,
  type RunEvent,
} from '../src/index.ts'

const noModel: LlmClient = { call: () => Promise.reject(new Error('no model in this test')), close: async () => {} }

const shout = defineAction({
  name: 'demo.shout',
  description: 'upper-cases its text',
  params: v.object({ text: v.string() }),
  run: ({ text }) => ({ loud: text.toUpperCase() }),
})

const AGENT = `
name: library-demo
initial_state: { text: quiet }
nodes:
  - name: shout
    uses: demo.shout
    with: { text: "{{ state.text }}" }
  - name: wait
    run: "return { waited: true }"
    interrupt: before
  - name: done
    run: "return { done: state.loud + '!' }"
`

test('a library user registers an action, runs an agent to an interrupt and resumes it to the end', async () => {
  const registry = buildRegistry([shout])
  const { spec, problems } = loadAgentText(AGENT, '/tmp/library-demo.yaml', registry)
  assert.equal(problems, [])
  const store = createMemoryStore()
  const events: RunEvent[] = []
  const first = await startRun(
    spec!,
    { store, registry, llm: noModel, emit: (e) => events.push(e) },
    { runId: 'lib-1', input: { text: 'hello' } },
  )
  assert.is(first.status, 'interrupted')
  assert.is(first.node, 'wait')
  assert.is(first.state.loud, 'HELLO')
  const second = await resumeRun({ store, registry, llm: noModel }, { runId: 'lib-1', load: () => spec! })
  assert.is(second.status, 'completed')
  assert.equal(second.state, { text: 'hello', loud: 'HELLO', waited: true, done: 'HELLO!' })
  assert.ok(events.some((e) => e.type === 'interrupt'))
})

test('starting a run whose id exists is RUN_EXISTS and leaves the first run as it was', async () => {
  const registry = buildRegistry([shout])
  const { spec } = loadAgentText(AGENT, '/tmp/library-demo.yaml', registry)
  const store = createMemoryStore()
  await startRun(spec!, { store, registry, llm: noModel }, { runId: 'lib-2' })
  const error = await startRun(spec!, { store, registry, llm: noModel }, { runId: 'lib-2' }).then(
    () => undefined,
    (e: unknown) => e,
  )
  assert.ok(isTeaError(error, 'RUN_EXISTS'))
  assert.is((await store.getRun('lib-2'))?.status, 'interrupted')
})

test.run()
