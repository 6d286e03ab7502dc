/**
 * The soak (issue 9): many SIGKILLs at random moments of a linear run and of a parallel plan, each run resumed to
 * the end; double-resume races; and seeded malformed inputs for every parser a user or a model can reach. Each
 * trial checks what must hold:
 * - kill and resume: stdout of the resumed run equals an uninterrupted run's byte for byte, and no node or subtask
 *   whose completion was seen before a kill starts again afterwards;
 * - race: of two `tea resume` started together, exactly one runs the run (exit 0), the other exits 2;
 * - malformed input: every failure is a TeaError with a code from the table, or the parser's documented refusal;
 * - hostile JSON into every entry point (fuzz.ts): the same, and `tea serve` still answering afterwards.
 *
 * `npm run soak` runs the full counts and prints the figures; `soak.test.ts` runs a small slice in `npm test`.
 */

import { isDeepStrictEqual } from 'node:util'
import { loadAgentText } from '../../src/agent/load.ts'
import { parseProtocolMessage } from '../../src/aof/protocol/parse-message.ts'
import { parseTaskText } from '../../src/aof/protocol/task-file.ts'
import { ERROR_CODES, isTeaError } from '../../src/core/errors.ts'
import { buildRegistry } from '../../src/features.ts'
import { parseReply } from '../../src/planning/parse.ts'
import { openLmdbStore } from '../../src/store/lmdb-store.ts'
import { compileTemplate } from '../../src/template/index.ts'
import { killWhen, scratch, tea } from '../e2e/cli.ts'
import { rng } from '../support/rng.ts'
import { type FuzzFigures, fuzzEntryPoints } from './fuzz.ts'

export interface SoakCounts {
  linearKills: number
  planKills: number
  races: number
  inputs: number
  /** Hostile JSON into every entry point (fuzz.ts). */
  fuzz: number
  seed: number
}

export interface SoakFigures {
  trials: Record<'linear' | 'plan', { trials: number; kills: number; mismatches: string[]; reruns: string[] }>
  races: { trials: number; exactlyOne: number; failures: string[] }
  inputs: { total: number; byKind: Record<string, number>; crashes: string[]; uncoded: string[] }
  fuzz: FuzzFigures
  seconds: number
}

const LINEAR = `name: soak-linear
nodes:
${Array.from({ length: 10 }, (_, i) => `  - name: n${i + 1}\n    run: "await new Promise((r) => setTimeout(r, ${5 + ((i * 7) % 30)})); return { n${i + 1}: 'v${i + 1}', total: (state.total || 0) + ${i + 1} }"`).join('\n')}
`

const PLAN = `name: soak-plan
initial_state:
  plan:
    id: plan_soak
    goal: soak
    strategy: flat
    created_at: 1
    replan_count: 0
    max_replans: 0
    subtasks:
${Array.from({ length: 9 }, (_, i) => {
  const deps = i === 8 ? '["4", "8"]' : i === 0 || i === 4 ? '[]' : `["${i}"]`
  return `      - { id: "${i + 1}", description: "step ${i + 1}", dependencies: ${deps} }`
}).join('\n')}
nodes:
  - name: work
    uses: plan.execute
    with:
      plan: "{{ state.plan }}"
      parallel: true
      max_concurrent: 2
      subtask_executor:
        run: "await new Promise((r) => setTimeout(r, 20 + Number(subtask.id) * 3)); return 'done ' + subtask.id"
`

export async function soak(counts: SoakCounts, log: (line: string) => void = () => {}): Promise<SoakFigures> {
  const started = Date.now()
  const random = rng(counts.seed)
  const figures: SoakFigures = {
    trials: { linear: { trials: 0, kills: 0, mismatches: [], reruns: [] }, plan: { trials: 0, kills: 0, mismatches: [], reruns: [] } },
    races: { trials: 0, exactlyOne: 0, failures: [] },
    inputs: { total: 0, byKind: {}, crashes: [], uncoded: [] },
    fuzz: { total: 0, byKind: {}, crashes: [], uncoded: [] },
    seconds: 0,
  }
  for (const [kind, agent, n] of [
    ['linear', LINEAR, counts.linearKills],
    ['plan', PLAN, counts.planKills],
  ] as const) {
    const reference = await referenceOutput(agent)
    for (let trial = 0; trial < n; trial++) {
      await killAndResume(kind, agent, reference, random, figures.trials[kind], `${kind} #${trial} (seed ${counts.seed})`)
      if ((trial + 1) % 10 === 0) log(`${kind}: ${trial + 1}/${n} trials`)
    }
  }
  for (let trial = 0; trial < counts.races; trial++) await race(figures.races, random, `race #${trial} (seed ${counts.seed})`)
  malformed(counts.inputs, random, figures.inputs)
  figures.fuzz = await fuzzEntryPoints(counts.fuzz, random)
  figures.seconds = Math.round((Date.now() - started) / 1000)
  return figures
}

async function referenceOutput(agent: string): Promise<string> {
  const s = scratch({ 'agent.yaml': agent })
  try {
    const r = await tea(['run', s.path('agent.yaml'), '--data-dir', s.path('data'), '-q'], { timeoutMs: 60_000 })
    if (r.code !== 0) throw new Error(`the soak's reference run failed: ${r.stderr}`)
    return r.stdout
  } finally {
    s.cleanup()
  }
}

/** Which node or subtask an event says has finished (committed), or started. */
const finished = (e: Record<string, unknown>): string | undefined =>
  e.type === 'node_end'
    ? `node ${String(e.node)}`
    : e.type === 'subtask' && e.status === 'completed'
      ? `subtask ${String(e.id)}`
      : undefined
const began = (e: Record<string, unknown>): string | undefined =>
  e.type === 'node_start'
    ? `node ${String(e.node)}`
    : e.type === 'subtask' && e.status === 'in_progress'
      ? `subtask ${String(e.id)}`
      : undefined

async function killAndResume(
  kind: string,
  agent: string,
  reference: string,
  random: () => number,
  out: SoakFigures['trials']['linear'],
  label: string,
): Promise<void> {
  const s = scratch({ 'agent.yaml': agent })
  const data = s.path('data')
  const done = new Set<string>()
  try {
    out.trials++
    let args = ['run', s.path('agent.yaml'), '--data-dir', data, '--run-id', 'soak']
    // Up to three kills, each after a random number of completions; then a resume to the end.
    for (let kills = 0; kills < 3; kills++) {
      const after = 1 + Math.floor(random() * (kind === 'plan' ? 7 : 8))
      let seen = 0
      const r = await killWhen(args, (e) => finished(e) !== undefined && ++seen >= after, { timeoutMs: 60_000 })
      for (const e of r.events) {
        const started = began(e)
        if (started && done.has(started)) out.reruns.push(`${label}: ${started} ran again after it was recorded`)
      }
      for (const e of r.events) {
        const f = finished(e)
        if (f) done.add(f)
      }
      args = ['resume', 'soak', '--data-dir', data]
      if (r.signal !== 'SIGKILL') {
        // The run ended before the kill point: compare what it printed (with --stream, the complete event).
        out.kills += kills
        return
      }
      if (random() < 0.5) {
        out.kills += kills + 1
        break
      }
    }
    const last = await tea(['resume', 'soak', '--data-dir', data, '-q'], { timeoutMs: 60_000 })
    if (last.code === 2 && /RUN_NOT_RESUMABLE: run soak already completed/.test(last.stderr)) {
      // The kill came at the last node's end, and the run was recorded completed before the SIGKILL landed: there
      // is nothing to resume, and what it stored must be what an uninterrupted run prints.
      if (!isDeepStrictEqual(await storedState(data), JSON.parse(reference)))
        out.mismatches.push(`${label}: the run completed before the kill landed, and its stored state differs from an uninterrupted run`)
    } else if (last.code !== 0) out.mismatches.push(`${label}: resume exited ${last.code}: ${last.stderr.slice(0, 300)}`)
    else if (last.stdout !== reference) out.mismatches.push(`${label}: the resumed output differs from an uninterrupted run`)
  } finally {
    s.cleanup()
  }
}

/** The state of run `soak`'s last checkpoint in the data dir. */
async function storedState(data: string): Promise<unknown> {
  const store = openLmdbStore(data)
  try {
    return (await store.loadLatest('soak'))?.state
  } finally {
    await store.close()
  }
}

async function race(out: SoakFigures['races'], random: () => number, label: string): Promise<void> {
  const s = scratch({ 'agent.yaml': LINEAR })
  const data = s.path('data')
  try {
    out.trials++
    const after = 1 + Math.floor(random() * 5)
    let seen = 0
    await killWhen(['run', s.path('agent.yaml'), '--data-dir', data, '--run-id', 'r'], (e) => e.type === 'node_end' && ++seen >= after, {
      timeoutMs: 60_000,
    })
    const [a, b] = await Promise.all([
      tea(['resume', 'r', '--data-dir', data, '-q'], { timeoutMs: 60_000 }),
      tea(['resume', 'r', '--data-dir', data, '-q'], { timeoutMs: 60_000 }),
    ])
    const codes = [a.code, b.code].sort()
    if (codes[0] === 0 && codes[1] === 2) out.exactlyOne++
    else out.failures.push(`${label}: exit codes ${a.code} and ${b.code}: ${(a.code === 0 ? b : a).stderr.slice(0, 200)}`)
  } finally {
    s.cleanup()
  }
}

const HOSTILE = [
  '{{',
  '}}',
  '{%',
  '%}',
  '{#',
  '#}',
  ':',
  '- ',
  '\n',
  '"',
  "'",
  '|',
  '&a',
  '*a',
  '!!str',
  '[',
  ']',
  '{',
  '}',
  '\u0000',
  '__proto__',
  'constructor',
  '${X}',
  '\\',
  '---',
  'é',
  '😀',
  '%',
  '#',
  '  ',
]

function mutate(base: string, random: () => number): string {
  let s = base
  const edits = 1 + Math.floor(random() * 4)
  for (let i = 0; i < edits; i++) {
    const at = Math.floor(random() * (s.length + 1))
    const op = random()
    if (op < 0.4) s = s.slice(0, at) + HOSTILE[Math.floor(random() * HOSTILE.length)] + s.slice(at)
    else if (op < 0.7) s = s.slice(0, at) + s.slice(at + 1 + Math.floor(random() * 8))
    else s = s.slice(0, at) + s.slice(Math.max(0, at - 12), at) + s.slice(at)
  }
  return s
}

const TEMPLATE_BASES = [
  'Hello {{ state.name | upper }}!',
  "{% for x in state.items %}{{ loop.index }}={{ x.v | default('-') }};{% endfor %}",
  "{{ state.n * 2 if state.n > 3 else 'small' }}",
  "{{ state.d.get('k', 0) ~ now() }}",
]
const REPLY_BASES = [
  '{"subtasks": [{"id": "a", "description": "x", "dependencies": []}]}',
  'Sure! ```json\n{"subtasks": [{"id": "1", "description": "y", "dependencies": ["0"]}]}\n```',
]
const TASK_BASE = '---\nid: TASK-2026-01-01-001\ntitle: a task\nstatus: ready\nrouting:\n  agent: swe\n---\nDo the thing.\n'
const ENVELOPE_BASE =
  'AOF/1 {"protocol":"aof","version":1,"projectId":"p","type":"status.update","taskId":"TASK-2026-01-01-001","fromAgent":"a","sentAt":"2026-01-01T00:00:00Z","payload":{"status":"done"}}'

function malformed(total: number, random: () => number, out: SoakFigures['inputs']): void {
  const registry = buildRegistry()
  const kinds: Array<[string, () => void]> = [
    ['agent file', () => void loadAgentText(mutate(LINEAR, random), '/tmp/soak.yaml', registry)],
    [
      'template',
      () =>
        void compileTemplate(mutate(TEMPLATE_BASES[Math.floor(random() * TEMPLATE_BASES.length)]!, random)).render({
          state: { name: 'a', items: [{ v: 1 }], n: 5, d: { k: 1 } },
        }),
    ],
    ['model reply', () => void parseReply(mutate(REPLY_BASES[Math.floor(random() * REPLY_BASES.length)]!, random), 'soak')],
    ['AOF task file', () => void parseTaskText(mutate(TASK_BASE, random), '/tmp/TASK.md', 'ready', 'TASK-2026-01-01-001')],
    ['protocol envelope', () => void parseProtocolMessage(mutate(ENVELOPE_BASE, random))],
  ]
  for (let i = 0; i < total; i++) {
    const [kind, run] = kinds[i % kinds.length]!
    out.byKind[kind] = (out.byKind[kind] ?? 0) + 1
    out.total++
    try {
      run()
    } catch (e) {
      if (!isTeaError(e)) out.crashes.push(`${kind} #${i}: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`.slice(0, 300))
      else if (!Object.hasOwn(ERROR_CODES, e.code)) out.uncoded.push(`${kind} #${i}: ${e.code}`)
    }
  }
}

/** The figures as the table docs/reliability.md holds. */
export function report(f: SoakFigures, counts: SoakCounts): string {
  const rows = [
    '| what | count | failures |',
    '|---|---|---|',
    `| SIGKILL + resume, linear run (10 nodes) | ${f.trials.linear.trials} trials, ${f.trials.linear.kills} kills | ${f.trials.linear.mismatches.length} outputs differ, ${f.trials.linear.reruns.length} recorded nodes re-run |`,
    `| SIGKILL + resume, parallel plan (9 subtasks) | ${f.trials.plan.trials} trials, ${f.trials.plan.kills} kills | ${f.trials.plan.mismatches.length} outputs differ, ${f.trials.plan.reruns.length} recorded subtasks re-run |`,
    `| two \`tea resume\` at once | ${f.races.trials} races | ${f.races.trials - f.races.exactlyOne} without exactly one winner |`,
    `| malformed inputs (${Object.entries(f.inputs.byKind)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')}) | ${f.inputs.total} | ${f.inputs.crashes.length} crashes, ${f.inputs.uncoded.length} uncoded |`,
    `| hostile JSON into every entry point (${Object.entries(f.fuzz.byKind)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')}) | ${f.fuzz.total} | ${f.fuzz.crashes.length} crashes, ${f.fuzz.uncoded.length} uncoded |`,
  ]
  return `${rows.join('\n')}\n\nseed ${counts.seed}, ${f.seconds} s`
}

/** Every failure, one per line (empty when the soak held). */
export function failures(f: SoakFigures): string[] {
  return [
    ...f.trials.linear.mismatches,
    ...f.trials.linear.reruns,
    ...f.trials.plan.mismatches,
    ...f.trials.plan.reruns,
    ...f.races.failures,
    ...f.inputs.crashes,
    ...f.inputs.uncoded,
    ...f.fuzz.crashes,
    ...f.fuzz.uncoded,
  ]
}
