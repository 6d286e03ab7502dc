/**
 * `web.scrape`: fetch a page and return what a reader (or a ReAct loop's model) needs from it — the title, the
 * readable text and the links — rather than its markup. The request is http.get's (src/actions/http/request.ts:
 * http/https only, one deadline for the whole response, a body cap enforced while reading, credentials in the URL
 * moved to a header and redacted from messages, the run's cancellation). A status that is not 2xx fails the call:
 * an error page read as content would mislead a model. HTML is read by html-text.ts; plain text is returned as
 * it is and JSON as its text; any other content type is an HTTP_ERROR naming it.
 */

import * as v from 'valibot'
import { TeaError } from '../../core/errors.ts'
import { DEFAULT_TIMEOUT_S } from '../http/params.ts'
import { httpRequest } from '../http/request.ts'
import { defineAction } from '../types.ts'
import { readHtml } from './html-text.ts'

const params = v.object({
  url: v.pipe(v.string(), v.description('The http:// or https:// page to fetch.')),
  headers: v.optional(v.pipe(v.record(v.string(), v.string()), v.description('Request headers, name to value.'))),
  timeout: v.optional(v.pipe(v.number(), v.gtValue(0), v.description('Seconds for the whole response (default 30).')), DEFAULT_TIMEOUT_S),
  max_bytes: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(1), v.description('Largest page accepted, in bytes (default 2 MiB).')),
    2 * 1024 * 1024,
  ),
  max_text_chars: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(1),
      v.description('Longest text returned; longer text is cut and truncated set (default 20000).'),
    ),
    20_000,
  ),
  max_links: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.description('Links returned at most (default 100).')), 100),
})

export const webScrape = defineAction({
  name: 'web.scrape',
  description:
    'Fetches a web page and returns {url, status, title, text, links: [{href, text}], truncated}: its readable text without markup, scripts or navigation.',
  params,
  async run(p, ctx) {
    const r = await httpRequest(
      'web.scrape',
      'GET',
      { url: p.url, timeout: p.timeout, max_bytes: p.max_bytes, fail_on_status: true, ...(p.headers && { headers: p.headers }) },
      undefined,
      ctx,
    )
    const url = typeof r.url === 'string' && r.url ? r.url : p.url
    const type = (r.headers['content-type'] ?? '').toLowerCase()
    let page: { title: string; text: string; links: Array<{ href: string; text: string }> }
    if (type === '' || type.includes('html') || type.includes('xml')) page = readHtml(r.body, url, p.max_links)
    else if (type.startsWith('text/') || type.includes('json')) page = { title: '', text: r.body.trim(), links: [] }
    else
      throw new TeaError('HTTP_ERROR', `web.scrape: ${url} is ${type}, not a page with text`, {
        details: { url, content_type: type },
        hint: 'use http.get for other content',
      })
    const truncated = page.text.length > p.max_text_chars
    return {
      url,
      status: r.status,
      title: page.title,
      text: truncated ? page.text.slice(0, p.max_text_chars) : page.text,
      links: page.links,
      truncated,
    }
  },
})
