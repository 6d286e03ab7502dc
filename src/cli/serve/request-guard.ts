/**
 * What a browser page elsewhere can forge, refused before any route runs (docs/serve.md, "Security").
 *
 * - **Host** must name this listener: an IP address the connection really arrived at, `localhost` on a loopback
 *   connection, the `--listen` host, or a name given with `--allow-host`, with the port tea listens on. A page whose
 *   own name an attacker re-pointed at 127.0.0.1 (DNS rebinding) sends its own name: refused, 421.
 * - **Origin**, when a request carries one, must be this server's own (scheme aside: a TLS proxy in front turns
 *   `https://HOST` into a plain request with the same Host). **Sec-Fetch-Site** `cross-site` or `same-site` —
 *   `same-site` is also another port of this host — is refused except for a person following a link to a page.
 * - **State-changing requests** (any method but GET and HEAD) must be `Content-Type: application/json`: the types a
 *   page may send to another origin without asking first (`text/plain`, forms) are refused, 415, so a forged POST
 *   never reaches a route, and a JSON one needs a CORS preflight tea never grants.
 *
 * The token is never a cookie (http-kit.ts `requestToken`), so nothing a browser attaches by itself authorises a
 * request: these checks hold for the default no-token loopback listener, where they are the only line.
 */

import type { IncomingMessage } from 'node:http'
import { isIP } from 'node:net'
import { TeaError } from '../../core/errors.ts'
import { isLoopback } from './listen.ts'

export interface GuardOptions {
  /** The port the server is bound to (the one in `--listen`, or the one the kernel chose for port 0). */
  port: number
  /** The `--listen` host as given (`127.0.0.1`, `0.0.0.0`, `board.lan`, `::1`). */
  listenHost: string
  /** `--allow-host` names: `NAME` (any port, e.g. behind a proxy) or `NAME:PORT`. */
  allowHosts: readonly string[]
}

const SAFE_METHODS = new Set(['GET', 'HEAD'])

/** Refuses (USAGE, at start) `--allow-host` entries that are not a host name or address with an optional port. */
export function checkAllowHosts(entries: readonly string[]): void {
  const bad = entries.filter((e) => !parseHost(e))
  if (bad.length)
    throw new TeaError(
      'USAGE',
      `--allow-host takes NAME or NAME:PORT (a host name or address, no scheme or path), got ${bad.map((b) => JSON.stringify(b)).join(', ')}`,
      {
        hint: 'e.g. --allow-host board.lan or --allow-host board.lan:8765',
      },
    )
}

/** A check of each request against forgery from other pages; throws the refusal. */
export function requestGuard(opts: GuardOptions): (req: IncomingMessage) => void {
  const anyPort = new Set<string>()
  const withPort = new Set<string>()
  checkAllowHosts(opts.allowHosts)
  for (const entry of opts.allowHosts) {
    const h = parseHost(entry)!
    if (h.port === undefined) anyPort.add(h.name)
    else withPort.add(`${h.name}:${h.port}`)
  }
  const listenName = normalIp(opts.listenHost.toLowerCase())
  return (req) => {
    checkHost(req, opts.port, listenName, anyPort, withPort)
    checkOrigin(req)
  }
}

/** Refuses a state-changing request whose body is not declared JSON (UNSUPPORTED_MEDIA_TYPE, 415). */
export function requireJsonBody(req: IncomingMessage): void {
  if (SAFE_METHODS.has(req.method ?? 'GET')) return
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase()
  if (type === 'application/json') return
  throw new TeaError(
    'UNSUPPORTED_MEDIA_TYPE',
    `a ${req.method} to tea serve must be Content-Type: application/json, got ${type ? JSON.stringify(type) : 'none'}`,
    { hint: "curl --json '{…}' URL, or curl -H 'content-type: application/json' -d '{…}' URL" },
  )
}

// --- internal ---

function checkHost(req: IncomingMessage, port: number, listenName: string, anyPort: Set<string>, withPort: Set<string>): void {
  const header = req.headers.host
  // HTTP/1.0 without Host: no browser sends that, so no page forged it (Node refuses HTTP/1.1 without one).
  if (header === undefined) return
  const h = parseHost(header)
  if (h) {
    const hostPort = h.port ?? 80
    if (anyPort.has(h.name) || withPort.has(`${h.name}:${hostPort}`)) return
    const local = normalIp(req.socket.localAddress ?? '')
    const named = h.name === local || h.name === listenName || (h.name === 'localhost' && isLoopback(local))
    if (named && hostPort === port) return
  }
  throw new TeaError('HOST_NOT_ALLOWED', `the Host header ${JSON.stringify(header.slice(0, 200))} does not name this tea serve`, {
    hint: 'a name this board is reached by must be allowed: tea serve --allow-host NAME (or allow_hosts: in the config)',
  })
}

function checkOrigin(req: IncomingMessage): void {
  const site = req.headers['sec-fetch-site']
  const navigation = req.headers['sec-fetch-mode'] === 'navigate' && SAFE_METHODS.has(req.method ?? 'GET')
  if ((site === 'cross-site' || site === 'same-site') && !navigation) {
    throw new TeaError('ORIGIN_NOT_ALLOWED', `a request from another site (Sec-Fetch-Site: ${site}) to tea serve`, {
      hint: 'only the status page tea serves, or a client that is not a browser, may call the API',
    })
  }
  const origin = req.headers.origin
  if (origin === undefined) return
  if (!sameOrigin(origin, req.headers.host))
    throw new TeaError('ORIGIN_NOT_ALLOWED', `a request from the page at ${JSON.stringify(origin.slice(0, 200))} to tea serve`, {
      hint: 'only the status page tea serves, or a client that is not a browser, may call the API',
    })
}

/** Whether `origin` is `http://HOST` or `https://HOST` for the request's own Host (default ports folded). */
function sameOrigin(origin: string, host: string | undefined): boolean {
  if (host === undefined) return false
  try {
    const o = new URL(origin)
    if (o.protocol !== 'http:' && o.protocol !== 'https:') return false
    return o.host === new URL(`${o.protocol}//${host}`).host
  } catch {
    return false // `null` (a sandboxed frame, a file), or not a URL at all
  }
}

/** `name`, `name:port`, `[v6]`, `[v6]:port` → lower-case name (v6 without brackets) and port; undefined when malformed. */
function parseHost(text: string): { name: string; port?: number } | undefined {
  const m = /^(?:\[([0-9a-f:.]+)\]|([a-z0-9._-]+))(?::(\d{1,5}))?$/.exec(text.trim().toLowerCase())
  if (!m) return undefined
  const name = m[1] ?? m[2]!
  if (m[1] && isIP(m[1]) !== 6) return undefined
  const port = m[3] === undefined ? undefined : Number(m[3])
  if (port !== undefined && port > 65535) return undefined
  return { name: normalIp(name), ...(port !== undefined && { port }) }
}

/** An IPv4-mapped IPv6 address as its IPv4 form (a dual-stack socket reports 127.0.0.1 as ::ffff:127.0.0.1). */
function normalIp(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address
}
