import * as v from 'valibot'

export const keyParam = v.pipe(v.string(), v.minLength(1, 'key must not be empty'), v.description('The entry key.'))

export const namespaceParam = v.optional(
  v.pipe(v.string(), v.minLength(1, 'namespace must not be empty'), v.description('Keeps agents’ keys apart.')),
  'default',
)
