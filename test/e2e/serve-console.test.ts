/**
 * The console of `tea serve` in a real browser (issue 31 items 1–4 and 8): Debian's Chromium through playwright-core
 * pointed at the system binary, as serve-page.test.ts. A person starts a run from the form built from the agent's
 * state_schema, answers its interrupt (approve, with an edited key) and sees it complete; cancels a running run;
 * and reads a failed run on a phone: its error code, message and hint as text, its failed node red in the graph,
 * its `run:` log lines, no sideways scrolling at 390 px, the newest run first and selected, a long id shortened.
 * Agents are `run:` nodes and a gate on loopback (startGate): no model.
 *
 * Screenshots go to a scratch folder; with TEA_SCREENSHOTS=1 to docs/img/serve-desktop.png and serve-phone.png,
 * the pictures docs/serve.md shows.
 */

import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { skipIf } from '../support/skip.ts'
import { ROOT, scratch } from './cli.ts'
import { startGate, startServe } from './serve-harness.ts'
import { CHROMIUM, NO_BROWSER, sharedBrowser } from '../support/browser.ts'

const t = suite('the console')
const browser = sharedBrowser(t.after)

const REVIEW = `name: review
description: drafts a note, waits for a person, then sends or drops it
state_schema: { topic: str, copies: int, urgent: bool, tags: list }
initial_state: { topic: garden, copies: 1 }
nodes:
  - name: draft
    description: Check the note before it is sent
    run: |
      console.log('drafting about ' + state.topic)
      return { note: 'Note about ' + state.topic + ' x' + state.copies + (state.urgent ? ' (urgent)' : '') }
    interrupt: after
  - name: decide
    run: "return {}"
    goto:
      - { if: "state.approved", to: send }
      - { to: drop }
  - name: send
    run: "return { sent: state.note, tags: state.tags }"
    goto: __end__
  - name: drop
    run: "return { dropped: true }"
`

const BROKEN = `name: broken
nodes:
  - name: fetch
    run: |
      console.log('reading the sensor <b>now</b>')
      return { reading: 21 }
  - name: boom
    run: "throw new Error('the sensor said <img src=x onerror=alert(1)>')"
  - name: never
    run: "return { never: true }"
`

const SLOW = `name: slow
settings: { http: { allow: ["127.0.0.1"] } } # the test's gate is on loopback, which http.* refuses by default
nodes:
  - name: first
    run: "return { first: true }"
  - name: wait
    uses: http.get
    with: { url: "{{ state.gate }}", timeout: 120 }
  - name: last
    run: "return { last: true }"
`

const CONFIRM = `name: confirm
nodes:
  - name: measure
    run: "return { litres: 12 }"
  - name: water
    description: Open the valve for the measured litres?
    run: "return { watered: state.approved ? state.litres : 0 }"
    interrupt: before
`

/** A plan in the state that is not what plan.* writes: the page must draw what it can and nothing else. */
const ODD_PLAN = `name: oddplan
nodes:
  - name: make
    run: |
      return { plan: { subtasks: [null, 7, 'text', { id: '__proto__', status: 'completed' }, { id: 'b', dependencies: 'nope', status: 'x" onmouseover="alert(1)' }, { id: 'c', dependencies: ['b', 5] }] } }
`

function agents(s: ReturnType<typeof scratch>): string {
  mkdirSync(s.path('agents'))
  writeFileSync(s.path('agents/oddplan.yaml'), ODD_PLAN)
  writeFileSync(s.path('agents/confirm.yaml'), CONFIRM)
  writeFileSync(s.path('agents/review.yaml'), REVIEW)
  writeFileSync(s.path('agents/broken.yaml'), BROKEN)
  writeFileSync(s.path('agents/slow.yaml'), SLOW)
  return s.path('agents')
}

/** Where a screenshot goes: docs/img when asked for (TEA_SCREENSHOTS=1), the scratch folder otherwise. */
function shot(s: ReturnType<typeof scratch>, name: string): string {
  return process.env.TEA_SCREENSHOTS === '1' ? join(ROOT, 'docs/img', name) : s.path(name)
}

skipIf(
  t,
  NO_BROWSER,
  '31 items 1, 2, 3: start a run from the form built from state_schema, approve its interrupt with an edited key, see it complete; the graph coloured by node state',
  async () => {
    const s = scratch()
    const token = 'console-test-token-0123456789'
    writeFileSync(s.path('token'), token)
    const d = await startServe(['--data-dir', s.path('data'), '--agents', agents(s), '--token-file', s.path('token')])
    const context = await (await browser()).newContext({ viewport: { width: 1280, height: 900 } })
    try {
      const page = await context.newPage()
      const problems: string[] = []
      page.on('pageerror', (e) => problems.push(e.message))
      await page.goto(`${d.url}/#token=${token}`)
      await page.getByRole('button', { name: 'New run' }).click()
      await page.locator('#agent option[value="review.yaml"]').waitFor({ state: 'attached' })
      await page.locator('#agent').selectOption('review.yaml')
      // The form: a typed field per state_schema key, the initial state as placeholders.
      await page.locator('#fields input[data-key="topic"]').waitFor()
      assert.is(await page.locator('#fields input[data-key="topic"]').getAttribute('placeholder'), 'garden')
      assert.is(await page.locator('#fields input[data-key="copies"]').getAttribute('type'), 'number')
      assert.is(await page.locator('#fields select[data-key="urgent"]').count(), 1, 'a boolean is a choice')
      assert.is(await page.locator('#fields textarea[data-key="tags"]').count(), 1, 'a list is JSON')
      // A bad number is told on the page, and nothing starts.
      await page.locator('#fields input[data-key="copies"]').fill('2.5')
      await page.getByRole('button', { name: 'Start' }).click()
      await page.locator('#start-msg', { hasText: 'copies must be a whole number' }).waitFor()
      assert.equal((await d.json('GET', '/api/runs', undefined, { authorization: `Bearer ${token}` })).body, [])
      await page.locator('#fields input[data-key="topic"]').fill('roses <script>')
      await page.locator('#fields input[data-key="copies"]').fill('3')
      await page.locator('#fields select[data-key="urgent"]').selectOption('true')
      await page.locator('#fields textarea[data-key="tags"]').fill('["red", "white"]')
      await page.getByRole('button', { name: 'Start' }).click()

      // It runs, pauses after 'draft', and the page says what it waits for.
      await page.locator('#paused-box:not([hidden])').waitFor()
      assert.is(await page.locator('#paused-message').textContent(), 'Check the note before it is sent')
      await page.locator('#runs li.sel .status.interrupted').waitFor() // the new run, selected
      assert.is(await page.locator('#runs li').count(), 1)
      const note = page.locator('#paused-fields [data-key="note"]')
      assert.is(await note.inputValue(), 'Note about roses <script> x3 (urgent)', 'the key the paused node wrote, to edit')
      await page.locator('#graph g[data-node="draft"][data-state="done"]').waitFor()
      assert.is(await page.locator('#graph g[data-node="send"]').getAttribute('data-state'), 'pending')
      await page.locator('#timeline li.log', { hasText: 'draft: drafting about roses <script>' }).waitFor()

      // Approve, with the note edited: the run resumes and completes, live.
      await note.fill('Note about roses, checked')
      await page.getByRole('button', { name: 'Approve' }).click()
      await page.locator('#run-status .status.completed').waitFor()
      await page.locator('#state', { hasText: '"sent": "Note about roses, checked"' }).waitFor()
      assert.match((await page.locator('#state').textContent()) ?? '', '"approved": true')
      await page.locator('#graph g[data-node="send"][data-state="done"]').waitFor()
      assert.is(
        await page.locator('#graph g[data-node="drop"]').getAttribute('data-state'),
        'pending',
        'the branch not taken stays uncoloured',
      )
      assert.is(
        await page.locator('#graph g[data-node="draft"]').getAttribute('data-state'),
        'done',
        'what ran before the pause stays done',
      )
      assert.match(
        (await page.locator('#graph g[data-node="send"] text.st').textContent()) ?? '',
        /^done/,
        'the state in words, not colour alone',
      )
      const run = (await d.json('GET', '/api/runs', undefined, { authorization: `Bearer ${token}` })).body[0]
      assert.equal([run.agent, run.status], ['review', 'completed'])
      const full = await d.json('GET', `/api/runs/${run.run_id}`, undefined, { authorization: `Bearer ${token}` })
      assert.equal(
        [full.body.state.topic, full.body.state.copies, full.body.state.urgent, full.body.state.tags],
        ['roses <script>', 3, true, ['red', 'white']],
      )
      assert.equal(await page.locator('#runs script, #state *').count(), 0, 'the state is text, never markup')
      await page.screenshot({ path: shot(s, 'serve-desktop.png') })
      assert.equal(problems, [])
    } finally {
      await context.close()
      assert.is(await d.stop(), 0, d.stderr())
      s.cleanup()
    }
  },
)

skipIf(t, NO_BROWSER, '31 item 2: reject resumes the run with approved: false, and it takes the other branch', async () => {
  const s = scratch()
  const d = await startServe(['--data-dir', s.path('data'), '--agents', agents(s)])
  const context = await (await browser()).newContext({ viewport: { width: 390, height: 844 } })
  try {
    assert.is((await d.json('POST', '/api/runs', { agent: 'review', run_id: 'rj' })).status, 201)
    const page = await context.newPage()
    await page.goto(d.url)
    await page.locator('#paused-box:not([hidden])').waitFor()
    await page.getByRole('button', { name: 'Reject' }).click()
    await page.locator('#run-status .status.completed').waitFor()
    await page.locator('#graph g[data-node="drop"][data-state="done"]').waitFor()
    const state = (await d.json('GET', '/api/runs/rj')).body.state
    assert.equal([state.approved, state.dropped, state.sent], [false, true, undefined])
  } finally {
    await context.close()
    assert.is(await d.stop(), 0, d.stderr())
    s.cleanup()
  }
})

skipIf(
  t,
  NO_BROWSER,
  '31 items 2, 3: paused before a node: it is waiting (blue, and says so), the keys it reads are asked, Approve runs it',
  async () => {
    const s = scratch()
    const d = await startServe(['--data-dir', s.path('data'), '--agents', agents(s)])
    const context = await (await browser()).newContext({ viewport: { width: 390, height: 844 } })
    try {
      assert.is((await d.json('POST', '/api/runs', { agent: 'confirm', run_id: 'c1' })).status, 201)
      const page = await context.newPage()
      await page.goto(d.url)
      await page.locator('#paused-box:not([hidden])').waitFor()
      assert.is(await page.locator('#paused-message').textContent(), 'Open the valve for the measured litres?')
      assert.is(await page.locator('#paused-where').textContent(), 'paused before node water')
      assert.is(await page.locator('#paused-fields textarea[data-key="litres"]').inputValue(), '12', 'a number is edited as JSON')
      await page.locator('#graph g[data-node="water"][data-state="waiting"]').waitFor()
      assert.match((await page.locator('#graph g[data-node="water"] text.st').textContent()) ?? '', /^waiting/)
      const fill = await page
        .locator('#graph g[data-node="water"] rect')
        .evaluate((r) => (globalThis as any).getComputedStyle(r).fill as string)
      assert.is(fill, 'rgb(207, 224, 255)', 'blue')
      await page.locator('#paused-fields textarea[data-key="litres"]').fill('8')
      await page.getByRole('button', { name: 'Approve' }).click()
      await page.locator('#run-status .status.completed').waitFor()
      assert.is((await d.json('GET', '/api/runs/c1')).body.state.watered, 8)
      await page.locator('#graph g[data-node="water"][data-state="done"]').waitFor()
    } finally {
      await context.close()
      assert.is(await d.stop(), 0, d.stderr())
      s.cleanup()
    }
  },
)

skipIf(
  t,
  NO_BROWSER,
  '31 item 3: a plan in the state that is not a plan draws what it can: no error, no markup, __proto__ is a name',
  async () => {
    const s = scratch()
    const d = await startServe(['--data-dir', s.path('data'), '--agents', agents(s)])
    const context = await (await browser()).newContext({ viewport: { width: 390, height: 844 } })
    try {
      assert.is((await d.json('POST', '/api/runs', { agent: 'oddplan', run_id: 'odd' })).status, 201)
      await d.waitLog(/run odd completed/)
      const page = await context.newPage()
      const problems: string[] = []
      page.on('pageerror', (e) => problems.push(e.message))
      await page.goto(d.url)
      await page.locator('#run-status .status.completed').waitFor()
      await page.locator('#dag span[data-subtask="c"]').waitFor()
      assert.equal(await page.locator('#dag span').evaluateAll((xs) => xs.map((x) => [x.getAttribute('data-subtask'), x.className])), [
        ['__proto__', 'subtask completed'],
        ['b', 'subtask xonmouseoveralert'],
        ['c', 'subtask pending'],
      ])
      assert.match((await page.locator('#dag span[data-subtask="c"] small.deps').textContent()) ?? '', '← b')
      assert.equal(problems, [])
      assert.is(await page.locator('#msg.bad').count(), 0)
    } finally {
      await context.close()
      assert.is(await d.stop(), 0, d.stderr())
      s.cleanup()
    }
  },
)

skipIf(t, NO_BROWSER, '31 item 1: Cancel stops a running run; Resume takes it on to the end', async () => {
  const s = scratch()
  const g = await startGate()
  const d = await startServe(['--data-dir', s.path('data'), '--agents', agents(s)])
  const context = await (await browser()).newContext({ viewport: { width: 390, height: 844 } })
  try {
    assert.is((await d.json('POST', '/api/runs', { agent: 'slow', run_id: 'held', input: { gate: g.url } })).status, 201)
    await g.waiting(1)
    const page = await context.newPage()
    await page.goto(d.url)
    await page.locator('#graph g[data-node="wait"][data-state="running"]').waitFor()
    await page.getByRole('button', { name: 'Cancel' }).click()
    await page.locator('#run-status .status.cancelled').waitFor()
    assert.is((await d.json('GET', '/api/runs/held')).body.status, 'cancelled')
    g.open()
    await page.getByRole('button', { name: 'Resume' }).click()
    await page.locator('#run-status .status.completed').waitFor()
    assert.is((await d.json('GET', '/api/runs/held')).body.state.last, true)
  } finally {
    await context.close()
    assert.is(await d.stop(), 0, d.stderr())
    await g.close()
    s.cleanup()
  }
})

skipIf(
  t,
  NO_BROWSER,
  '31 items 3, 4: a failed run on a phone (390×844): code, message and hint as text, its node red, log lines, newest first, short ids, no sideways scrolling',
  async () => {
    const s = scratch()
    const d = await startServe(['--data-dir', s.path('data'), '--agents', agents(s)])
    const context = await (await browser()).newContext({ viewport: { width: 390, height: 844 } })
    try {
      const older = 'earlier'
      assert.is((await d.json('POST', '/api/runs', { agent: 'review', run_id: older })).status, 201)
      await d.waitLog(new RegExp(`run ${older} interrupted`))
      const long = 'broken-2026-12-02T08-15-00-a-very-long-run-identifier-0123456789'
      const page = await context.newPage()
      const dialogs: string[] = []
      page.on('dialog', (x) => {
        dialogs.push(x.message())
        void x.dismiss()
      })
      assert.is((await d.json('POST', '/api/runs', { agent: 'broken', run_id: long })).status, 201)
      await d.waitLog(new RegExp(`run ${long} failed`))
      await page.goto(d.url)
      // Newest first, and selected.
      await page.locator(`#runs li.sel[data-run="${long}"]`).waitFor()
      assert.equal(await page.locator('#runs li').evaluateAll((lis) => lis.map((li) => li.getAttribute('data-run'))), [long, older])
      const id = page.locator(`#runs li[data-run="${long}"] .id`)
      assert.is(await id.getAttribute('title'), long, 'the whole id on hover')
      assert.ok(((await id.textContent()) ?? '').length < 20, 'a long id is shortened in the list')
      assert.match((await id.textContent()) ?? '', '…')
      assert.ok(await page.locator(`#runs li[data-run="${long}"] .status.failed`).isVisible(), 'its status is visible')
      // The error, as text.
      await page.locator('#error-box:not([hidden])').waitFor()
      assert.is(await page.locator('#err-code').textContent(), 'CODE_ERROR')
      assert.is(await page.locator('#err-node').textContent(), 'in node boom')
      assert.match((await page.locator('#err-message').textContent()) ?? '', 'the sensor said <img src=x onerror=alert(1)>')
      assert.is(
        await page.locator('#err-hint').textContent(),
        'what it means: run: code does not compile, threw, or returned something other than an object',
        'no hint of its own: what the code means',
      )
      assert.is(await page.locator('#run img, #runs img').count(), 0, 'the message stays text')
      // The failed node red (and named so), the one before it done, the one after not run.
      await page.locator('#graph g[data-node="boom"][data-state="failed"]').waitFor()
      const fill = await page
        .locator('#graph g[data-node="boom"] rect')
        .evaluate((r) => (globalThis as any).getComputedStyle(r).fill as string)
      assert.is(fill, 'rgb(243, 165, 165)', 'red')
      assert.match((await page.locator('#graph g[data-node="boom"] text.st').textContent()) ?? '', /^failed/)
      assert.is(await page.locator('#graph g[data-node="fetch"]').getAttribute('data-state'), 'done')
      assert.is(await page.locator('#graph g[data-node="never"]').getAttribute('data-state'), 'pending')
      // run: log lines show their message.
      await page.locator('#timeline li.log', { hasText: 'fetch: reading the sensor <b>now</b>' }).waitFor()
      // No sideways scrolling, and no element wider than the screen.
      const widths = (await page.evaluate(`(() => {
        const over = [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > 390.5)
        return { scroll: document.scrollingElement.scrollWidth, over: over.map((e) => e.tagName + '#' + e.id + '.' + e.getAttribute('class')) }
      })()`)) as { scroll: number; over: string[] }
      assert.ok(widths.scroll <= 390, `scrollWidth ${widths.scroll}`)
      assert.equal(widths.over, [], 'no element reaches past 390 px')
      await page.locator('#run').evaluate((e) => e.scrollIntoView()) // the run, its error and its graph in the picture
      assert.ok((await page.screenshot({ path: shot(s, 'serve-phone.png'), fullPage: false })).length > 1000)
      assert.equal(dialogs, [], 'nothing in the error ran')
      // A notification's link (#run=…) selects its run, not the newest.
      const linked = await context.newPage()
      await linked.goto(`${d.url}/#run=${older}`)
      await linked.locator('#paused-box:not([hidden])').waitFor()
      assert.is(await linked.locator('#run-id').textContent(), older)
      assert.is(linked.url(), `${d.url}/`, 'the address is clean again')
    } finally {
      await context.close()
      assert.is(await d.stop(), 0, d.stderr())
      s.cleanup()
    }
  },
)

t.run()
