/**
 * Issue 31 item 6: `tea serve --replay CASSETTE` answers every model call of the runs it starts and resumes from the
 * cassette, with no model server (OLLAMA_HOST is a closed port in every test here): a run paused at an interrupt
 * and resumed through the API, a run a kill left unfinished and resumed at start. A cassette that cannot be read
 * stops tea serve at start; `--print-systemd` repeats the flag; `--help` names it.
 */

import { join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { afterNode, killWhen, ROOT, scratch, tea } from './cli.ts'
import { startServe, waitEvent } from './serve-harness.ts'

const APPROVAL = join(ROOT, 'examples/approval/cassette.jsonl')
const TRIAGE = join(ROOT, 'examples/triage/agent.yaml')

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

test('issue 31 item 6: tea serve --replay resumes a run a kill left unfinished and finishes it from the cassette', async () => {
  const s = scratch()
  const data = s.path('data')
  const cassette = join(ROOT, 'examples/triage/cassette.jsonl')
  const killed = await killWhen(
    ['run', TRIAGE, '--run-id', 'triage-1', '--replay', cassette, '--data-dir', data],
    (e) => afterNode('classify')(e) && e.step === 1,
  )
  assert.is(killed.signal, 'SIGKILL')
  const daemon = await startServe(['--agents', join(ROOT, 'examples'), '--replay', cassette, '--data-dir', data])
  try {
    await daemon.waitLog(/resuming 1 unfinished run: triage-1/)
    await daemon.waitLog(/run triage-1 completed/)
    const run = await daemon.json('GET', '/api/runs/triage-1')
    assert.equal([run.body.status, run.body.state.queue, run.body.state.tries], ['completed', 'engineering', 2])
  } finally {
    assert.is(await daemon.stop(), 0)
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
