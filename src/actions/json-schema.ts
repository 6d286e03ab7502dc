/**
 * valibot schema → JSON Schema, for `tea actions --json`, `tools.list`, and the structured-output `format` sent to
 * models. The only importer of @valibot/to-json-schema. Pieces JSON Schema cannot express (transforms, custom
 * checks) are left out rather than failing: the valibot schema still validates them at run time.
 */

import { toJsonSchema } from '@valibot/to-json-schema'
import type { GenericSchema } from 'valibot'

export function jsonSchemaOf(schema: GenericSchema): Record<string, unknown> {
  const { $schema: _drop, ...rest } = toJsonSchema(schema, { errorMode: 'ignore' }) as Record<string, unknown>
  return rest
}
