/**
 * Reasoning through the real CLI: a ReAct agent whose model (the fake model server) asks for web.scrape on a
 * company's page served on 127.0.0.1; the page is fetched for real, its text reaches the model, and the answer
 * comes back in the run's output.
 */

import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { startFakeModelServer } from '../support/fake-model-server.ts'
import { scratch, tea } from './cli.ts'

test('001.4R-E2E-001 a ReAct agent researching a company calls web.scrape on its page and returns the answer', async () => {
  const hits: string[] = []
  const site = createServer((req, res) => {
    hits.push(req.url ?? '')
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end('<title>Acme GmbH</title><h1>About Acme</h1><p>Acme makes anvils in Ulm since 1921.</p>')
  })
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r))
  const page = `http://127.0.0.1:${(site.address() as AddressInfo).port}/about`
  const model = await startFakeModelServer()
  const s = scratch({
    'agent.yaml': `name: company-research
settings:
  llm: { model: "ollama:tiny" }
  http: { allow: ["127.0.0.1"] } # the company's page is served on loopback, which web.scrape refuses by default
nodes:
  - name: research
    uses: reason.react
    with:
      goal: "{{ state.goal }} The company's page: {{ state.page }}"
      tools: [web.scrape]
    output: research
`,
  })
  try {
    model.script(
      { content: { thought: 'Read the page.', action: 'web.scrape', action_input: { url: page } } },
      {
        match: 'anvils in Ulm',
        content: { thought: 'Found it.', action: 'finish', action_input: { answer: 'Acme makes anvils in Ulm (since 1921).' } },
      },
    )
    const r = await tea(
      ['run', s.path('agent.yaml'), '--data-dir', s.path('data'), '-q', '--set', 'goal=Find company info', '--set', `page=${page}`],
      {
        env: { OLLAMA_HOST: model.url },
      },
    )
    assert.is(r.code, 0, r.stderr)
    const research = JSON.parse(r.stdout).research
    assert.is(research.final_answer, 'Acme makes anvils in Ulm (since 1921).')
    assert.equal(hits, ['/about'])
    assert.equal(
      research.steps.map((x: { action: string }) => x.action),
      ['web.scrape', 'finish'],
    )
    assert.match(research.steps[0].observation, '"title":"Acme GmbH"')
  } finally {
    await model.close()
    site.closeAllConnections()
    await new Promise((r) => site.close(r))
    s.cleanup()
  }
})

test.run()
