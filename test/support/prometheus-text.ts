/**
 * A strict reader of Prometheus' text exposition format (0.0.4), for tests of `tea serve`'s `/metrics`: every line
 * is a `# HELP`, a `# TYPE` or a sample; a sample's metric name and label names are valid, label values are quoted
 * with only `\\`, `\"` and `\n` escaped, values are numbers (or ±Inf, NaN); every family is typed before its first
 * sample and typed once; a histogram has `_bucket` series with `le` (ascending bounds, counts never falling, the last
 * `+Inf` equal to `_count`) and `_sum`, `_count`. Throws on the first departure, naming the line.
 */

export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

export interface Exposition {
  types: Map<string, string>
  help: Map<string, string>
  samples: Sample[]
  /** The value of the one sample `name` with exactly these labels; undefined when there is none. */
  get(name: string, labels?: Record<string, string>): number | undefined
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped'])

function parseValue(text: string, line: string): number {
  if (text === '+Inf') return Number.POSITIVE_INFINITY
  if (text === '-Inf') return Number.NEGATIVE_INFINITY
  if (text === 'NaN') return Number.NaN
  if (!/^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`not a number ${JSON.stringify(text)}: ${line}`)
  return Number(text)
}

/** `{a="x",b="y"}` from position 0 of `text`: the labels and where the block ends. */
function parseLabels(text: string, line: string): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {}
  let i = 1
  while (text[i] !== '}') {
    const eq = text.indexOf('=', i)
    if (eq < 0) throw new Error(`a label without '=': ${line}`)
    const name = text.slice(i, eq)
    if (!LABEL.test(name)) throw new Error(`bad label name ${JSON.stringify(name)}: ${line}`)
    if (name in labels) throw new Error(`label ${name} twice: ${line}`)
    if (text[eq + 1] !== '"') throw new Error(`label ${name} not quoted: ${line}`)
    let value = ''
    let j = eq + 2
    for (; ; j++) {
      const c = text[j]
      if (c === undefined) throw new Error(`an unterminated label value: ${line}`)
      if (c === '"') break
      if (c === '\n') throw new Error(`a raw newline in a label value: ${line}`)
      if (c === '\\') {
        const next = text[++j]
        if (next === 'n') value += '\n'
        else if (next === '\\' || next === '"') value += next
        else throw new Error(`a bad escape \\${next} in a label value: ${line}`)
      } else value += c
    }
    labels[name] = value
    i = j + 1
    if (text[i] === ',') i++
    else if (text[i] !== '}') throw new Error(`expected ',' or '}' after label ${name}: ${line}`)
  }
  return { labels, end: i + 1 }
}

/** The family a sample belongs to: its name, or a histogram's name without _bucket/_sum/_count. */
function familyOf(name: string, types: Map<string, string>): string | undefined {
  if (types.has(name)) return name
  const m = /^(.*)_(bucket|sum|count)$/.exec(name)
  return m && types.get(m[1]!) === 'histogram' ? m[1] : undefined
}

export function parseExposition(text: string): Exposition {
  if (!text.endsWith('\n')) throw new Error('the exposition does not end with a newline')
  const types = new Map<string, string>()
  const help = new Map<string, string>()
  const samples: Sample[] = []
  for (const line of text.slice(0, -1).split('\n')) {
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line)
      if (!m) throw new Error(`a comment that is neither HELP nor TYPE: ${line}`)
      const [, kind, name, rest] = m
      if (!NAME.test(name!)) throw new Error(`bad metric name: ${line}`)
      if (kind === 'TYPE') {
        if (!TYPES.has(rest!)) throw new Error(`unknown type: ${line}`)
        if (types.has(name!)) throw new Error(`typed twice: ${line}`)
        if (samples.some((s) => familyOf(s.name, new Map([[name!, rest!]])) === name)) throw new Error(`typed after its samples: ${line}`)
        types.set(name!, rest!)
      } else help.set(name!, rest!)
      continue
    }
    const nameEnd = line.search(/[{ ]/)
    if (nameEnd <= 0) throw new Error(`not a sample: ${line}`)
    const name = line.slice(0, nameEnd)
    if (!NAME.test(name)) throw new Error(`bad metric name: ${line}`)
    let rest = line.slice(nameEnd)
    let labels: Record<string, string> = {}
    if (rest.startsWith('{')) {
      const parsed = parseLabels(rest, line)
      labels = parsed.labels
      rest = rest.slice(parsed.end)
    }
    const parts = rest.split(' ')
    if (parts[0] !== '' || parts.length < 2 || parts.length > 3) throw new Error(`expected ' value [timestamp]': ${line}`)
    const value = parseValue(parts[1]!, line)
    if (!familyOf(name, types)) throw new Error(`a sample of a family with no TYPE before it: ${line}`)
    samples.push({ name, labels, value })
  }
  checkHistograms(types, samples)
  const key = (labels: Record<string, string>) => JSON.stringify(Object.entries(labels).sort())
  return {
    types,
    help,
    samples,
    get(name, labels = {}) {
      const found = samples.filter((s) => s.name === name && key(s.labels) === key(labels))
      if (found.length > 1) throw new Error(`${name} ${key(labels)} appears ${found.length} times`)
      return found[0]?.value
    },
  }
}

function checkHistograms(types: Map<string, string>, samples: Sample[]): void {
  for (const [family, type] of types) {
    if (type !== 'histogram') continue
    const series = new Map<string, { buckets: Array<[number, number]>; sum?: number; count?: number }>()
    for (const s of samples) {
      if (familyOf(s.name, types) !== family) continue
      const { le, ...rest } = s.labels
      const id = JSON.stringify(Object.entries(rest).sort())
      const entry = series.get(id) ?? { buckets: [] }
      series.set(id, entry)
      if (s.name === `${family}_bucket`) {
        if (le === undefined) throw new Error(`${family}_bucket without le`)
        entry.buckets.push([parseValue(le, `le of ${family}`), s.value])
      } else if (s.name === `${family}_sum`) entry.sum = s.value
      else if (s.name === `${family}_count`) entry.count = s.value
      else throw new Error(`${s.name} in histogram ${family}`)
    }
    for (const [id, e] of series) {
      if (e.sum === undefined || e.count === undefined) throw new Error(`${family} ${id}: no _sum or _count`)
      const last = e.buckets.at(-1)
      if (!last || last[0] !== Number.POSITIVE_INFINITY) throw new Error(`${family} ${id}: no +Inf bucket last`)
      if (last[1] !== e.count) throw new Error(`${family} ${id}: +Inf bucket ${last[1]} is not _count ${e.count}`)
      for (let i = 1; i < e.buckets.length; i++) {
        if (!(e.buckets[i]![0] > e.buckets[i - 1]![0])) throw new Error(`${family} ${id}: bounds not ascending`)
        if (e.buckets[i]![1] < e.buckets[i - 1]![1]) throw new Error(`${family} ${id}: a bucket counts fewer than the one before`)
      }
    }
  }
}
