/**
 * The HTTP plumbing of `tea serve` on plain `node:http`: JSON replies, errors as `{"error": {code, message}}`
 * with the CLI's codes (SPEC §3.11), request bodies read under a size and a depth limit, the request path decoded
 * without throwing, and the bearer token checked in constant time. Why not hono: see docs/serve.md ("Why
 * node:http").
 */

import { createHash, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { errorMessage, exitKind, isTeaError, TeaError, type ErrorCode } from '../../core/errors.ts'
import { parseJson } from '../../core/json.ts'

/** HTTP status per error code; other codes: 400 when the CLI calls them usage errors, else 500. */
const STATUS: Partial<Record<ErrorCode, number>> = {
  UNAUTHORIZED: 401,
  NOT_FOUND: 404,
  RUN_NOT_FOUND: 404,
  AGENT_NOT_FOUND: 404,
  RUN_EXISTS: 409,
  RUN_NOT_RESUMABLE: 409,
  RUN_NOT_ACTIVE: 409,
  BODY_TOO_LARGE: 413,
  INPUT_TOO_LARGE: 413,
  INPUT_TOO_DEEP: 400,
  UNSUPPORTED_MEDIA_TYPE: 415,
  ORIGIN_NOT_ALLOWED: 403,
  // Misdirected Request: the Host names a server this is not (a DNS-rebound page), not a credential problem.
  HOST_NOT_ALLOWED: 421,
  LOW_MEMORY: 503,
  STORE_FULL: 503,
}

export function statusOf(e: unknown): number {
  if (!isTeaError(e)) return 500
  return STATUS[e.code] ?? (exitKind(e.code) === 'usage' ? 400 : 500)
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers })
  res.end(text)
}

export function sendError(res: ServerResponse, e: unknown): void {
  if (res.headersSent) {
    res.destroy()
    return
  }
  const status = statusOf(e)
  const error = isTeaError(e)
    ? { ...e.toJSON(), message: errorMessage(e) }
    : { code: 'INTERNAL', message: e instanceof Error ? e.message : String(e) }
  // A body the server stopped reading: close the connection so the rest of it is not taken for the next request.
  sendJson(res, status, { error }, status === 413 ? { connection: 'close' } : {})
}

/** The JSON body of a request, at most `limit` bytes; an empty body is `{}`. */
export async function readJson(req: IncomingMessage, limit: number): Promise<unknown> {
  const declared = Number(req.headers['content-length'])
  if (declared > limit) throw tooLarge(limit)
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > limit) throw tooLarge(limit)
    chunks.push(chunk)
  }
  const text = Buffer.concat(chunks).toString('utf8')
  if (!text.trim()) return {}
  // Depth first: a body nested thousands deep parses, then overflows the stack of whatever walks it next.
  return parseJson(text, 'the request body', { invalid: 'BAD_REQUEST', hint: "send a JSON object with 'content-type: application/json'" })
}

/**
 * The segments of a request target's path, each %-decoded. A target that is not a path (absolute-form, `*`) or
 * holds a malformed escape (`%zz`, a lone `%E0`) is a client's mistake: BAD_REQUEST, not an uncaught URIError.
 */
export function pathParts(target: string): { path: string; parts: string[]; query: URLSearchParams } {
  const bad = (why: string) => new TeaError('BAD_REQUEST', `the request path ${JSON.stringify(target.slice(0, 200))} ${why}`)
  if (!target.startsWith('/') || target.startsWith('//')) throw bad('is not an absolute path')
  const q = target.indexOf('?')
  const path = q < 0 ? target : target.slice(0, q)
  try {
    return {
      path,
      parts: path.split('/').filter(Boolean).map(decodeURIComponent),
      query: new URLSearchParams(q < 0 ? '' : target.slice(q + 1)),
    }
  } catch {
    throw bad('holds a malformed %-escape')
  }
}

function tooLarge(limit: number): TeaError {
  return new TeaError('BODY_TOO_LARGE', `the request body is larger than ${limit} bytes`, { details: { limit } })
}

/**
 * A token check that takes the same time whatever the guess: both sides are hashed first, so neither their
 * lengths nor a common prefix shows in the time `timingSafeEqual` takes.
 */
export function tokenMatcher(token: string): (given: string | undefined) => boolean {
  const want = createHash('sha256').update(token).digest()
  return (given) =>
    timingSafeEqual(
      createHash('sha256')
        .update(given ?? '')
        .digest(),
      want,
    ) && given !== undefined
}

/**
 * The token a request carries: `Authorization: Bearer …` only. Never a cookie: cookies ignore ports, so a cookie
 * set here reaches any other server on the same host, and rides along on requests a page there forges. The status
 * page keeps its token in sessionStorage (scoped to this origin, port included) and sends the header itself.
 */
export function requestToken(req: IncomingMessage): string | undefined {
  const auth = req.headers.authorization
  return auth?.startsWith('Bearer ') ? auth.slice(7).trim() : undefined
}

/** The cookie tea serve once set (before the token moved to the page's sessionStorage): cleared when seen. */
export const OLD_TOKEN_COOKIE = 'tea_token'
