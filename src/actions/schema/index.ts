import type { Action } from '../types.ts'
import { schemaMerge } from './merge.ts'

/** `schema.merge`: TEA's deep merge of JSON schemas. */
export const schemaActions: Action[] = [schemaMerge]
