/**
 * Template fuzzer: mutates a corpus of valid templates and generates token soup, compiles each one, renders it
 * against a random scope, and checks that the only thing ever thrown is a `TeaError` coded `TEMPLATE_SYNTAX` or
 * `TEMPLATE_ERROR` that names the node and field. Deterministic for a seed. Shared by the test (small count)
 * and the bench (`npx tsx bench/template.bench.ts --fuzz`, 100,000).
 */

import { errorMessage, isTeaError } from '../../src/core/errors.ts'
import { compileCondition, compileTemplate } from '../../src/template/index.ts'

export interface FuzzReport {
  count: number
  rendered: number
  syntaxErrors: number
  renderErrors: number
  /** Longest single compile + render, to spot near-hangs (reported, never asserted). */
  slowestMs: number
}

const CORPUS = [
  'Hello {{ state.name }}!',
  '{{ state.items | length }} items: {{ state.items | join(", ") }}',
  '{% for x in state.items %}{{ loop.index }}. {{ x }}{% if not loop.last %}\n{% endif %}{% endfor %}',
  '{% if state.n > 3 and result.ok %}big{% elif state.n == 3 %}three{% else %}small{% endif %}',
  "{{ state.missing | default('n/a') }} {{ state.a.b is defined }} {{ state.x is not none }}",
  '{{ {"a": [1, 2, {"b": state.n}], "c": none} | tojson }}',
  '{{ result.text | fromjson }}',
  "{{ state.name | upper | replace('A', 'b', 1) | trim | lower }}",
  '{{ (state.n + 2) * 3 // 2 - -1 % 4 ** 2 / 1.5 }}',
  "{{ 'x' if state.flag else 'y' }}{{ state.name[1:3] ~ state.items[-1] }}",
  '{%- for k in state.dict -%} {{ k }}={{ state.dict[k] }} {%- endfor %}',
  '{# a comment #}{{ state.n | string | int | float | round(1) | abs }}',
  '{% raw %}{{ not parsed }}{% endraw %}{{ state.items | first }}{{ state.items | last }}',
  "{{ state.n in [1, 2, 3] }} {{ 'a' not in state.name }} {{ 1 < state.n <= 10 }}",
  '{% for a, b in state.dict | items %}{{ a }}:{{ b }};{% else %}empty{% endfor %}',
  "{{ state['name'] }}{{ state.items.0 }}{{ state.dict | keys | join }}",
  "{{ state.n | default(0) + 1 }}{{ state.flag or 'no' }}{{ state.flag and 'yes' }}",
]

const SYNTAX = [
  '{{',
  '}}',
  '{%',
  '%}',
  '{#',
  '#}',
  '-',
  '(',
  ')',
  '[',
  ']',
  '{',
  '}',
  '|',
  '.',
  ',',
  ':',
  "'",
  '"',
  '\\',
  ' if ',
  ' else ',
  ' for ',
  ' in ',
  ' not ',
  ' and ',
  ' or ',
  ' is ',
  'endif',
  'endfor',
  'elif',
  'loop',
  'state',
  'constructor',
  '__proto__',
  'prototype',
  'toString',
  'length',
  '0',
  '-1',
  '1e308',
  '==',
  '**',
  '//',
  '~',
  '%',
  '*',
  'default',
  'tojson',
  'fromjson',
  'join',
  'none',
  'true',
  'defined',
  'x',
  '\n',
  ' ',
  '(((((',
  ')))))',
  '[[[',
  ']]]',
]

const TOKENS = [
  'state',
  'result',
  'goal',
  'loop',
  'x',
  '.',
  'name',
  'items',
  'n',
  '[',
  ']',
  '(',
  ')',
  '0',
  '-1',
  "'s'",
  '+',
  '-',
  '*',
  '/',
  '//',
  '%',
  '**',
  '~',
  '==',
  '<',
  '>=',
  'and',
  'or',
  'not',
  'in',
  'is',
  'defined',
  'none',
  'if',
  'else',
  '|',
  'length',
  'default',
  'join',
  'upper',
  'int',
  'round',
  'first',
  'replace',
  'tojson',
  'fromjson',
  ',',
  ':',
  '{',
  '}',
  'true',
  '3.5',
  '"x"',
  'constructor',
  '__proto__',
  'dict',
  'items',
]

/** mulberry32: small, fast, good enough to drive a fuzzer reproducibly. */
function rng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export function fuzzTemplates(count: number, seed: number): FuzzReport {
  const rand = rng(seed)
  const int = (n: number): number => Math.floor(rand() * n)
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!
  const report: FuzzReport = { count, rendered: 0, syntaxErrors: 0, renderErrors: 0, slowestMs: 0 }

  const value = (depth: number): unknown => {
    switch (int(depth > 2 ? 5 : 8)) {
      case 0:
        return int(20) - 5
      case 1:
        return pick(['', 'abc', 'Ann', '{"a": 1}', '[1, 2]', 'not json', '3.7', 'ünï'])
      case 2:
        return null
      case 3:
        return rand() < 0.5
      case 4:
        return rand() * 100
      case 5:
        return Array.from({ length: int(5) }, () => value(depth + 1))
      default:
        return Object.fromEntries(Array.from({ length: int(4) }, (_, i) => [pick(['a', 'b', 'name', 'n', `k${i}`]), value(depth + 1)]))
    }
  }
  const scope = (): Record<string, unknown> => ({
    state: {
      name: pick(['Ann', 'Bob', '']),
      n: int(10),
      items: [1, 'two', null],
      dict: { a: 1 },
      flag: rand() < 0.5,
      x: value(0),
      a: value(0),
    },
    result: { ok: rand() < 0.5, text: pick(['{"k": 1}', 'oops', '[]']) },
    goal: value(0),
  })

  const mutate = (src: string): string => {
    let s = src
    for (let m = 1 + int(4); m > 0; m--) {
      const at = int(s.length + 1)
      switch (int(5)) {
        case 0:
          s = s.slice(0, at) + pick(SYNTAX) + s.slice(at)
          break
        case 1:
          s = s.slice(0, at) + s.slice(at + 1 + int(6))
          break
        case 2:
          s = s.slice(0, at) + s.slice(int(s.length), int(s.length) + int(10)) + s.slice(at)
          break
        case 3:
          s = s.slice(0, at) + pick(CORPUS) + s.slice(at)
          break
        default:
          s = s.slice(0, at) + String.fromCharCode(int(128)) + s.slice(at)
      }
    }
    return s
  }
  const soup = (): string => {
    const n = 1 + int(12)
    const body = Array.from({ length: n }, () => pick(TOKENS)).join(rand() < 0.7 ? ' ' : '')
    return rand() < 0.6 ? `{{ ${body} }}` : `{% if ${body} %}y{% endif %}`
  }

  const nested = (): string => {
    const n = int(400)
    const [open, close] = pick([
      ['(', ')'],
      ['[', ']'],
      ['{"k": ', '}'],
      ['not ', ''],
      ['-', ''],
      ['', ' | abs'],
      ['', ' + 1'],
    ])
    const inner = open.repeat(n) + pick(['1', 'state.n', 'x']) + close.repeat(rand() < 0.8 ? n : int(n + 1))
    return rand() < 0.5 ? `{{ ${inner} }}` : `{% if ${inner} %}{% endif %}`
  }

  for (let i = 0; i < count; i++) {
    const r = rand()
    const src = r < 0.5 ? mutate(pick(CORPUS)) : r < 0.85 ? soup() : r < 0.9 ? nested() : pick(CORPUS)
    const started = Date.now()
    const where = { node: 'fz', field: 'with.f' }
    try {
      const t = compileTemplate(src, where)
      const out = t.render(scope())
      if (!t.native && typeof out !== 'string') throw new Error(`text template rendered a ${typeof out}`)
      report.rendered++
    } catch (e) {
      classify(e, src, report)
    }
    if (i % 7 === 0) {
      try {
        compileCondition(src.replace(/\{\{|\}\}/g, ''), where)(scope())
      } catch (e) {
        classify(e, src, report)
      }
    }
    report.slowestMs = Math.max(report.slowestMs, Date.now() - started)
  }
  return report
}

function classify(e: unknown, src: string, report: FuzzReport): void {
  if (isTeaError(e, 'TEMPLATE_SYNTAX')) report.syntaxErrors++
  else if (isTeaError(e, 'TEMPLATE_ERROR')) report.renderErrors++
  else throw new Error(`fuzz: uncoded ${String(e)} for template ${JSON.stringify(src)}`, { cause: e })
  if (e.where?.node !== 'fz' || e.where.field !== 'with.f') throw new Error(`fuzz: error not placed at node and field: ${errorMessage(e)}`)
}
