/**
 * One process owns a run at a time (issue 9, item 1): after a SIGKILL, two `tea resume` started together race for
 * the run; exactly one proceeds and the other is refused (exit 2) naming the owner, and no node runs twice.
 */

import { readFileSync, writeFileSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { afterNode, collect, killWhen, scratch, spawnTea, tea } from './cli.ts'

const NODES = 12
// Each node waits, then appends its name to log.txt: a node that ran twice shows twice.
const AGENT = `name: owned
nodes:
${Array.from(
  { length: NODES },
  (_, i) => `  - name: n${i + 1}
    run: "await new Promise((r) => setTimeout(r, 20)); await ctx.invoke('file.write', { path: 'log.txt', content: 'n${i + 1}\\\\n', append: true }); return { last: 'n${i + 1}' }"`,
).join('\n')}
`

async function killAfter(node: string, args: string[]): Promise<void> {
  const r = await killWhen(args, afterNode(node))
  assert.is(r.signal, 'SIGKILL', r.stderr)
}

const TRIALS = Number(process.env.TEA_DOUBLE_RESUME_TRIALS ?? 5)

test(`two tea resume of one killed run: exactly one proceeds, the other exits 2 naming the owner (${TRIALS} trials)`, async () => {
  for (let trial = 0; trial < TRIALS; trial++) {
    const s = scratch({ 'agent.yaml': AGENT })
    try {
      await killAfter('n3', ['run', s.path('agent.yaml'), '--data-dir', s.path('data'), '--run-id', 'r'])
      const args = ['resume', 'r', '--data-dir', s.path('data'), '-q']
      const [a, b] = await Promise.all([tea(args), tea(args)])
      const codes = [a.code, b.code].sort()
      assert.equal(codes, [0, 2], `trial ${trial}: ${a.stderr} | ${b.stderr}`)
      const loser = a.code === 2 ? a : b
      assert.match(loser.stderr, /RUN_NOT_RESUMABLE: run r (is running in another process \(pid \d+\)|already completed)/)
      const log = readFileSync(s.path('log.txt'), 'utf8').trim().split('\n')
      assert.equal(
        log,
        Array.from({ length: NODES }, (_, i) => `n${i + 1}`),
        `trial ${trial}: every node exactly once`,
      )
    } finally {
      s.cleanup()
    }
  }
})

test('a resume while the run is alive in another process is refused with its pid; the run finishes undisturbed', async () => {
  const s = scratch({ 'agent.yaml': AGENT })
  try {
    // The run's first node takes 3 s, so that the resume (a second process to start) surely meets it alive.
    writeFileSync(s.path('agent.yaml'), AGENT.replace('setTimeout(r, 20)', 'setTimeout(r, 3000)'))
    const first = spawnTea(['run', s.path('agent.yaml'), '--data-dir', s.path('data'), '--run-id', 'r', '--stream'])
    const started = new Promise<void>((resolve) => first.stdout!.once('data', () => resolve()))
    await started
    const second = await tea(['resume', 'r', '--data-dir', s.path('data')])
    assert.is(second.code, 2, second.stderr)
    assert.match(second.stderr, new RegExp(`running in another process \\(pid ${first.pid}\\)`))
    assert.match(second.stderr, /hint: stop that process first/)
    const done = await collect(first)
    assert.is(done.code, 0, done.stderr)
    assert.is(readFileSync(s.path('log.txt'), 'utf8').trim().split('\n').length, NODES)
  } finally {
    s.cleanup()
  }
})

test.run()
