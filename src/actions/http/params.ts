import * as v from 'valibot'

export const DEFAULT_TIMEOUT_S = 30
export const DEFAULT_MAX_BYTES = 10 * 1024 * 1024

/** Parameters shared by `http.get` and `http.post`. */
export const commonParams = {
  url: v.pipe(v.string(), v.description('The http:// or https:// URL to call.')),
  headers: v.optional(v.pipe(v.record(v.string(), v.string()), v.description('Request headers, name to value.'))),
  query: v.optional(
    v.pipe(
      v.record(v.string(), v.union([v.string(), v.number(), v.boolean()])),
      v.description('Query parameters added to the URL, name to value.'),
    ),
  ),
  timeout: v.optional(
    v.pipe(v.number(), v.gtValue(0), v.description('Seconds to wait for the whole response before failing.')),
    DEFAULT_TIMEOUT_S,
  ),
  max_bytes: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(0), v.description('Largest response body accepted, in bytes; a larger one fails the call.')),
    DEFAULT_MAX_BYTES,
  ),
  fail_on_status: v.optional(v.pipe(v.boolean(), v.description('Fail when the response status is not 2xx (else return it).')), true),
}

export type CommonParams = v.InferOutput<v.ObjectSchema<typeof commonParams, undefined>>
