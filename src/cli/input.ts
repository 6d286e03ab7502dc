/** `-i JSON|@file.json|@file.yaml` and `--set key=value`: the run's input, always a JSON object. */

import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { TeaError } from '../core/errors.ts'
import { checkDepth, jsonOrText, parseJson } from '../core/json.ts'
import { isPlainObject } from '../core/util.ts'
import { parseYamlValue } from '../agent/parse.ts'
import { isReservedKey, RESERVED_KEYS } from './reserved-keys.ts'

/** The largest input file read (a run's input is state, checkpointed with every snapshot). */
const MAX_INPUT_BYTES = 64 * 1024 * 1024

export function readInput(arg: string | undefined, sets: string[] | undefined, cwd: string): Record<string, unknown> {
  let input: Record<string, unknown> = {}
  if (arg !== undefined) {
    let value: unknown
    let from = 'the -i value'
    if (arg.startsWith('@')) {
      const file = resolve(cwd, arg.slice(1))
      from = file
      let text: string
      try {
        text = readFileSync(file, 'utf8')
      } catch (e) {
        throw new TeaError('INVALID_INPUT', `cannot read input file ${file}: ${(e as NodeJS.ErrnoException).code ?? e}`)
      }
      if (/\.ya?ml$/i.test(file)) {
        try {
          value = parseYamlValue(text)
        } catch (e) {
          throw new TeaError('INVALID_INPUT', `input file ${file} is not valid YAML: ${(e as Error).message}`)
        }
        checkDepth(value, `input file ${file}`)
      } else value = parseJson(text, `input file ${file}`, { maxBytes: MAX_INPUT_BYTES })
    } else {
      value = parseJson(arg, 'the -i value', { hint: '-i takes a JSON object, @file.json or @file.yaml' })
    }
    if (!isPlainObject(value)) {
      const got = Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value
      throw new TeaError('INVALID_INPUT', `the input from ${from} must be a JSON object (key → value), got ${got}`)
    }
    input = value
  }
  for (const s of sets ?? []) {
    const eq = s.indexOf('=')
    if (eq <= 0) throw new TeaError('INVALID_INPUT', `--set expects key=value, got '${s}'`)
    const path = s.slice(0, eq).split('.')
    const reserved = path.find(isReservedKey)
    if (reserved !== undefined) {
      throw new TeaError(
        'INVALID_INPUT',
        `--set key '${s.slice(0, eq)}': '${reserved}' is reserved (${RESERVED_KEYS.join(', ')} cannot be keys); use another name`,
      )
    }
    // `--set n=3` gives a number, `--set ok=true` a boolean, `--set tags=["a"]` a list; anything else a string.
    setPath(input, path, jsonOrText(s.slice(eq + 1), `--set ${s.slice(0, eq)}`))
  }
  return input
}

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let at = target
  for (const key of path.slice(0, -1)) {
    if (!isPlainObject(at[key])) at[key] = {}
    at = at[key] as Record<string, unknown>
  }
  at[path[path.length - 1]!] = value
}
