/**
 * `GET /metrics` of a real `tea serve` (issue 31 items 5 and 8): behind the API's token, Prometheus' text format
 * that a strict reader accepts (test/support/prometheus-text.ts), counting what runs did: runs by status, node
 * durations, model calls (the fake model server on 127.0.0.1, speaking Ollama) and their wait in the call scheduler,
 * checkpoints written, the process's memory.
 */

import { mkdirSync, writeFileSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startFakeModelServer } from '../support/fake-model-server.ts'
import { parseExposition } from '../support/prometheus-text.ts'
import { scratch } from './cli.ts'
import { startServe } from './serve-harness.ts'

const TALK = `name: talk
settings: { llm: { model: "ollama:tiny" } }
nodes:
  - name: ask
    uses: llm.call
    with: { prompt: "Say hello to {{ state.name }}." }
    output: { greeting: "{{ result.content }}" }
  - name: note
    run: "return { noted: true }"
`

const FAIL = `name: fail
nodes:
  - name: boom
    run: "throw new Error('no')"
`

test('31 item 5: /metrics needs the token, parses, and counts runs, nodes, model calls, scheduler waits, checkpoints, memory', async () => {
  const s = scratch()
  mkdirSync(s.path('agents'))
  writeFileSync(s.path('agents/talk.yaml'), TALK)
  writeFileSync(s.path('agents/fail.yaml'), FAIL)
  const token = 'metrics-test-token-0123456789'
  writeFileSync(s.path('token'), token)
  const model = await startFakeModelServer({ models: ['tiny'] })
  model.fallback({ content: 'hello there' })
  const d = await startServe(['--data-dir', s.path('data'), '--agents', s.path('agents'), '--token-file', s.path('token')], {
    env: { OLLAMA_HOST: model.url },
  })
  const auth = { authorization: `Bearer ${token}` }
  try {
    const refused = await d.json('GET', '/metrics')
    assert.is(refused.status, 401)
    assert.is(refused.body.error.code, 'UNAUTHORIZED')
    for (const id of ['t1', 't2'])
      assert.is((await d.json('POST', '/api/runs', { agent: 'talk', run_id: id, input: { name: id } }, auth)).status, 201)
    assert.is((await d.json('POST', '/api/runs', { agent: 'fail', run_id: 'f1' }, auth)).status, 201)
    for (const id of ['t1', 't2', 'f1']) await d.waitLog(new RegExp(`run ${id} (completed|failed)`))
    assert.is((await d.json('GET', '/api/runs/t2', undefined, auth)).body.state.greeting, 'hello there')

    const reply = await fetch(`${d.url}/metrics`, { headers: auth })
    assert.is(reply.status, 200)
    assert.match(reply.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/)
    const e = parseExposition(await reply.text())
    for (const [name, type] of [
      ['tea_runs', 'gauge'],
      ['tea_runs_started_total', 'counter'],
      ['tea_runs_ended_total', 'counter'],
      ['tea_node_duration_seconds', 'histogram'],
      ['tea_model_call_duration_seconds', 'histogram'],
      ['tea_model_queue_wait_seconds', 'histogram'],
      ['tea_checkpoints_written_total', 'counter'],
      ['process_resident_memory_bytes', 'gauge'],
      ['nodejs_heap_used_bytes', 'gauge'],
    ])
      assert.is(e.types.get(name!), type, name)
    assert.is(e.get('tea_runs', { status: 'completed' }), 2)
    assert.is(e.get('tea_runs', { status: 'failed' }), 1)
    assert.is(e.get('tea_runs_started_total', { kind: 'start' }), 3)
    assert.is(e.get('tea_runs_ended_total', { status: 'completed' }), 2)
    assert.is(e.get('tea_runs_ended_total', { status: 'failed' }), 1)
    assert.is(e.get('tea_node_duration_seconds_count', { agent: 'talk', node: 'ask' }), 2)
    assert.is(e.get('tea_node_duration_seconds_count', { agent: 'talk', node: 'note' }), 2)
    assert.is(e.get('tea_model_call_duration_seconds_count', { model: 'ollama:tiny', outcome: 'ok' }), 2)
    assert.is(e.get('tea_model_queue_wait_seconds_count', { model: 'tiny' }), 2, "each call's wait in the scheduler")
    assert.ok(e.get('tea_checkpoints_written_total', { kind: 'snapshot' })! >= 3, 'each run starts with a snapshot')
    assert.ok(e.get('process_resident_memory_bytes')! > 20 * 2 ** 20)
    assert.is(model.chatRequests().length, 2)
  } finally {
    assert.is(await d.stop(), 0, d.stderr())
    await model.close()
    s.cleanup()
  }
})

test.run()
