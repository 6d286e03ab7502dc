/**
 * Auto-resume does not loop for ever (issue 28 item 6, security-probe-2 C): a run whose node takes `tea serve` down
 * every time is resumed at most `--resume-limit` times in a row (default 3), then failed with RESUME_LIMIT, which
 * the API, the page's data and `tea runs` show. A person's `tea resume` still works and starts the count again.
 * The deaths are real: SIGKILL of the daemon while the node is in flight (held at a gate).
 */

import { mkdirSync, writeFileSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { scratch, spawnTea, tea } from './cli.ts'
import { startGate, GATED, startServe } from './serve-harness.ts'

/** Waits until the run's checkpointed state (what the API shows) holds `key`. */
async function committed(d: Awaited<ReturnType<typeof startServe>>, id: string, key: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if ((await d.json('GET', `/api/runs/${id}`)).body.state?.[key] !== undefined) return
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error(`run ${id}'s checkpoint never held '${key}'`)
}

function project() {
  const s = scratch()
  mkdirSync(s.path('agents'))
  writeFileSync(s.path('agents/gated.yaml'), GATED)
  return { ...s, data: s.path('data'), args: ['--data-dir', s.path('data'), '--agents', s.path('agents')] }
}

test('28 serve C: a run in flight at 4 SIGKILLs in a row is failed with RESUME_LIMIT at the next start, not resumed again', async () => {
  const p = project()
  const g = await startGate()
  try {
    const first = await startServe(p.args)
    assert.is((await first.json('POST', '/api/runs', { agent: 'gated', run_id: 'r1', input: { gate: g.url } })).status, 201)
    await g.waiting(1)
    // 'first' has finished, but its checkpoint commits beside the next node: killed before that, the next start
    // would run 'first' again, a node finishing in between, and the count would start again (as it should).
    try {
      await committed(first, 'r1', 'first')
    } finally {
      await first.stop('SIGKILL')
    }
    // Deaths 2, 3 and 4: each start resumes it, its node reaches the gate again, and the daemon is killed there.
    for (let attempt = 2; attempt <= 4; attempt++) {
      const d = await startServe(p.args)
      try {
        await d.waitLog(/resuming 1 unfinished run: r1/)
        await g.waiting(attempt)
        const runs = JSON.parse((await tea(['runs', '--data-dir', p.data, '--json'])).stdout)
        assert.is(runs[0].auto_resume.deaths, attempt - 1, 'the attempt is in the store before the node runs')
      } finally {
        await d.stop('SIGKILL')
      }
    }
    const last = await startServe(p.args)
    try {
      await last.waitLog(/run r1 not resumed: \[RESUME_LIMIT\]/)
      assert.not.match(last.stderr(), /resuming/)
      const run = (await last.json('GET', '/api/runs/r1')).body
      assert.is(run.status, 'failed')
      assert.is(run.error.code, 'RESUME_LIMIT')
      assert.match(run.error.message, /its process died 4 times in a row while the run was in flight in node 'wait'/)
      assert.match(run.error.message, /at most 3 times: --resume-limit/)
      assert.is((await last.json('GET', '/api/runs')).body[0].error.code, 'RESUME_LIMIT', 'the page lists it with its code')
      const events = await last.events('r1')
      assert.equal(
        events.map((e) => [e.type, e.error?.code]),
        [['error', 'RESUME_LIMIT']],
      )
      await new Promise((r) => setTimeout(r, 300))
      assert.is(g.held(), 4, 'the node did not run a fifth time')
    } finally {
      assert.is(await last.stop(), 0)
    }
    const table = await tea(['runs', '--data-dir', p.data])
    assert.match(table.stdout, /^RUN\s+STATUS\s+AGENT\s+NODE\s+STEP\s+UPDATED\s+ERROR$/m)
    assert.match(table.stdout, /^r1\s+failed\s+gated\s+.*RESUME_LIMIT: its process died 4 times in a row/m)
    const json = JSON.parse((await tea(['runs', '--data-dir', p.data, '--json'])).stdout)
    assert.is(json[0].error.code, 'RESUME_LIMIT')

    // A person resumes it: it runs (to the gate), and that process dying is a first death again.
    const byHand = spawnTea(['resume', 'r1', '--data-dir', p.data])
    byHand.stdout!.resume()
    byHand.stderr!.resume()
    await g.waiting(5)
    const exited = new Promise((r) => byHand.once('exit', r))
    byHand.kill('SIGKILL')
    await exited
    const after = await startServe(p.args)
    try {
      await after.waitLog(/resuming 1 unfinished run: r1/)
      await g.waiting(6)
      g.open()
      await after.waitLog(/run r1 completed/)
      const done = (await after.json('GET', '/api/runs/r1')).body
      assert.equal([done.status, done.state.first, done.state.last], ['completed', true, true])
    } finally {
      assert.is(await after.stop(), 0)
    }
  } finally {
    await g.close()
  }
  p.cleanup()
})

test('28 serve C: --resume-limit 0 fails a crashed run at the next start; a resume through the API starts the count again', async () => {
  const p = project()
  const g = await startGate()
  try {
    const d = await startServe([...p.args, '--resume-limit', '0'])
    await d.json('POST', '/api/runs', { agent: 'gated', run_id: 'z1', input: { gate: g.url } })
    await g.waiting(1)
    await d.stop('SIGKILL')
    const next = await startServe([...p.args, '--resume-limit', '0'])
    try {
      await next.waitLog(/run z1 not resumed: \[RESUME_LIMIT\] its process died 1 time in a row/)
    } finally {
      await next.stop()
    }
    // Resumed through the API (a person's resume) and killed in flight: a first death, resumed under limit 1.
    const one = await startServe([...p.args, '--resume-limit', '1'])
    try {
      assert.is((await one.json('POST', '/api/runs/z1/resume', {})).status, 202)
      await g.waiting(2)
    } finally {
      await one.stop('SIGKILL')
    }
    const again = await startServe([...p.args, '--resume-limit', '1'])
    try {
      await again.waitLog(/resuming 1 unfinished run: z1/, 20_000)
      g.open()
      await again.waitLog(/run z1 completed/)
    } finally {
      await again.stop()
    }
  } finally {
    await g.close()
  }
  p.cleanup()
})

test.run()
