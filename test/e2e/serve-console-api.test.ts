/**
 * The API behind the console (issue 31 items 1, 2 and 6): `GET /api/agents/:name` (the form and the graph) stays
 * inside the agents folder and behind the token; a paused run says what it waits for; and `tea runs --json` and the
 * API name a run's fields alike.
 */

import { mkdirSync, writeFileSync } from 'node:fs'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { scratch, tea } from './cli.ts'
import { startServe } from './serve-harness.ts'

const REVIEW = `name: review
state_schema: { topic: str }
nodes:
  - name: draft
    description: Check the note
    run: "return { note: 'Note about ' + state.topic }"
    interrupt: after
  - name: send
    run: "return { sent: state.approved ? state.note : null }"
`

test('31 items 1, 2, 6: agents for the form, inside the folder and behind the token; paused runs; tea runs --json and the API alike', async () => {
  const s = scratch()
  mkdirSync(s.path('agents/team'), { recursive: true })
  writeFileSync(s.path('agents/team/review.yaml'), REVIEW)
  writeFileSync(s.path('agents/bad.yaml'), 'name: bad\nnodes: []\n')
  writeFileSync(s.path('secret.yaml'), REVIEW.replace('review', 'secret'))
  const token = 'console-api-token-0123456789'
  writeFileSync(s.path('token'), token)
  const d = await startServe(['--data-dir', s.path('data'), '--agents', s.path('agents'), '--token-file', s.path('token')])
  const auth = { authorization: `Bearer ${token}` }
  try {
    assert.is((await d.json('GET', '/api/agents/team%2Freview')).status, 401, 'behind the token')
    const agent = await d.json('GET', '/api/agents/team%2Freview', undefined, auth)
    assert.is(agent.status, 200, JSON.stringify(agent.body))
    assert.equal([agent.body.name, agent.body.file, agent.body.fields], ['review', 'team/review.yaml', [{ key: 'topic', type: 'string' }]])
    assert.equal(
      agent.body.graph.nodes.map((n: { id: string }) => n.id),
      ['__start__', 'draft', 'send', '__end__'],
    )
    const outside = await d.json('GET', '/api/agents/..%2Fsecret', undefined, auth)
    assert.equal([outside.status, outside.body.error.code], [400, 'PATH_OUTSIDE_AGENTS'])
    const missing = await d.json('GET', '/api/agents/nobody', undefined, auth)
    assert.equal([missing.status, missing.body.error.code], [404, 'AGENT_NOT_FOUND'])
    const invalid = await d.json('GET', '/api/agents/bad', undefined, auth)
    assert.equal([invalid.status, invalid.body.error.code], [400, 'AGENT_INVALID'])

    assert.is((await d.json('POST', '/api/runs', { agent: 'team/review', run_id: 'p1', input: { topic: 'roses' } }, auth)).status, 201)
    await d.waitLog(/run p1 interrupted/)
    const run = (await d.json('GET', '/api/runs/p1', undefined, auth)).body
    assert.is(run.agent_file, 'team/review.yaml')
    assert.equal(run.paused, {
      node: 'draft',
      when: 'after',
      message: 'Check the note',
      keys: ['note', 'approved'],
      values: { note: 'Note about roses' },
    })

    // One shape: the CLI's --json and the API list the same fields under the same names.
    const api = (await d.json('GET', '/api/runs', undefined, auth)).body
    const cli = JSON.parse((await tea(['runs', '--json', '--data-dir', s.path('data')])).stdout)
    assert.equal(cli, api)
    assert.equal(Object.keys(cli[0]).sort(), ['agent', 'agent_path', 'created_at', 'node', 'run_id', 'status', 'step', 'updated_at'])
    assert.match(cli[0].created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  } finally {
    assert.is(await d.stop(), 0, d.stderr())
    s.cleanup()
  }
})

test.run()
