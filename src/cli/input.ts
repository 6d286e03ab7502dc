/** `-i JSON|@file.json|@file.yaml` and `--set key=value`: the run's input, always a JSON object. */

import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { TeaError } from '../core/errors.ts'
import { isPlainObject } from '../core/util.ts'
import { parseYamlValue } from '../agent/parse.ts'
import { isReservedKey, RESERVED_KEYS } from './reserved-keys.ts'

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
      try {
        value = /\.ya?ml$/i.test(file) ? parseYamlValue(text) : JSON.parse(text)
      } catch (e) {
        throw new TeaError(
          'INVALID_INPUT',
          `input file ${file} is not valid ${/\.ya?ml$/i.test(file) ? 'YAML' : 'JSON'}: ${(e as Error).message}`,
        )
      }
    } else {
      try {
        value = JSON.parse(arg)
      } catch (e) {
        throw new TeaError('INVALID_INPUT', `-i expects a JSON object, @file.json or @file.yaml; JSON.parse said: ${(e as Error).message}`)
      }
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
    setPath(input, path, parseScalar(s.slice(eq + 1)))
  }
  return input
}

/** `--set n=3` gives a number, `--set ok=true` a boolean, `--set tags=["a"]` a list; anything else a string. */
function parseScalar(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let at = target
  for (const key of path.slice(0, -1)) {
    if (!isPlainObject(at[key])) at[key] = {}
    at = at[key] as Record<string, unknown>
  }
  at[path[path.length - 1]!] = value
}
