/**
 * retry.loop under SIGKILL through the real CLI: the run is killed after the correction and before the next
 * validation has finished; `tea resume` goes on from there — the correction is not run again and the counters
 * hold. The validator and the correction log each run to a file (file.write append), so a rerun shows.
 */
import { existsSync, readFileSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { collect, scratch, spawnTea, tea } from './cli.ts'
import { waitFor } from '../support/wait.ts'

const AGENT = `name: retry-crash
initial_state:
  entities: [{ type: x }]
nodes:
  - name: check
    uses: retry.loop
    with:
      validate: flow.steps
      validate_args:
        steps:
          - uses: file.write
            with: { path: validating.txt, content: "validating {{ state._retry_count }}\\n", append: true }
          - run: "if (state._retry_count > 0) await new Promise((r) => setTimeout(r, 1500)); return {}"
          - uses: file.write
            with: { path: log.txt, content: "validated {{ state._retry_count }}\\n", append: true }
          - run: "return { valid: state.entities.every((e) => e.name), errors: state.entities.every((e) => e.name) ? [] : [{ type: 'missing', message: 'no name' }] }"
      correct: fix
      max_retries: 2
  - name: fix
    uses: flow.steps
    with:
      steps:
        - run: "return { entities: state.entities.map((e) => ({ name: 'Unknown', ...e })) }"
        - uses: file.write
          with: { path: log.txt, content: "fixed\\n", append: true }
  - name: report
    run: "return { count: state._retry_count, exhausted: state._retry_exhausted, valid: state._retry_result.valid }"
edges:
  - from: check
    to: report
  - from: report
    to: __end__
`

test('retry.loop killed between the correction and the next validation resumes there: no second correction, counters intact', async () => {
  const s = scratch({ 'agent.yaml': AGENT })
  try {
    const child = spawnTea(['run', s.path('agent.yaml'), '--data-dir', s.path('data'), '--run-id', 'rc', '-q'])
    const ended = collect(child)
    const log = s.path('log.txt')
    // "fixed" is written inside the correction, before its record commits; killed then, the correction would rightly
    // run again. The next validation starts after that commit and says so first (validating.txt), then waits 1.5 s
    // before it writes to log.txt: the kill falls between the two.
    const started = s.path('validating.txt')
    await waitFor(() => existsSync(started) && readFileSync(started, 'utf8').includes('validating 1'), 'the second validation to start', {
      timeoutMs: 20_000,
    })
    child.kill('SIGKILL')
    const killed = await ended
    assert.is(killed.signal, 'SIGKILL', killed.stderr)
    assert.is(readFileSync(log, 'utf8'), 'validated 0\nfixed\n')

    const resumed = await tea(['resume', 'rc', '--data-dir', s.path('data'), '-q'])
    assert.is(resumed.code, 0, resumed.stderr)
    assert.equal(JSON.parse(resumed.stdout).count, 1)
    assert.equal([JSON.parse(resumed.stdout).valid, JSON.parse(resumed.stdout).exhausted], [true, false])
    assert.is(readFileSync(log, 'utf8'), 'validated 0\nfixed\nvalidated 1\n', 'the correction ran once')
  } finally {
    s.cleanup()
  }
})

test.run()
