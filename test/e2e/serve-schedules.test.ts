/**
 * Schedules of `tea serve` (issue 16): a schedule missed while tea serve was down runs once at start; a fire
 * while the schedule's previous run is still going is skipped and logged; a bad cron expression stops the start.
 */

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { scratch, tea } from './cli.ts'
import { startGate, startServe } from './serve-harness.ts'

const HELLO = `name: hello
nodes:
  - name: a
    run: "return { greeted: state.who || 'nobody' }"
`
const GATED = `name: gated
settings: { http: { allow: ["127.0.0.1"] } } # the test's gate is on loopback, which http.* refuses by default
nodes:
  - name: wait
    uses: http.get
    with: { url: "{{ state.gate }}", timeout: 120 }
`

function project(config: string) {
  const s = scratch()
  mkdirSync(s.path('agents'))
  writeFileSync(s.path('agents/hello.yaml'), HELLO)
  writeFileSync(s.path('agents/gated.yaml'), GATED)
  writeFileSync(s.path('serve.yaml'), config)
  return { ...s, args: ['--config', s.path('serve.yaml'), '--data-dir', s.path('data')] }
}

test('16 schedules: a fire missed while tea serve was down runs once at start; a new schedule does not', async () => {
  const p = project(`agents: agents
schedules:
  - name: yearly
    agent: hello
    cron: "0 0 1 1 *"
    input: { who: garden }
  - name: fresh
    agent: hello
    cron: "0 0 1 1 *"
`)
  mkdirSync(p.path('data'))
  // tea serve last fired 'yearly' in 2020: the fires of 2021 onwards were missed; it runs once, not once per year.
  writeFileSync(p.path('data/serve-schedules.json'), JSON.stringify({ yearly: Date.UTC(2020, 0, 1) }))
  const d = await startServe(p.args)
  try {
    await d.waitLog(/schedule yearly: started (yearly-\S+) \(missed at \S+ while tea serve was down\)/)
    const runs = (await d.json('GET', '/api/runs')).body
    assert.is(runs.length, 1, JSON.stringify(runs))
    assert.match(runs[0].run_id, /^yearly-/)
    await d.waitLog(new RegExp(`run ${runs[0].run_id} completed`))
    assert.equal((await d.json('GET', `/api/runs/${runs[0].run_id}`)).body.state, { who: 'garden', greeted: 'garden' })
    assert.not.match(d.stderr(), /schedule fresh/)
  } finally {
    assert.is(await d.stop(), 0)
  }
  const state = JSON.parse(readFileSync(p.path('data/serve-schedules.json'), 'utf8'))
  assert.ok(state.yearly.last > Date.UTC(2025, 0, 1), 'the fire is recorded')
  assert.match(state.yearly.run, /^yearly-/, 'with the run it started')
  assert.ok(typeof state.fresh.last === 'number', 'a new schedule is remembered from its first start')
  // Started again: nothing missed since, nothing fires.
  const again = await startServe(p.args)
  try {
    assert.is((await again.json('GET', '/api/runs')).body.length, 1)
  } finally {
    await again.stop()
  }
  assert.not.match(again.stderr(), /schedule yearly: started/)
  p.cleanup()
})

test('16 schedules: no overlap — a fire while the previous run of the schedule still runs is skipped and logged', async () => {
  const g = await startGate()
  const p = project(`agents: agents
schedules:
  - name: often
    agent: gated
    cron: "* * * * * *"
    input: { gate: "${g.url}" }
`)
  const d = await startServe(p.args)
  try {
    const started = await d.waitLog(/schedule often: started \S+/)
    const runId = started.split(' ').at(-1)!
    await d.waitLog(new RegExp(`schedule often: skipped at \\S+: its run ${runId} is still running`))
    const runs = (await d.json('GET', '/api/runs')).body
    assert.equal(
      runs.map((r: any) => r.run_id),
      [runId],
      'one run at a time',
    )
    g.open()
  } finally {
    await d.stop()
    await g.close()
  }
  p.cleanup()
})

test('28 schedules I: after a SIGKILL, the run a schedule had going is still its run: the catch-up fire is skipped, not run beside it', async () => {
  const g = await startGate()
  const p = project(`agents: agents
schedules:
  - name: often
    agent: gated
    cron: "* * * * * *"
    input: { gate: "${g.url}" }
`)
  try {
    const d = await startServe(p.args)
    let runId: string
    try {
      runId = (await d.waitLog(/schedule often: started \S+/)).split(' ').at(-1)!
      await g.waiting(1)
    } finally {
      await d.stop('SIGKILL')
    }
    const kept = JSON.parse(readFileSync(p.path('data/serve-schedules.json'), 'utf8'))
    assert.is(kept.often.run, runId, 'the running run is written down with its fire time')
    const next = await startServe(p.args)
    try {
      await next.waitLog(new RegExp(`resuming 1 unfinished run: ${runId}`))
      await next.waitLog(new RegExp(`schedule often: skipped at \\S+: its run ${runId} is still (running|queued)`))
      await g.waiting(2) // the resumed run is back at its gate
      await next.waitLog(new RegExp(`(skipped at \\S+: its run ${runId} is still running[\\s\\S]*){2}`)) // fires go on being skipped
      assert.equal(
        (await next.json('GET', '/api/runs')).body.map((r: any) => r.run_id),
        [runId],
        'one run of the schedule at a time, across the kill',
      )
      assert.not.match(next.stderr(), /schedule often: started/)
      g.open()
      await next.waitLog(new RegExp(`run ${runId} completed`))
    } finally {
      await next.stop()
    }
  } finally {
    await g.close()
  }
  p.cleanup()
})

test('16 schedules: a cron expression that does not parse stops the start (exit 2, naming the schedule)', async () => {
  const p = project(`schedules:
  - name: broken
    agent: hello
    cron: "61 * * * *"
`)
  const r = await tea(['serve', '--listen', '127.0.0.1:0', ...p.args])
  assert.is(r.code, 2, r.stderr)
  assert.match(r.stderr, /schedule broken: /)
  const shape = project('schedules:\n  - agent: hello\n    cron: 5\n    when: never\n')
  const s = await tea(['serve', '--listen', '127.0.0.1:0', ...shape.args])
  assert.is(s.code, 2, s.stderr)
  assert.match(s.stderr, /is not a valid serve config/)
  assert.match(s.stderr, /schedules\.0\.cron/)
  assert.match(s.stderr, /schedules\.0\.when/)
  p.cleanup()
  shape.cleanup()
})

test.run()
