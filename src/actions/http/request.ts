/**
 * One HTTP exchange for `http.get`/`http.post`, with the limits an unattended board needs: http/https only, the
 * destination policy of `settings.http.allow` (src/core/http-policy.ts: loopback, link-local, this machine and
 * `tea serve`'s listener refused, every redirect hop checked, at most 5 redirects), a deadline covering the whole
 * response (headers and body), a cap on the body size enforced while reading (a server that lies about or omits
 * Content-Length cannot fill the memory), and cancellation by the run's signal.
 */

import { builtin } from '../../core/builtin.ts'
import { TeaError, errorMessage, isTeaError } from '../../core/errors.ts'
import { type HttpReply, httpFetch } from '../../core/http.ts'
import { destinationPolicy } from '../../core/http-policy.ts'
import { cancelled } from '../../core/signals.ts'
import type { ActionContext } from '../types.ts'
import type { CommonParams } from './params.ts'

export interface HttpResult {
  status: number
  /** The URL that answered, after redirects (credentials removed). */
  url: string
  headers: Record<string, string>
  body: string
  /** Present when the response says it is JSON and its body parses. */
  json?: unknown
  [key: string]: unknown
}

export interface OutgoingBody {
  data: string
  contentType: string
}

const EXCERPT = 200

export async function httpRequest(
  action: string,
  method: 'GET' | 'POST',
  p: CommonParams,
  body: OutgoingBody | undefined,
  ctx: Pick<ActionContext, 'signal' | 'settings'>,
): Promise<HttpResult> {
  const runSignal = ctx.signal
  // Read first: a bad entry is the agent's mistake whatever the URL.
  const policy = destinationPolicy(ctx.settings.http_allow)
  const url = targetUrl(action, p.url, p.query)
  const shown = redact(url)
  const headers = requestHeaders(action, p.headers)
  moveCredentials(url, headers)
  if (body && !('content-type' in headers)) headers['content-type'] = body.contentType
  if (runSignal.aborted) throw cancelled(`${action} cancelled before calling ${shown}`)

  const deadline = AbortSignal.timeout(p.timeout * 1000)
  const failure = (e: unknown): unknown => {
    if (runSignal.aborted) return cancelled(`${action} cancelled while calling ${shown}`)
    if (deadline.aborted) {
      return new TeaError('HTTP_TIMEOUT', `${action}: no complete response from ${shown} within ${p.timeout} s`, {
        details: { url: shown, timeout: p.timeout },
        hint: 'raise the timeout parameter if the server is slow',
      })
    }
    if (isTeaError(e, 'HTTP_DESTINATION_DENIED') || isTeaError(e, 'HTTP_REDIRECT_LIMIT')) {
      return new TeaError(e.code, `${action}: ${method} ${shown}: ${e.message}`, {
        cause: e,
        ...(e.details && { details: e.details }),
        ...(e.hint && { hint: e.hint }),
      })
    }
    if (isTeaError(e)) return e
    const cause = (e as { cause?: unknown }).cause
    const reason = cause === undefined ? errorMessage(e) : `${errorMessage(e)} (${errorMessage(cause)})`
    return new TeaError('HTTP_ERROR', `${action}: ${method} ${shown} failed: ${reason}`, {
      cause: e,
      details: { url: shown },
    })
  }

  try {
    const response = await httpFetch(url, {
      method,
      headers,
      body: body?.data,
      signal: AbortSignal.any([runSignal, deadline]),
      policy,
    })
    const text = await readCapped(action, shown, response, p.max_bytes)
    const result: HttpResult = {
      status: response.status,
      url: redact(new URL(response.url || url.href)),
      headers: headerObject(response.headers),
      body: text,
    }
    if (p.fail_on_status && !response.ok) {
      const excerpt = text.length > EXCERPT ? `${text.slice(0, EXCERPT)}…` : text
      throw new TeaError(
        'HTTP_ERROR',
        `${action}: ${method} ${shown} answered ${response.status} ${response.statusText}, expected 2xx: ${excerpt}`,
        {
          details: { url: shown, status: response.status, body: excerpt },
          hint: 'set fail_on_status: false to handle non-2xx responses yourself',
        },
      )
    }
    if (/\bjson\b/i.test(response.headers.get('content-type') ?? '') && text.trim() !== '') {
      try {
        result.json = JSON.parse(text)
      } catch {
        // A server mislabelling its body is not the caller's failure: `body` still carries the text.
      }
    }
    return result
  } catch (e) {
    throw failure(e)
  }
}

function targetUrl(action: string, given: string, query: CommonParams['query']): URL {
  let url: URL
  try {
    url = new URL(given)
  } catch {
    throw new TeaError('HTTP_ERROR', `${action}: expected an absolute http:// or https:// URL, got '${given}'`, {
      details: { url: given },
    })
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TeaError(
      'HTTP_ERROR',
      `${action}: only http and https URLs are allowed, got scheme '${url.protocol.slice(0, -1)}' in '${given}'`,
      { details: { url: given, scheme: url.protocol.slice(0, -1) }, hint: 'use file.read for local files' },
    )
  }
  for (const [k, v] of Object.entries(query ?? {})) url.searchParams.append(k, String(v))
  return url
}

/** The given headers, names lower-cased (as fetch's Headers keeps them; two spellings of one name are joined). */
function requestHeaders(action: string, given: CommonParams['headers']): Record<string, string> {
  const { validateHeaderName, validateHeaderValue } = builtin('node:http')
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(given ?? {})) {
    try {
      validateHeaderName(name)
      validateHeaderValue(name, value)
    } catch {
      throw new TeaError('INVALID_PARAMS', `${action}: header ${JSON.stringify(name)} has an invalid name or value`, {
        details: { header: name },
      })
    }
    const key = name.toLowerCase()
    headers[key] = key in headers ? `${headers[key]}, ${value}` : value
  }
  return headers
}

async function readCapped(action: string, shown: string, response: HttpReply, max: number): Promise<string> {
  const tooLarge = (size: string): TeaError =>
    new TeaError('HTTP_ERROR', `${action}: the response from ${shown} is ${size}, more than max_bytes ${max}`, {
      details: { url: shown, max_bytes: max },
      hint: 'raise max_bytes if the response is expected to be this large',
    })
  const declared = Number(response.headers.get('content-length') ?? NaN)
  if (declared > max) {
    await response.body?.cancel()
    throw tooLarge(`${declared} bytes`)
  }
  if (!response.body) return ''
  const reader = response.body.getReader()
  const decoder = new TextDecoder()
  let text = ''
  let total = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    total += value.byteLength
    if (total > max) {
      await reader.cancel()
      throw tooLarge(`over ${total} bytes`)
    }
    text += decoder.decode(value, { stream: true })
  }
  return text + decoder.decode()
}

function headerObject(headers: HttpReply['headers']): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of headers.entries()) out[k] = k in out ? `${out[k]}, ${v}` : v
  return out
}

/**
 * fetch refuses URLs with `user:pass@`; like curl, we send them as Basic authorization instead (an explicit
 * Authorization header wins).
 */
function moveCredentials(url: URL, headers: Record<string, string>): void {
  if (!url.username && !url.password) return
  if (!('authorization' in headers)) {
    const pair = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`
    headers.authorization = `Basic ${Buffer.from(pair, 'utf8').toString('base64')}`
  }
  url.username = ''
  url.password = ''
}

/** URLs may carry credentials; messages and error details must not. */
function redact(url: URL): string {
  if (!url.username && !url.password) return url.href
  const copy = new URL(url.href)
  copy.username = copy.username ? '***' : ''
  copy.password = copy.password ? '***' : ''
  return copy.href
}
