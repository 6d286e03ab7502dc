import * as v from 'valibot'
import { TeaError } from '../../core/errors.ts'
import { isPlainObject } from '../../core/util.ts'
import { defineAction } from '../types.ts'
import { copyPath, deletePath, splitPath } from './dot-path.ts'

const paths = (what: string) => v.optional(v.pipe(v.array(v.string()), v.description(`Dot-paths (e.g. user.name, items.0.id) to ${what}.`)))

const params = v.object({
  data: v.pipe(v.unknown(), v.description('The value to reshape (an object, or a list of objects for pick/omit).')),
  mapping: v.optional(
    v.pipe(
      v.record(v.string(), v.unknown()),
      v.description(
        "The result's shape: each string leaf is an expression over data, e.g. data.user.name or 'Hi ' ~ data.user.name; other leaves are kept as they are.",
      ),
    ),
  ),
  pick: paths('keep; everything else is dropped'),
  omit: paths('drop'),
})

export const jsonTransform = defineAction({
  name: 'json.transform',
  raw: ['mapping'],
  description:
    'Reshapes data without code and returns {result}: mapping builds a new object from expressions over data (e.g. {name: "data.user.name"}), pick keeps and omit drops dot-paths (per item for a list).',
  params,
  run(p, ctx) {
    if (p.mapping !== undefined) {
      if (p.pick !== undefined || p.omit !== undefined) {
        throw new TeaError('INVALID_PARAMS', 'json.transform: expected mapping or pick/omit, got both', {
          hint: 'use two json.transform nodes to pick and then map',
        })
      }
      return { result: ctx.render(asTemplates(p.mapping), { data: p.data }, 'mapping') }
    }
    if (p.pick === undefined && p.omit === undefined) {
      throw new TeaError('INVALID_PARAMS', 'json.transform: expected one of mapping, pick or omit, got none')
    }
    const pick = p.pick?.map(splitPath)
    const omit = p.omit?.map(splitPath)
    const reshape = (item: unknown): unknown => {
      let out: unknown = item
      if (pick) {
        const picked: Record<string, unknown> = {}
        for (const parts of pick) copyPath(item, picked, parts)
        out = picked
      } else out = structuredClone(item)
      for (const parts of omit ?? []) deletePath(out, parts)
      return out
    }
    return { result: Array.isArray(p.data) ? p.data.map(reshape) : reshape(p.data) }
  },
})

/**
 * Bare expressions become `{{ expr }}` templates; strings that already hold template tags stay as they are.
 * Bare is the documented form because the engine renders a node's whole `with:` before the action runs, when
 * `data` is not a name in scope; templates only reach us from direct calls (`ctx.invoke`, a model's tool call).
 */
function asTemplates(value: unknown): unknown {
  if (typeof value === 'string') return /\{\{|\{%/.test(value) ? value : `{{ ${value} }}`
  if (Array.isArray(value)) return value.map(asTemplates)
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, asTemplates(v)]))
  return value
}
