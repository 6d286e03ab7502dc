// Serves an example's `site/` folder on http://127.0.0.1:47831/ while it runs (`npm run demo` and the examples
// test), so an agent that fetches a web page needs no network. The port is fixed because the page's address is
// part of the recorded model exchanges (the cassette).
import { readFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import { extname, join, normalize } from 'node:path'

export const SITE_PORT = 47831

const TYPES = { '.html': 'text/html; charset=utf-8', '.txt': 'text/plain; charset=utf-8', '.json': 'application/json' }

/**
 * Starts the server for `dir`; resolves to a function that stops it. While the port is taken (another demo, or a
 * test running the same example at the same time) it waits for it, up to `waitMs`, then rejects.
 */
export async function serveSite(dir, waitMs = 60_000) {
  const deadline = Date.now() + waitMs
  for (;;) {
    try {
      return await listen(dir)
    } catch (e) {
      if (e.code !== 'EADDRINUSE' || Date.now() > deadline)
        throw new Error(`cannot serve the example's page on 127.0.0.1:${SITE_PORT}: ${e.message} (is another demo running?)`)
      await new Promise((r) => setTimeout(r, 100))
    }
  }
}

function listen(dir) {
  const server = createServer(async (req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)).replace(/^(\.\.[/\\])+/, '')
    const file = join(dir, path.endsWith('/') ? `${path}index.html` : path)
    try {
      const body = await readFile(file)
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(body)
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found')
    }
  })
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(SITE_PORT, '127.0.0.1', () => resolve(() => new Promise((done) => server.close(() => done()))))
  })
}
