/**
 * The status page of `tea serve` in a real browser (issue 16): Debian's Chromium, headless, driven by
 * playwright-core pointed at the system binary (nothing downloads a browser; .ci/install-browser.sh installs it).
 * The page must show the runs, and update live while a run progresses: the test holds a run at a gate, checks
 * what the page shows, opens the gate and waits for the page to show the run completed, with screenshots.
 */

import { mkdirSync, writeFileSync } from 'node:fs'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { skipIf } from '../support/skip.ts'
import { scratch, tea } from './cli.ts'
import { startGate, startServe } from './serve-harness.ts'
import { CHROMIUM, sharedBrowser } from '../support/browser.ts'

const t = suite('the status page')
const browser = sharedBrowser(t.after)

const AGENT = `name: steps
settings: { http: { allow: ["127.0.0.1"] } } # the test's gate is on loopback, which http.* refuses by default
nodes:
  - name: prepare
    run: "return { prepared: true }"
  - name: wait
    uses: http.get
    with: { url: "{{ state.gate }}", timeout: 120 }
  - name: finish
    run: "return { done: 'yes' }"
`

skipIf(
  t,
  CHROMIUM ? false : 'no chromium at /usr/bin/chromium (bash .ci/install-browser.sh installs it)',
  '16 page: runs, node timeline and final state in headless Chromium, updated live as the run progresses; phone width',
  async () => {
    const s = scratch()
    mkdirSync(s.path('agents'))
    writeFileSync(s.path('agents/steps.yaml'), AGENT)
    const g = await startGate()
    const token = 'page-test-token-0123456789'
    writeFileSync(s.path('token'), token)
    const task = await tea([
      'aof',
      'task',
      'create',
      '--title',
      'Check pump',
      '--agent',
      'pump-1',
      '--status',
      'ready',
      '--data-dir',
      s.path('data'),
    ])
    assert.is(task.code, 0, task.stderr)
    const d = await startServe(['--data-dir', s.path('data'), '--agents', s.path('agents'), '--token-file', s.path('token')])
    const context = await (await browser()).newContext({ viewport: { width: 390, height: 844 } })
    try {
      const auth = { authorization: `Bearer ${token}` }
      assert.is((await d.json('POST', '/api/runs', { agent: 'steps', run_id: 'live', input: { gate: g.url } }, auth)).status, 201)
      await g.waiting(1)
      // A phone: 390 px wide.
      const page = await context.newPage()
      const external: string[] = []
      page.on('request', (r) => {
        if (!r.url().startsWith(d.url)) external.push(r.url())
      })
      await page.goto(`${d.url}/?token=${token}`) // the page keeps the token in sessionStorage, and leaves the address
      await page.locator('#runs li[data-run="live"] .status.running').waitFor()
      assert.is(page.url(), `${d.url}/`, 'the token is out of the address bar and history')
      assert.equal(await context.cookies(), [], 'no cookie: another port of this host would receive it')
      await page.locator('#timeline li', { hasText: 'wait' }).waitFor()
      assert.is(await page.locator('#run-id').textContent(), 'live')
      assert.ok((await page.locator('#timeline li', { hasText: 'prepare' }).getAttribute('class'))?.includes('done'))
      const before = await page.screenshot({ path: s.path('running.png'), fullPage: true })
      assert.ok(before.length > 1000, 'a screenshot of the running run')
      assert.ok((await page.locator('#events li').count()) >= 3, 'recent events are listed')
      await page.locator('#tasks div[data-status="ready"] p', { hasText: 'Check pump → pump-1' }).waitFor()
      assert.is(await page.locator('#tasks div[data-status]').count(), 8, 'a column per AOF status folder')
      const width = (await page.evaluate('document.documentElement.scrollWidth')) as number
      assert.ok(width <= 390, `no sideways scrolling on a phone (${width} px)`)

      g.open() // the run goes on; the page must follow without a reload
      await page.locator('#state', { hasText: '"done": "yes"' }).waitFor()
      await page.locator('#timeline li.done', { hasText: 'finish' }).waitFor()
      await page.locator('#runs li[data-run="live"] .status.completed').waitFor()
      const after = await page.screenshot({ path: s.path('completed.png'), fullPage: true })
      assert.not.equal(after, before)
      assert.equal(external, [], 'the page loads nothing from elsewhere')
    } finally {
      await context.close()
      await d.stop()
      await g.close()
      s.cleanup()
    }
  },
)

const HELLO = `name: hello
nodes:
  - name: a
    run: "return { a: 1 }"
`

skipIf(
  t,
  CHROMIUM ? false : 'no chromium at /usr/bin/chromium (bash .ci/install-browser.sh installs it)',
  '28 page F: a page on another port of the host, in the browser that holds the token, starts nothing and reads nothing',
  async () => {
    const s = scratch()
    mkdirSync(s.path('agents'))
    writeFileSync(s.path('agents/hello.yaml'), HELLO)
    const token = 'csrf-test-token-0123456789'
    writeFileSync(s.path('token'), token)
    const d = await startServe(['--data-dir', s.path('data'), '--agents', s.path('agents'), '--token-file', s.path('token')])
    const open = await startServe(['--data-dir', s.path('data-open'), '--agents', s.path('agents')]) // loopback, no token
    // The attacker: another server on this host, another port (the probe's localhost:18900).
    const { createServer } = await import('node:http')
    const evil = createServer((_req, res) => res.end('<!doctype html><title>evil</title>'))
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', () => r()))
    const evilUrl = `http://127.0.0.1:${(evil.address() as import('node:net').AddressInfo).port}`
    const context = await (await browser()).newContext()
    try {
      const board = await context.newPage()
      await board.goto(`${d.url}/?token=${token}`)
      await board.locator('#health', { hasText: 'running' }).waitFor() // the page is in, with its token
      const page = await context.newPage()
      await page.goto(`${evilUrl}/`)
      const attempts = (await page.evaluate(`(async (targets) => {
        const out = []
        for (const base of targets) {
          const body = JSON.stringify({ agent: 'hello' })
          const tries = [
            () => fetch(base + '/api/runs', { method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'content-type': 'text/plain' }, body }),
            () => fetch(base + '/api/runs', { method: 'POST', credentials: 'include', headers: { 'content-type': 'application/json' }, body }),
            () => fetch(base + '/api/runs', { credentials: 'include' }).then((r) => r.text()),
          ]
          for (const go of tries) out.push(await go().then((r) => (typeof r === 'string' ? 'read: ' + r : 'sent ' + r.type + ' ' + r.status), (e) => 'blocked: ' + e.name))
        }
        return out
      })(${JSON.stringify([d.url, open.url])})`)) as string[]
      assert.equal(attempts, [
        'sent opaque 0', // the text/plain POST left the browser …
        'blocked: TypeError', // the JSON one stopped at its preflight
        'blocked: TypeError', // no CORS: nothing read
        'sent opaque 0',
        'blocked: TypeError',
        'blocked: TypeError',
      ])
      // … and tea refused it: no run on either daemon, and no token in the browser's cookies.
      const auth = { authorization: `Bearer ${token}` }
      assert.equal((await d.json('GET', '/api/runs', undefined, auth)).body, [])
      assert.equal((await open.json('GET', '/api/runs')).body, [])
      assert.equal(await context.cookies(), [])
    } finally {
      await context.close()
      await d.stop()
      await open.stop()
      evil.closeAllConnections()
      await new Promise((r) => evil.close(r))
      s.cleanup()
    }
  },
)

const PLANNED = `name: planned
settings: { http: { allow: ["127.0.0.1"] } } # the test's gate is on loopback, which http.* refuses by default
initial_state:
  plan:
    goal: breakfast
    subtasks:
      - { id: toast, description: make toast }
      - { id: coffee, description: brew coffee, dependencies: [toast] }
      - { id: eggs, description: cook eggs, dependencies: [toast] }
nodes:
  - name: setup
    uses: http.get
    with: { url: "{{ state.gate }}", timeout: 120 }
    output: { plan: "{{ state.plan }}" }
  - name: cook
    uses: plan.execute
    with:
      plan: "{{ state.plan }}"
      max_concurrent: 2
      subtask_executor:
        run: "return subtask.id"
`

skipIf(
  t,
  CHROMIUM ? false : 'no chromium at /usr/bin/chromium (bash .ci/install-browser.sh installs it)',
  '16 page: the plan DAG, a column per dependency depth, coloured by subtask status as the plan executes',
  async () => {
    const s = scratch()
    mkdirSync(s.path('agents'))
    writeFileSync(s.path('agents/planned.yaml'), PLANNED)
    const g = await startGate()
    const d = await startServe(['--data-dir', s.path('data'), '--agents', s.path('agents')])
    const context = await (await browser()).newContext({ viewport: { width: 390, height: 844 } })
    try {
      const page = await context.newPage()
      assert.is((await d.json('POST', '/api/runs', { agent: 'planned', run_id: 'plan1', input: { gate: g.url } })).status, 201)
      await g.waiting(1)
      await page.goto(d.url)
      await page.locator('#run-id', { hasText: 'plan1' }).waitFor()
      g.open()
      for (const id of ['toast', 'coffee', 'eggs']) await page.locator(`#dag span.completed[data-subtask="${id}"]`).waitFor()
      const columns = await page
        .locator('#dag .level')
        .evaluateAll((cols) => cols.map((c) => [...c.querySelectorAll('span')].map((x) => x.getAttribute('data-subtask'))))
      assert.equal(columns, [['toast'], ['coffee', 'eggs']])
      assert.match((await page.locator('#dag span[data-subtask="coffee"] small.deps').textContent()) ?? '', /← toast/)
      // Each subtask's status and how long it took, rounded (issue 31 item 3).
      assert.match((await page.locator('#dag span[data-subtask="eggs"] small.meta').textContent()) ?? '', /^completed · \d+ ms$/)
      assert.ok((await page.screenshot({ path: s.path('plan.png') })).length > 1000)
    } finally {
      await context.close()
      await d.stop()
      await g.close()
      s.cleanup()
    }
  },
)

t.run()
