/**
 * Issue 31 item 6: `tea serve --replay CASSETTE` answers every model call of the runs it starts and resumes from the
 * cassette, with no model server (OLLAMA_HOST is a closed port in every test here): a run paused at an interrupt
 * and resumed through the API, a run a kill left unfinished and resumed at the next start. A cassette that cannot be read
 * stops tea serve at start; `--print-systemd` repeats the flag; `--help` names it.
 */

import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { ROOT, scratch, tea } from './cli.ts'
import { startGate, startServe, waitEvent } from './serve-harness.ts'

const APPROVAL = join(ROOT, 'examples/approval/cassette.jsonl')

test('issue 31 item 6: a run started under tea serve --replay pauses, is approved through the API and completes from the cassette', async () => {
  const s = scratch()
  const daemon = await startServe(['--agents', join(ROOT, 'examples'), '--replay', APPROVAL, '--data-dir', s.path('data')])
  try {
    await daemon.waitLog(/replaying model replies from \S+approval\/cassette\.jsonl \(no model server is contacted\)/)
    const started = await daemon.json('POST', '/api/runs', { agent: 'approval/agent', run_id: 'water-1' })
    assert.is(started.status, 201, JSON.stringify(started.body))
    const paused = await waitEvent(daemon.url, 'water-1', (e) => e.type === 'interrupt' || e.type === 'error')
    assert.equal([paused.type, paused.node], ['interrupt', 'act'])
    const run = await daemon.json('GET', '/api/runs/water-1')
    assert.equal([run.body.status, run.body.state.proposal.action], ['interrupted', 'water bed 3'])

    const resumed = await daemon.json('POST', '/api/runs/water-1/resume', { input: { approved: false } })
    assert.is(resumed.status, 202, JSON.stringify(resumed.body))
    const end = await waitEvent(daemon.url, 'water-1', (e) => e.type === 'complete' || e.type === 'error')
    assert.is(end.type, 'complete', JSON.stringify(end))
    // The answer chose the recorded reply: the log line for a proposal not approved.
    assert.equal(
      [end.state.done, end.state.log],
      ['nothing: the proposal was not approved', 'Bed 3: watering proposed (soil moisture 12 %), not approved; nothing done.'],
    )
  } finally {
    assert.is(await daemon.stop(), 0)
    s.cleanup()
  }
})

/** Asks, waits at the test's gate, asks again: killed at the gate, its second question comes after a restart. */
const GATED_ASKER = `name: asker
settings:
  llm: { model: "ollama:qwen2.5:1.5b" }
  http: { allow: ["127.0.0.1"] }
nodes:
  - name: ask
    uses: llm.call
    with: { prompt: "First question." }
    output: { first: "{{ result.content }}" }
  - name: wait
    uses: http.get
    with: { url: "{{ state.gate }}", timeout: 120 }
  - name: tell
    uses: llm.call
    with: { prompt: "Second question." }
    output: { second: "{{ result.content }}" }
`
const exchange = (prompt: string, reply: string): string =>
  JSON.stringify({
    request: { model: 'ollama:qwen2.5:1.5b', messages: [{ role: 'user', content: prompt }] },
    response: { content: reply, usage: { prompt_tokens: 3, completion_tokens: 2 } },
  })

test('issue 31 item 6: a run a kill left unfinished is resumed at the next tea serve --replay start and finishes from the cassette', async () => {
  const s = scratch({ 'cassette.jsonl': `${exchange('First question.', 'One.')}\n${exchange('Second question.', 'Two.')}\n` })
  mkdirSync(s.path('agents'))
  writeFileSync(s.path('agents/asker.yaml'), GATED_ASKER)
  const args = ['--agents', s.path('agents'), '--replay', s.path('cassette.jsonl'), '--data-dir', s.path('data')]
  const gate = await startGate()
  const first = await startServe(args)
  let second: Awaited<ReturnType<typeof startServe>> | undefined
  try {
    const started = await first.json('POST', '/api/runs', { agent: 'asker', run_id: 'asker-1', input: { gate: gate.url } })
    assert.is(started.status, 201, JSON.stringify(started.body))
    // 'ask' answered from the cassette and recorded (an error here, not a wait for ever, if it were not).
    const asked = await waitEvent(first.url, 'asker-1', (e) => (e.type === 'node_end' && e.node === 'ask') || e.type === 'error')
    assert.equal([asked.type, asked.update?.first], ['node_end', 'One.'])
    await gate.waiting(1)
    await first.stop('SIGKILL')
    gate.open()
    second = await startServe(args)
    await second.waitLog(/resuming 1 unfinished run: asker-1/)
    await second.waitLog(/run asker-1 completed/)
    const run = await second.json('GET', '/api/runs/asker-1')
    assert.equal([run.body.status, run.body.state.first, run.body.state.second], ['completed', 'One.', 'Two.'])
  } finally {
    await first.stop('SIGKILL')
    if (second) assert.is(await second.stop(), 0)
    await gate.close()
    s.cleanup()
  }
})

test('issue 31 item 6: a cassette tea serve cannot read stops it at start, before it listens', async () => {
  const s = scratch({ 'bad.jsonl': '{"request": 1}\n' })
  for (const [file, message] of [
    [s.path('missing.jsonl'), /CASSETTE_INVALID: cannot read cassette \S+missing\.jsonl/],
    [s.path('bad.jsonl'), /CASSETTE_INVALID: \S+bad\.jsonl:1: invalid cassette line: expected request\.model to be a string/],
  ] as const) {
    const r = await tea([
      'serve',
      '--listen',
      '127.0.0.1:0',
      '--agents',
      join(ROOT, 'examples'),
      '--replay',
      file,
      '--data-dir',
      s.path('data'),
    ])
    assert.is(r.code, 2, r.stderr)
    assert.match(r.stderr, message)
    assert.not.match(r.stderr, 'listening on')
  }
  s.cleanup()
})

test('issue 31 item 6: --print-systemd repeats --replay as an absolute path, and --help names it', async () => {
  const s = scratch()
  const unit = await tea(['serve', '--print-systemd', '--replay', 'examples/hello/cassette.jsonl', '--data-dir', s.path('data')])
  assert.is(unit.code, 0, unit.stderr)
  assert.match(
    unit.stdout,
    new RegExp(`^ExecStart=.* --replay ${join(ROOT, 'examples/hello/cassette.jsonl').replace(/[.]/g, '\\.')}$`, 'm'),
  )
  const help = await tea(['serve', '--help'])
  // Help wraps its lines: compared with the blanks squeezed.
  assert.match(
    help.stdout.replace(/\s+/g, ' '),
    "--replay CASSETTE answer every run's model calls from a JSONL cassette, resumes too (no model server is contacted)",
  )
  s.cleanup()
})

test.run()
