import * as v from 'valibot'
import { defineAction } from '../types.ts'
import { commonParams } from './params.ts'
import { httpRequest } from './request.ts'

export const httpGet = defineAction({
  name: 'http.get',
  description: 'Fetches an http(s) URL and returns {status, headers, body, json?}, with a timeout and a response size cap.',
  params: v.object(commonParams),
  run: (p, ctx) => httpRequest('http.get', 'GET', p, undefined, ctx),
})
