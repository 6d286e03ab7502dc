/**
 * IP addresses as bytes, and CIDR ranges over them, for the outbound destination policy (http-policy.ts).
 *
 * Only the canonical spellings are read: a dotted quad of four decimal parts, and IPv6 in hex groups with at most
 * one `::` and an optional dotted quad at its end. That is what `dns.lookup` returns and what the URL parser makes
 * of any host it takes for an address (`2130706433`, `0x7f.1`, `127.1` and `0177.0.0.1` all become `127.0.0.1`;
 * `[::ffff:127.0.0.1]` becomes `[::ffff:7f00:1]`), so the odd spellings an attacker tries never reach this file
 * unparsed. Anything else is not an address (`undefined`), and the caller treats it as a name.
 */

/** 4 bytes for IPv4, 16 for IPv6. */
export type IpBytes = Uint8Array

export interface Cidr {
  bytes: IpBytes
  prefix: number
  /** As written, for messages. */
  text: string
}

/** `text` as an address (brackets and a `%zone` suffix allowed), or undefined when it is not one. */
export function parseIp(text: string): IpBytes | undefined {
  let s = text
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1)
  const zone = s.indexOf('%')
  if (zone >= 0 && s.includes(':')) s = s.slice(0, zone)
  return s.includes(':') ? parseIpv6(s) : parseIpv4(s)
}

/** `a.b.c.d/n` or `v6/n`, or undefined when `text` is not a CIDR range. */
export function parseCidr(text: string): Cidr | undefined {
  const slash = text.indexOf('/')
  if (slash < 0) return undefined
  const bytes = parseIp(text.slice(0, slash))
  const prefixText = text.slice(slash + 1)
  if (!bytes || !/^\d{1,3}$/.test(prefixText)) return undefined
  const prefix = Number(prefixText)
  if (prefix > bytes.length * 8) return undefined
  return { bytes, prefix, text }
}

/**
 * Whether `ip` lies in `range`. An IPv4 address and an IPv4-mapped IPv6 one (`::ffff:a.b.c.d`) are the same
 * destination to the kernel, so each is compared in the other's family too.
 */
export function inCidr(ip: IpBytes, range: Cidr): boolean {
  const a = ip.length === range.bytes.length ? ip : ip.length === 4 ? mapped(ip) : embeddedIpv4(ip)
  if (!a || a.length !== range.bytes.length) return false
  const whole = range.prefix >> 3
  for (let i = 0; i < whole; i++) if (a[i] !== range.bytes[i]) return false
  const rest = range.prefix & 7
  if (rest === 0) return true
  const mask = (0xff << (8 - rest)) & 0xff
  return (a[whole]! & mask) === (range.bytes[whole]! & mask)
}

/**
 * The IPv4 address an IPv6 one stands for where a packet to it reaches that IPv4 address: IPv4-mapped
 * (`::ffff:0:0/96`), IPv4-compatible (`::/96`, deprecated, but a kernel may still route it) and NAT64's well-known
 * prefix (`64:ff9b::/96`). Undefined for any other IPv6 address, and for `::` and `::1`, which are IPv6's own.
 */
export function embeddedIpv4(ip: IpBytes): IpBytes | undefined {
  if (ip.length !== 16) return undefined
  const head = ip.subarray(0, 12)
  const zeros = (from: number, to: number): boolean => head.subarray(from, to).every((b) => b === 0)
  const tail = ip.subarray(12)
  const isMapped = zeros(0, 10) && head[10] === 0xff && head[11] === 0xff
  const isCompatible = zeros(0, 12) && (tail[0]! | tail[1]! | tail[2]!) !== 0 // not :: or ::1
  const isNat64 = head[0] === 0 && head[1] === 0x64 && head[2] === 0xff && head[3] === 0x9b && zeros(4, 12)
  return isMapped || isCompatible || isNat64 ? Uint8Array.from(tail) : undefined
}

/** The address written canonically: dotted quad, or IPv6 hex groups with the longest zero run as `::`. */
export function formatIp(ip: IpBytes): string {
  if (ip.length === 4) return ip.join('.')
  const groups: number[] = []
  for (let i = 0; i < 16; i += 2) groups.push((ip[i]! << 8) | ip[i + 1]!)
  let best = -1
  let bestLength = 1
  for (let i = 0; i < 8; ) {
    let j = i
    while (j < 8 && groups[j] === 0) j++
    if (j - i > bestLength) [best, bestLength] = [i, j - i]
    i = j === i ? i + 1 : j
  }
  const hex = (from: number, to: number): string =>
    groups
      .slice(from, to)
      .map((g) => g.toString(16))
      .join(':')
  return best < 0 ? hex(0, 8) : `${hex(0, best)}::${hex(best + bestLength, 8)}`
}

// --- internal ---

function parseIpv4(s: string): IpBytes | undefined {
  const parts = s.split('.')
  if (parts.length !== 4) return undefined
  const out = new Uint8Array(4)
  for (let i = 0; i < 4; i++) {
    const p = parts[i]!
    if (!/^(0|[1-9]\d{0,2})$/.test(p) || Number(p) > 255) return undefined
    out[i] = Number(p)
  }
  return out
}

function parseIpv6(s: string): IpBytes | undefined {
  let text = s
  let v4: IpBytes | undefined
  const lastColon = text.lastIndexOf(':')
  if (text.slice(lastColon + 1).includes('.')) {
    v4 = parseIpv4(text.slice(lastColon + 1))
    if (!v4) return undefined
    // The dotted quad takes two groups' place; a `::` just before it stays a `::`.
    text = `${text.slice(0, lastColon + 1)}0:0`
  }
  const halves = text.split('::')
  if (halves.length > 2) return undefined
  const groupsOf = (h: string): number[] | undefined => {
    if (h === '') return []
    const out: number[] = []
    for (const g of h.split(':')) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined
      out.push(Number.parseInt(g, 16))
    }
    return out
  }
  const head = groupsOf(halves[0]!)
  const tail = halves.length === 2 ? groupsOf(halves[1]!) : []
  if (!head || !tail) return undefined
  const missing = 8 - head.length - tail.length
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined
  const groups = [...head, ...new Array<number>(halves.length === 2 ? missing : 0).fill(0), ...tail]
  const out = new Uint8Array(16)
  groups.forEach((g, i) => {
    out[2 * i] = g >> 8
    out[2 * i + 1] = g & 0xff
  })
  if (v4) out.set(v4, 12)
  return out
}

function mapped(ip4: IpBytes): IpBytes {
  const out = new Uint8Array(16)
  out[10] = 0xff
  out[11] = 0xff
  out.set(ip4, 12)
  return out
}
