import * as v from 'valibot'
import { TeaError } from '../../core/errors.ts'
import { defineAction } from '../types.ts'
import { commonParams } from './params.ts'
import { httpRequest, type OutgoingBody } from './request.ts'

const params = v.object({
  ...commonParams,
  body: v.optional(v.pipe(v.string(), v.description('Raw request body (text/plain unless a content-type header is given).'))),
  json: v.optional(v.pipe(v.unknown(), v.description('A value sent as a JSON request body (instead of body).'))),
})

export const httpPost = defineAction({
  name: 'http.post',
  description: 'Posts a text or JSON body to an http(s) URL and returns {status, headers, body, json?}, with a timeout and a size cap.',
  params,
  run(p, ctx) {
    if (p.body !== undefined && p.json !== undefined) {
      throw new TeaError('INVALID_PARAMS', 'http.post: expected either body or json, got both', {
        hint: 'send a string with body, or a value to be encoded as JSON with json',
      })
    }
    const out: OutgoingBody | undefined =
      p.json !== undefined
        ? { data: JSON.stringify(p.json), contentType: 'application/json' }
        : p.body !== undefined
          ? { data: p.body, contentType: 'text/plain; charset=utf-8' }
          : undefined
    return httpRequest('http.post', 'POST', p, out, ctx)
  },
})
