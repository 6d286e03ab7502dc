/**
 * The HTTP plumbing of `tea serve` on plain `node:http`: JSON replies, errors as `{"error": {code, message}}`
 * with the CLI's codes (SPEC §3.11), request bodies read under a size limit, and the bearer token checked in
 * constant time. Why not hono: see docs/serve.md ("Why node:http").
 */

import { createHash, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { errorMessage, exitKind, isTeaError, TeaError, type ErrorCode } from '../../core/errors.ts'

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
  try {
    return JSON.parse(text)
  } catch (e) {
    throw new TeaError('BAD_REQUEST', `the request body is not JSON: ${(e as Error).message}`, {
      hint: "send a JSON object with 'content-type: application/json'",
    })
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

/** The token a request carries: `Authorization: Bearer …`, else the page's cookie. */
export function requestToken(req: IncomingMessage): string | undefined {
  const auth = req.headers.authorization
  if (auth?.startsWith('Bearer ')) return auth.slice(7).trim()
  const cookie = /(?:^|;\s*)tea_token=([^;]*)/.exec(req.headers.cookie ?? '')
  return cookie ? decodeURIComponent(cookie[1]!) : undefined
}

export const TOKEN_COOKIE = 'tea_token'
