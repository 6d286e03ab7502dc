/**
 * web.scrape against a real HTTP server on 127.0.0.1 (pages, redirects, errors, a body that never ends), and the
 * HTML reader on its own, including hostile markup with a time bound.
 */

import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { suite, test } from 'uvu'
import * as assert from 'uvu/assert'
import { validateParams } from '../../../src/actions/registry.ts'
import { decodeEntities, readHtml } from '../../../src/actions/web/html-text.ts'
import { webScrape } from '../../../src/actions/web/scrape.ts'
import { rejects } from '../../support/expect.ts'
import { testContext, type TestContext } from '../context.ts'
import { cpuMsSync } from '../../support/cpu.ts'

const PAGE = `<!doctype html>
<html><head><title>Lindenhof &amp; Co &#8211; Hours</title>
<style>p { color: red }</style><script>var secret = "do not show";</script></head>
<body>
<nav><a href="/home">Home</a> Menu</nav>
<!-- a comment <p>not text</p> -->
<h1>Opening&nbsp;hours</h1>
<p>Monday to Friday: 9:00 &ndash; 18:00.<br>Saturday: 10:00 &#x2013; 14:00.</p>
<ul><li>Caf&eacute; on the <a href="floor2.html">second floor</a></li><li>Wi-Fi</li></ul>
<a href="javascript:void(0)">js</a> <a href="#top">top</a> <a href="https://example.org/x?a=1&amp;b=2">Elsewhere</a>
<footer>© 2026 <a href="/imprint">Imprint</a></footer>
</body></html>`

interface Ctx {
  server: Server
  base: string
  ctx: TestContext
}

const t = suite<Ctx>('web.scrape')
t.before.each(async (c) => {
  c.server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname
    if (path === '/page') return void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE)
    if (path === '/moved') return void res.writeHead(302, { location: '/docs/page' }).end()
    if (path === '/docs/page') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<a href="next.html">next</a>')
    if (path === '/plain') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('  just text  ')
    if (path === '/image') return void res.writeHead(200, { 'content-type': 'image/png' }).end('PNG')
    if (path === '/slow') return void setTimeout(() => res.writeHead(200).end('late'), 2000)
    if (path === '/endless') {
      res.writeHead(200, { 'content-type': 'text/html' })
      const more = () => res.write('<p>more</p>'.repeat(1000), () => !res.destroyed && setImmediate(more))
      return void more()
    }
    res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not found</h1>')
  })
  await new Promise<void>((r) => c.server.listen(0, '127.0.0.1', r))
  c.base = `http://127.0.0.1:${(c.server.address() as AddressInfo).port}`
  // The test server is on loopback, which the destination policy refuses unless the agent allows it.
  c.ctx = testContext({ settings: { http_allow: ['127.0.0.1'] } })
})
t.after.each(async (c) => {
  c.server.closeAllConnections()
  await new Promise((r) => c.server.close(r))
  c.ctx.cleanup()
})

const scrape = (ctx: TestContext, params: Record<string, unknown>) => webScrape.run(validateParams(webScrape, params, { node: 'n' }), ctx)

t('a page gives its title, readable text without scripts, styles, comments or navigation, and its links', async ({ base, ctx }) => {
  const r = (await scrape(ctx, { url: `${base}/page` })) as Record<string, any>
  assert.is(r.status, 200)
  assert.is(r.url, `${base}/page`)
  assert.is(r.title, 'Lindenhof & Co – Hours')
  assert.is(
    r.text,
    'Opening hours\n\nMonday to Friday: 9:00 – 18:00.\nSaturday: 10:00 – 14:00.\n\n- Café on the second floor\n- Wi-Fi\n\njs top Elsewhere',
  )
  for (const hidden of ['secret', 'color: red', 'not text', 'Menu', 'Imprint']) assert.not.ok(r.text.includes(hidden), hidden)
  assert.equal(r.links, [
    { href: `${base}/floor2.html`, text: 'second floor' },
    { href: 'https://example.org/x?a=1&b=2', text: 'Elsewhere' },
  ])
  assert.is(r.truncated, false)
})

t('a redirect gives the final URL, and relative links resolve against it', async ({ base, ctx }) => {
  const r = (await scrape(ctx, { url: `${base}/moved` })) as Record<string, any>
  assert.is(r.url, `${base}/docs/page`)
  assert.equal(r.links, [{ href: `${base}/docs/next.html`, text: 'next' }])
})

t('max_text_chars cuts the text and says so; max_links bounds the links', async ({ base, ctx }) => {
  const r = (await scrape(ctx, { url: `${base}/page`, max_text_chars: 10, max_links: 1 })) as Record<string, any>
  assert.is(r.text, 'Opening ho')
  assert.is(r.truncated, true)
  assert.is(r.links.length, 1)
})

t('plain text comes back as it is; other content types are refused, naming the type', async ({ base, ctx }) => {
  assert.is(((await scrape(ctx, { url: `${base}/plain` })) as Record<string, any>).text, 'just text')
  await rejects(() => scrape(ctx, { url: `${base}/image` }), 'HTTP_ERROR', 'image/png')
})

t('a 404 is an error, not content', async ({ base, ctx }) => {
  await rejects(() => scrape(ctx, { url: `${base}/missing` }), 'HTTP_ERROR', '404')
})

t('a slow server meets the timeout', async ({ base, ctx }) => {
  await rejects(() => scrape(ctx, { url: `${base}/slow`, timeout: 0.2 }), 'HTTP_TIMEOUT')
})

t('a body that never ends stops at max_bytes', async ({ base, ctx }) => {
  const started = Date.now()
  await rejects(() => scrape(ctx, { url: `${base}/endless`, max_bytes: 100_000 }), 'HTTP_ERROR', 'max_bytes')
  assert.ok(Date.now() - started < 5000)
})

t('H: loopback is refused unless settings.http.allow lists it, at the first URL and at a redirect hop', async ({ base }) => {
  const closed = testContext()
  try {
    await rejects(
      () => scrape(closed, { url: `${base}/page` }),
      'HTTP_DESTINATION_DENIED',
      'web.scrape',
      '127.0.0.1',
      'settings.http.allow',
    )
  } finally {
    closed.cleanup()
  }
  const port = new URL(base).port
  const hop = testContext({ settings: { http_allow: ['127.0.0.1'] } })
  try {
    // `/moved` answers a relative Location: same host, allowed. The same page named `localhost` is another host.
    const r = (await scrape(hop, { url: `${base}/moved` })) as Record<string, any>
    assert.is(r.url, `${base}/docs/page`)
    await rejects(() => scrape(hop, { url: `http://localhost:${port}/page` }), 'HTTP_DESTINATION_DENIED', 'localhost (resolved to')
  } finally {
    hop.cleanup()
  }
})

t('only http and https', async ({ ctx }) => {
  await rejects(() => scrape(ctx, { url: 'file:///etc/passwd' }), 'HTTP_ERROR', "scheme 'file'")
})

test('entities: named, decimal, hex; unknown ones and bad code points are left or replaced, never thrown', () => {
  assert.is(decodeEntities('&lt;a&gt; &#65;&#x42; &bogus; &#0; &#xD800; &amp'), '<a> AB &bogus; \uFFFD \uFFFD &')
})

test('hostile markup is read in linear time and never throws', () => {
  const cases = [
    '<'.repeat(5_000_000),
    `<!--${'x'.repeat(5_000_000)}`,
    `<script>${'x'.repeat(5_000_000)}`,
    `<a href="${'x'.repeat(5_000_000)}`,
    '<a <a <a '.repeat(500_000),
    '<p>'.repeat(1_000_000),
    '<nav>'.repeat(1_000_000),
    `<title>${'&amp;'.repeat(1_000_000)}`,
  ]
  for (const html of cases) {
    // CPU time: what the reading cost, whatever else the machine is doing.
    const { value: page, ms } = cpuMsSync(() => readHtml(html, 'http://h/', 100))
    assert.ok(ms < 3000, `${html.slice(0, 20)}… took ${ms.toFixed(0)} ms`)
    assert.type(page.text, 'string')
  }
  assert.equal(readHtml('a < b and c > d', 'http://h/', 10).text, 'a < b and c > d')
})

t.run()
test.run()
