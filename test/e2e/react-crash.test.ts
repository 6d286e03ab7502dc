/**
 * reason.react under SIGKILL through the real CLI: a 10-step loop whose tool appends to a file is killed while the
 * model works on step 4; `tea resume` goes on at step 4. Steps 1–3 are not run again (the file shows each tool
 * call once) and the model is shown their observations, restored from the step checkpoints.
 */

import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startFakeModelServer } from '../support/fake-model-server.ts'
import { collect, scratch, spawnTea, tea } from './cli.ts'

const agent = (workspace: string) => `name: react-crash
settings:
  llm: { model: "ollama:tiny" }
  workspace: ${workspace}
nodes:
  - name: research
    uses: reason.react
    with:
      goal: write ten lines
      tools: [file.write]
      max_steps: 10
    output: result
`

const write = (n: number, delayMs = 0) => ({
  content: { thought: `line ${n}`, action: 'file.write', action_input: { path: 'log.txt', content: `step ${n}\n`, append: true } },
  delayMs,
})

test('a ReAct loop killed mid-run resumes at the next step without re-running finished tool calls', async () => {
  const s = scratch()
  const server = await startFakeModelServer()
  try {
    writeFileSync(s.path('agent.yaml'), agent(s.dir))
    server.script(write(1), write(2), write(3), write(4, 30_000))
    const env = { OLLAMA_HOST: server.url }
    const child = spawnTea(['run', s.path('agent.yaml'), '--data-dir', s.path('data'), '--run-id', 'rx', '-q'], { env })
    const ended = collect(child)
    const deadline = Date.now() + 20_000
    while (server.chatRequests().length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    assert.is(server.chatRequests().length, 4, 'the loop did not reach step 4')
    await new Promise((r) => setTimeout(r, 100))
    child.kill('SIGKILL')
    const killed = await ended
    assert.is(killed.signal, 'SIGKILL', killed.stderr)
    assert.is(readFileSync(s.path('log.txt'), 'utf8'), 'step 1\nstep 2\nstep 3\n')

    server.script(write(4), write(5), write(6), write(7), write(8), write(9), {
      content: { thought: 'done', action: 'finish', action_input: { answer: 'nine lines' } },
    })
    const before = server.chatRequests().length
    const resumed = await tea(['resume', 'rx', '--data-dir', s.path('data'), '-q'], { env })
    assert.is(resumed.code, 0, resumed.stderr)
    const result = JSON.parse(resumed.stdout).result
    assert.is(result.final_answer, 'nine lines')
    assert.is(result.total_steps, 10)
    assert.equal(
      result.steps.map((x: { step: number }) => x.step),
      [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
    )
    const lines = readFileSync(s.path('log.txt'), 'utf8')
    assert.is(lines, [1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => `step ${n}\n`).join(''), 'a finished tool call ran twice')
    // The first model call after the resume already knows steps 1–3 and what they returned.
    const first = server.chatRequests()[before]!.body.messages as Array<{ role: string; content: string }>
    const observations = first.filter((m) => m.role === 'user' && m.content.startsWith('Observation:'))
    assert.is(observations.length, 3)
    assert.is(server.chatRequests().length - before, 7)
    assert.ok(existsSync(s.path('data')))
  } finally {
    await server.close()
    s.cleanup()
  }
})

test.run()
