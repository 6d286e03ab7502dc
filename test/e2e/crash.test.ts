/**
 * Crash safety through the real CLI: SIGKILL `tea run` between nodes, `tea resume`, and compare with an
 * uninterrupted run. Side effects are appended to a log file by `file.write`, so a node that ran twice shows.
 */

import { readFileSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { afterNode, collect, killWhen, scratch, spawnTea, tea } from './cli.ts'

// Slow nodes wait asynchronously, as real model and HTTP calls do, so the process can act on a kill meanwhile.
const slow = (ms: number) => `"await new Promise((r) => setTimeout(r, ${ms})); return { slow: (state.slow || 0) + 1 }"`
const write = (i: number) => `
  - name: w${i}
    uses: file.write
    with: { path: log.txt, content: "w${i}\\n", append: true }
    output: { last: "w${i}" }`
const AGENT = `name: crashy
nodes:${[1, 2, 3, 4, 5].map((i) => `${write(i)}${i < 5 ? `\n  - name: s${i}\n    run: ${slow(120)}` : ''}`).join('')}
`

/** SIGKILLs the run as soon as `node` has ended (its record committed). */
async function killAfter(node: string, args: string[]): Promise<void> {
  const r = await killWhen(args, afterNode(node))
  assert.is(r.signal, 'SIGKILL', `the run should have been killed after ${node}: ${r.stderr}`)
}

const runArgs = (dir: string) => ['run', `${dir}/agent.yaml`, '--data-dir', `${dir}/data`, '--run-id', 'crash']
const resumeArgs = (dir: string) => ['resume', 'crash', '--data-dir', `${dir}/data`]

test('a run SIGKILLed between nodes resumes to the same final state, never re-running a recorded node', async () => {
  const clean = scratch({ 'agent.yaml': AGENT })
  const reference = await tea(['run', clean.path('agent.yaml'), '--data-dir', clean.path('data'), '-q'])
  assert.is(reference.code, 0, reference.stderr)

  const s = scratch({ 'agent.yaml': AGENT })
  await killAfter('w3', runArgs(s.dir))
  assert.is(readFileSync(s.path('log.txt'), 'utf8'), 'w1\nw2\nw3\n')
  const runs = await tea(['runs', '--data-dir', s.path('data'), '--json'])
  assert.is(JSON.parse(runs.stdout)[0].status, 'running', 'a killed run is left marked running')

  const resumed = await tea(['resume', 'crash', '--data-dir', s.path('data'), '-q'])
  assert.is(resumed.code, 0, resumed.stderr)
  assert.equal(JSON.parse(resumed.stdout), JSON.parse(reference.stdout))
  assert.is(readFileSync(s.path('log.txt'), 'utf8'), 'w1\nw2\nw3\nw4\nw5\n', 'every write node ran exactly once')
  const after = await tea(['runs', '--data-dir', s.path('data'), '--json'])
  assert.is(JSON.parse(after.stdout)[0].status, 'completed')
  clean.cleanup()
  s.cleanup()
})

test('kills at several points in a row still end in the same final state', async () => {
  const clean = scratch({ 'agent.yaml': AGENT })
  const reference = await tea(['run', clean.path('agent.yaml'), '--data-dir', clean.path('data'), '-q'])
  const s = scratch({ 'agent.yaml': AGENT })
  await killAfter('w1', runArgs(s.dir))
  // Each kill lands while a slow node is in flight: a side-effecting node in flight would rightly run again.
  for (const node of ['w2', 'w3', 'w4']) await killAfter(node, resumeArgs(s.dir))
  const last = await tea(['resume', 'crash', '--data-dir', s.path('data'), '-q'])
  assert.is(last.code, 0, last.stderr)
  assert.equal(JSON.parse(last.stdout), JSON.parse(reference.stdout))
  assert.is(readFileSync(s.path('log.txt'), 'utf8'), 'w1\nw2\nw3\nw4\nw5\n')
  clean.cleanup()
  s.cleanup()
})

test('SIGINT stops after the current checkpoint with exit 130, and the run resumes', async () => {
  const s = scratch({ 'agent.yaml': AGENT })
  const child = spawnTea(['run', s.path('agent.yaml'), '--data-dir', s.path('data'), '--run-id', 'sig', '--stream'])
  child.stdout!.on('data', (d: Buffer) => {
    if (d.toString().includes('"node":"s2"') && d.toString().includes('node_start')) child.kill('SIGINT')
  })
  const r = await collect(child)
  assert.is(r.code, 130, r.stderr)
  assert.match(r.stderr, /tea resume sig/)
  const runs = JSON.parse((await tea(['runs', '--data-dir', s.path('data'), '--json'])).stdout)
  assert.is(runs[0].status, 'cancelled')
  const resumed = await tea(['resume', 'sig', '--data-dir', s.path('data'), '-q'])
  assert.is(resumed.code, 0, resumed.stderr)
  assert.is(readFileSync(s.path('log.txt'), 'utf8'), 'w1\nw2\nw3\nw4\nw5\n')
  s.cleanup()
})

test.run()
