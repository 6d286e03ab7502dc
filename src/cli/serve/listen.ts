/**
 * Where `tea serve` listens, and whether that needs a token. Loopback addresses are reachable from the board
 * only; anything else (a LAN address, `0.0.0.0`, `::`) reaches other machines, and tea refuses to start there
 * without a token: an open API on a LAN runs agents for anyone.
 */

import { readFileSync } from 'node:fs'
import { TeaError } from '../../core/errors.ts'

export interface ListenAddress {
  host: string
  port: number
}

export const DEFAULT_LISTEN = '127.0.0.1:8765'

/** `HOST:PORT`, `[v6]:PORT`, `:PORT` (loopback) or `PORT`. */
export function parseListen(text: string): ListenAddress {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d+)$/.exec(text) ?? /^()()(\d+)$/.exec(text)
  const port = Number(m?.[3])
  if (!m || !Number.isInteger(port) || port > 65535)
    throw new TeaError('USAGE', `--listen expects HOST:PORT (e.g. 127.0.0.1:8765 or 0.0.0.0:8765), got "${text}"`)
  return { host: m[1] || m[2] || '127.0.0.1', port }
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host)
}

/** The token in `file`, surrounding whitespace trimmed; an empty or unreadable file is a usage error. */
export function readToken(file: string): string {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (e) {
    throw new TeaError('USAGE', `cannot read --token-file ${file}: ${(e as NodeJS.ErrnoException).code ?? e}`)
  }
  const token = text.trim()
  if (token.length < 16)
    throw new TeaError('USAGE', `the token in ${file} is ${token.length ? 'shorter than 16 characters' : 'empty'}`, {
      hint: 'make one with: head -c 32 /dev/urandom | base64 > token && chmod 600 token',
    })
  return token
}

/** Refuses a non-loopback address without a token (SPEC §3.11: exit 2). */
export function requireTokenOffLoopback(address: ListenAddress, token: string | undefined): void {
  if (token === undefined && !isLoopback(address.host))
    throw new TeaError('USAGE', `--listen ${address.host}:${address.port} reaches other machines: give --token-file too`, {
      hint: 'every request must then carry Authorization: Bearer <token> (docs/serve.md, Security)',
    })
}
