/**
 * `tea serve` after a power cut and after a shutdown (issue 16, SPEC §3.11): runs left unfinished are resumed at
 * the next start — unless --no-resume — and no node whose record committed runs again. Side effects go to a log
 * by `file.write`, so a node that ran twice shows.
 */

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { scratch } from './cli.ts'
import { startGate, startServe, waitEvent } from './serve-harness.ts'

const AGENT = `name: logged
settings: { http: { allow: ["127.0.0.1"] } } # the test's gate is on loopback, which http.* refuses by default
nodes:
  - name: w1
    uses: file.write
    with: { path: log.txt, content: "{{ state.tag }} w1\\n", append: true }
  - name: wait
    uses: http.get
    with: { url: "{{ state.gate }}", timeout: 120 }
  - name: w2
    uses: file.write
    with: { path: log.txt, content: "{{ state.tag }} w2\\n", append: true }
`

function project() {
  const s = scratch()
  mkdirSync(s.path('agents'))
  writeFileSync(s.path('agents/logged.yaml'), AGENT)
  return {
    ...s,
    args: ['--data-dir', s.path('data'), '--agents', s.path('agents')],
    log: () => readFileSync(s.path('agents/log.txt'), 'utf8'),
  }
}

const lines = (text: string) => text.trim().split('\n').sort()

test('16 serve power loss: SIGKILL during two runs; the next tea serve finishes both, re-running no recorded node', async () => {
  const p = project()
  const g = await startGate()
  const d = await startServe(p.args)
  try {
    for (const tag of ['r1', 'r2']) {
      const r = await d.json('POST', '/api/runs', { agent: 'logged', run_id: tag, input: { tag, gate: g.url } })
      assert.is(r.status, 201, JSON.stringify(r.body))
      await waitEvent(d.url, tag, (e) => e.type === 'node_end' && e.node === 'w1') // w1's record has committed
    }
    await g.waiting(2) // both runs are in the middle: at the gate
  } finally {
    await d.stop('SIGKILL')
  }
  assert.equal(lines(p.log()), ['r1 w1', 'r2 w1'])
  g.open()
  const next = await startServe(p.args)
  try {
    await next.waitLog(/resuming 2 unfinished runs: (r1, r2|r2, r1)/)
    await next.waitLog(/run r1 completed[\s\S]*run r2 completed|run r2 completed[\s\S]*run r1 completed/)
    for (const id of ['r1', 'r2']) {
      const run = await next.json('GET', `/api/runs/${id}`)
      assert.is(run.body.status, 'completed')
      assert.is(run.body.state.tag, id)
    }
  } finally {
    assert.is(await next.stop(), 0)
    await g.close()
  }
  assert.equal(lines(p.log()), ['r1 w1', 'r1 w2', 'r2 w1', 'r2 w2'], 'every write ran exactly once')
  p.cleanup()
})

test('16 serve shutdown: SIGTERM stops a run after its checkpoint (exit 0); --no-resume leaves it, a plain start resumes it', async () => {
  const p = project()
  const g = await startGate()
  const d = await startServe(p.args)
  await d.json('POST', '/api/runs', { agent: 'logged', run_id: 't1', input: { tag: 't1', gate: g.url } })
  await g.waiting(1)
  const stopping = d.stop('SIGTERM')
  await d.waitLog(/SIGTERM: stopping/)
  g.open() // the node in flight finishes; the run stops after its checkpoint
  assert.is(await stopping, 0, d.stderr())
  assert.match(d.stderr(), /t1 will resume at the next start/)

  const idle = await startServe([...p.args, '--no-resume'])
  try {
    assert.is((await idle.json('GET', '/api/runs/t1')).body.status, 'cancelled')
  } finally {
    assert.is(await idle.stop(), 0)
  }
  // --no-resume does not forget the run: the next plain start resumes it.
  const next = await startServe(p.args)
  try {
    await next.waitLog(/run t1 completed/)
    assert.is((await next.json('GET', '/api/runs/t1')).body.status, 'completed')
  } finally {
    await next.stop()
    await g.close()
  }
  assert.equal(lines(p.log()), ['t1 w1', 't1 w2'])
  p.cleanup()
})

test.run()
