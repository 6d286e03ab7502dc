/**
 * The destination policy of outbound HTTP that an agent directs (`http.get`, `http.post`, `web.scrape`, and a ReAct
 * loop's tools, which are those actions): the URL comes from an agent's input, a scraped page or a model's reply,
 * so a request must not reach what only the board itself should reach. Model servers are configured by the
 * agent's author and are not subject to it: `httpFetch` applies a policy only when its caller passes one.
 *
 * Refused by default: loopback (127.0.0.0/8, ::1, so `localhost`), the unspecified addresses (0.0.0.0/8, ::, which
 * Linux connects to this host), link-local (169.254.0.0/16 with the cloud metadata service at 169.254.169.254,
 * fe80::/10), two other cloud metadata addresses, and this machine's own interface addresses; the IPv4-mapped,
 * IPv4-compatible and NAT64 forms of IPv4 ones alike (ip.ts). Private ranges (10/8, 172.16/12, 192.168/16,
 * fc00::/7) stay open: talking to devices on the LAN is much of what an agent on a board is for.
 *
 * `settings.http.allow` opens more: a host name (or an address written as a URL's host) allows URLs with that very
 * host, whatever it resolves to; a CIDR allows any host that resolves into it. `tea serve`'s own listener is never
 * reached, whatever the list says: its API holds every run's state, and an agent that a page redirects there would
 * read it (security-probe-2 H).
 *
 * The check is made on the addresses a name resolves to, by the lookup that the socket then connects with, so the
 * address checked is the address connected to (a second DNS answer cannot swap it). Addresses written in the URL
 * are never looked up, so they are checked before the request. Each policy keeps its own connection pool: a socket
 * kept alive for one agent's allowed host is not handed to an agent whose policy refuses that host.
 */

import type { LookupAddress } from 'node:dns'
import type { Agent } from 'node:http'
import type { LookupFunction } from 'node:net'
import { builtin } from './builtin.ts'
import { TeaError } from './errors.ts'
import { type Cidr, embeddedIpv4, formatIp, inCidr, type IpBytes, parseCidr, parseIp } from './ip.ts'
import { once } from './util.ts'

export interface DestinationPolicy {
  /** Redirects followed at most; one more is HTTP_REDIRECT_LIMIT. */
  readonly maxRedirects: number
  /** Throws HTTP_DESTINATION_DENIED unless `url` is http(s) and its host, when it is an address, may be reached. */
  check(url: URL): void
  /** The lookup a request to `url` connects with: every address the host resolves to is checked first. */
  lookup(url: URL): LookupFunction
  /** This policy's keep-alive agent for `url`'s protocol. */
  agent(url: URL): Agent
}

const MAX_REDIRECTS = 5

/** Where `tea serve` leaves the address it listens on, for the policies of every thread and child process. */
const SERVE_LISTENER_ENV = 'TEA_SERVE_LISTENER'

/**
 * Records that this process serves the API on `address`:`port`, which no policy lets a request reach. An
 * environment variable rather than a module's variable: pool workers (plan subtasks run actions there) copy the
 * environment when they start, and `tea serve` listens before it starts any run.
 */
export function markServeListener(address: string, port: number): void {
  process.env[SERVE_LISTENER_ENV] = `${address} ${port}`
}

const policies = new Map<string, DestinationPolicy>()

/** The policy of `allow` (`settings.http.allow`): one per list, so its connection pool is kept between calls. */
export function destinationPolicy(allow: readonly string[] = []): DestinationPolicy {
  const key = allow.join('\n')
  let policy = policies.get(key)
  if (!policy) {
    policy = makePolicy(readAllowList(allow))
    policies.set(key, policy)
  }
  return policy
}

/** Why `entry` cannot be an entry of `settings.http.allow`, or undefined when it can. */
export function allowEntryProblem(entry: string): string | undefined {
  if (entry.includes('/')) return parseCidr(entry) ? undefined : `'${entry}' is not a CIDR range (e.g. 10.0.0.0/8, fd00::/8)`
  return hostOf(entry) === undefined ? `'${entry}' is not a host name or an address (e.g. localhost, 192.168.1.20)` : undefined
}

/** `url` as messages may show it: a password or user name in it (a redirect's Location may carry one) replaced. */
export function shownUrl(url: URL): string {
  if (!url.username && !url.password) return url.href
  const copy = new URL(url.href)
  copy.username = copy.username ? '***' : ''
  copy.password = copy.password ? '***' : ''
  return copy.href
}

// --- internal ---

interface AllowList {
  names: Set<string>
  ranges: Cidr[]
}

/** The address ranges refused by default, why (as the message says it), and whether they are this machine. */
const REFUSED: ReadonlyArray<readonly [string, string, boolean]> = [
  ['127.0.0.0/8', 'a loopback address', true],
  ['::1/128', 'a loopback address', true],
  ['0.0.0.0/8', 'an unspecified address (Linux connects it to this machine)', true],
  ['::/128', 'the unspecified address (Linux connects it to this machine)', true],
  ['169.254.0.0/16', 'a link-local address (the cloud metadata service is 169.254.169.254)', false],
  ['fe80::/10', 'a link-local address', false],
  ['100.100.100.200/32', 'a cloud metadata service', false],
  ['fd00:ec2::254/128', 'a cloud metadata service', false],
]

const refusedRanges = once(() => REFUSED.map(([cidr, why, local]) => ({ range: parseCidr(cidr)!, why, local })))

function readAllowList(allow: readonly string[]): AllowList {
  const list: AllowList = { names: new Set(), ranges: [] }
  allow.forEach((entry, i) => {
    const problem = allowEntryProblem(entry)
    if (problem) throw new TeaError('AGENT_INVALID', `settings.http.allow[${i}]: ${problem}`)
    if (entry.includes('/')) list.ranges.push(parseCidr(entry)!)
    else list.names.add(hostOf(entry)!)
  })
  return list
}

/** A URL's host as the URL parser writes it (lower case, addresses canonical), without a trailing dot. */
function hostOf(text: string): string | undefined {
  if (!/^[\w.:[\]-]+$/.test(text)) return undefined
  const bracketed = text.includes(':') && !text.startsWith('[') ? `[${text}]` : text
  try {
    const url = new URL(`http://${bracketed}/`)
    return url.port === '' ? bareHost(url) : undefined
  } catch {
    return undefined
  }
}

function bareHost(url: URL): string {
  return url.hostname.endsWith('.') ? url.hostname.slice(0, -1) : url.hostname
}

function makePolicy(allow: AllowList): DestinationPolicy {
  const agents = new Map<string, Agent>()
  return {
    maxRedirects: MAX_REDIRECTS,
    check(url) {
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        throw new TeaError('HTTP_DESTINATION_DENIED', `${url.protocol} URLs are not fetched (${shownUrl(url)}); only http and https`, {
          details: { url: shownUrl(url) },
        })
      }
      const ip = parseIp(url.hostname)
      if (ip) refuseUnlessAllowed(allow, url, ip)
    },
    lookup(url) {
      return (hostname, options, callback) => {
        builtin('node:dns').lookup(hostname, { ...options, all: true }, (err, addresses) => {
          if (err) return callback(err, [])
          try {
            if (addresses.length === 0) refuseUnlessAllowed(allow, url, undefined)
            for (const a of addresses) refuseUnlessAllowed(allow, url, parseIp(a.address))
          } catch (e) {
            return callback(e as NodeJS.ErrnoException, [])
          }
          if (options.all) return callback(null, addresses)
          const first = addresses[0] as LookupAddress
          callback(null, first.address, first.family)
        })
      }
    },
    agent(url) {
      let agent = agents.get(url.protocol)
      if (!agent) {
        // As Node's global agent: idle sockets kept for the next request, let go when the process has nothing else.
        const options = { keepAlive: true, scheduling: 'lifo', timeout: 5000 } as const
        agent = url.protocol === 'https:' ? new (builtin('node:https').Agent)(options) : new (builtin('node:http').Agent)(options)
        agents.set(url.protocol, agent)
      }
      return agent
    },
  }
}

function refuseUnlessAllowed(allow: AllowList, url: URL, ip: IpBytes | undefined): void {
  const host = bareHost(url)
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80))
  const address = ip ? formatIp(ip) : '?'
  const v4 = ip && embeddedIpv4(ip)
  const shown = `${host.replace(/^\[(.*)\]$/, '$1') === address ? host : `${host} (resolved to ${address})`}${v4 ? ` (IPv4 ${formatIp(v4)})` : ''}`
  const denied = (why: string, tail: string, hint?: string): TeaError =>
    new TeaError('HTTP_DESTINATION_DENIED', `${shown} is ${why}, ${tail}`, {
      details: { url: shownUrl(url), host, address, port },
      ...(hint && { hint }),
    })
  // Never from getaddrinfo (no answer, or one that is no address); but what cannot be checked is not connected to.
  if (!ip) throw denied('not an address', 'so it is not connected to')
  const refused = refusedRanges().find((r) => inCidr(ip, r.range))
  const own = ownAddresses().some((a) => inCidr(ip, a))
  if ((refused?.local || own) && port === serveListenerPort()) {
    throw denied(
      `tea serve's own listener (port ${port})`,
      'which outbound HTTP never reaches: its API holds every run',
      'an agent inside tea serve cannot call its API; settings.http.allow does not open it',
    )
  }
  if (allow.names.has(host) || allow.ranges.some((r) => inCidr(ip, r))) return
  const why = refused?.why ?? (own ? "an address of this machine's own" : undefined)
  if (why) throw denied(why, 'which outbound HTTP does not reach unless settings.http.allow lists it', hintFor(host, address))
}

/** This machine's interface addresses, read at each check: DHCP may change them while a daemon runs. */
function ownAddresses(): Cidr[] {
  const out: Cidr[] = []
  for (const list of Object.values(builtin('node:os').networkInterfaces())) {
    for (const a of list ?? []) {
      const bytes = parseIp(a.address)
      if (bytes) out.push({ bytes, prefix: bytes.length * 8, text: a.address })
    }
  }
  return out
}

/**
 * The port `tea serve` in this process listens on, if it does. Any address of this machine counts with it: on a
 * wildcard address serve answers on all of them, and refusing the port on the others too costs nothing.
 */
function serveListenerPort(): number | undefined {
  const mark = process.env[SERVE_LISTENER_ENV]
  const port = mark === undefined ? Number.NaN : Number(mark.slice(mark.lastIndexOf(' ') + 1))
  return Number.isInteger(port) && port > 0 ? port : undefined
}

function hintFor(host: string, address: string): string {
  const name = parseIp(host) ? `"${host}"` : `"${host}" (this name, whatever it resolves to)`
  return `if the agent must reach it, add ${name} or "${address}/${address.includes(':') ? 128 : 32}" to settings.http.allow`
}
