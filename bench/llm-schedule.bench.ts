/**
 * The model-call scheduler end to end (issue 14, item 1): `tea run` of the built bundle against the fake model
 * server in board-simulator mode (test/support/model-server-sim.ts: one model resident, 1 slot, a 3 s load per
 * model swap, 20 tokens/s), each agent run with `settings.llm.scheduler: false` (every call sent at once, as before
 * the scheduler) and with the scheduler, interleaved run by run. A fresh server per run, so every run starts with
 * no model loaded.
 *
 * The agents (all: a planner model writes a 6-subtask plan, plan.execute runs the subtasks with max_concurrent 2):
 * - `plan`: subtasks on a second, smaller model; Ollama's default keep_alive (5 min).
 * - `plan-release`: the same agent with `keep_alive: 0`, as a board agent that gives its memory back when it is
 *   done: sent as written, the server unloads the model after every call.
 * - `plan-review`: each subtask drafted by the small model and reviewed by the planner's (reason.self_correct:
 *   draft, critique, improve), so the two models' calls interleave.
 * - `two-branches`: no plan; two parallel branches, one asking the small model 6 times in a row (triage), the
 *   other the planner's model 6 times (a report), as a board agent doing two jobs at once: sent as they come, the
 *   calls alternate between the models.
 * - `one-model`: planner and subtasks on one model (the scheduler must not make it slower).
 *
 *   node build.mjs --target linux-x64 --quiet
 *   npx tsx bench/llm-schedule.bench.ts [--runs 10] [--only plan-release] [--scale 1] [--tokens 40] [--loads]
 *
 * `--scale` multiplies the simulated load time and divides the token rate (0.25: quicker runs, the same shape);
 * `--tokens` sets the length of every reply but the planner's (40 by default; a board agent's short answers, such
 * as a subtask's status line, are nearer 20); `--loads` prints the models each run loaded, in order.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const root = join(import.meta.dirname, '..')
const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name)
  return i === -1 ? undefined : process.argv[i + 1]
}
const RUNS = Number(arg('--runs') ?? 10)
const ONLY = arg('--only')
const SCALE = Number(arg('--scale') ?? 1)
const TOKENS = Number(arg('--tokens') ?? 40)
const SIMULATE = { loadMs: 3000 * SCALE, slots: 1, maxLoaded: 1, tokensPerSecond: 20 / SCALE }
const BUNDLE = join(root, 'dist', 'linux-x64', 'tea.cjs')

const words = (n: number, stem: string) => Array.from({ length: n }, (_, i) => `${stem}${i}`).join(' ')
const PLAN = {
  subtasks: Array.from({ length: 6 }, (_, i) => ({ id: `s${i + 1}`, description: `Check pump ${i + 1}`, dependencies: [] })),
}
/** The planner's reply (its JSON is ~60 tokens as the fake server counts them), then `--tokens` answers for the rest. */
const SCRIPT = {
  replies: [{ match: 'You break a goal into concrete', content: PLAN, repeat: true }],
  fallback: { content: words(TOKENS, 'w') },
  simulate: SIMULATE,
}

const planNode = (planner: string) => `  - name: make_plan
    uses: plan.decompose
    with: { goal: Check the pumps, strategy: flat, max_subtasks: 6, model: ${planner} }
`
const AGENTS: Record<string, (scheduler: boolean) => string> = {
  plan: (s) => `name: plan
settings: { llm: { model: ollama:worker-1b, scheduler: ${s} } }
nodes:
${planNode('ollama:planner-3b')}  - name: run
    uses: plan.execute
    with: { plan: "{{ state.plan }}", max_concurrent: 2 }
`,
  'plan-release': (s) => `name: plan-release
settings: { llm: { model: ollama:worker-1b, keep_alive: 0, scheduler: ${s} } }
nodes:
${planNode('ollama:planner-3b')}  - name: run
    uses: plan.execute
    with: { plan: "{{ state.plan }}", max_concurrent: 2 }
`,
  'plan-review': (s) => `name: plan-review
settings: { llm: { model: ollama:worker-1b, scheduler: ${s} } }
nodes:
${planNode('ollama:planner-3b')}  - name: run
    uses: plan.execute
    with:
      plan: "{{ state.plan }}"
      max_concurrent: 2
      subtask_executor:
        action: reason.self_correct
        with: { task: "{{ subtask.description }}", generator_model: ollama:worker-1b, critic_model: ollama:planner-3b, improvement_rounds: 1 }
`,
  'two-branches': (s) => `name: two-branches
settings: { llm: { scheduler: ${s} } }
nodes:
  - name: split
    run: "return { n: 0 }"
  - name: triage
    uses: llm.call
    with: { model: ollama:worker-1b, prompt: "Triage log line {{ state.n }}" }
  - name: triage_next
    run: "return { n: state.n + 1 }"
    goto: [{ if: "state.n < 6", to: triage }, { to: join }]
  - name: report
    uses: llm.call
    with: { model: ollama:planner-3b, prompt: "Write paragraph {{ state.n }} of the report" }
  - name: report_next
    run: "return { n: state.n + 1 }"
    goto: [{ if: "state.n < 6", to: report }, { to: join }]
  - name: join
    run: "return { done: true }"
edges:
  - from: split
    to: [triage, report]
    fan_in: join
`,
  'one-model': (s) => `name: one-model
settings: { llm: { model: ollama:worker-1b, scheduler: ${s} } }
nodes:
${planNode('ollama:worker-1b')}  - name: run
    uses: plan.execute
    with: { plan: "{{ state.plan }}", max_concurrent: 2 }
`,
}

interface Outcome {
  ms: number
  loads: number
  ok: boolean
}

async function once(dir: string, agent: string, scheduler: boolean): Promise<Outcome> {
  const file = join(dir, `${agent}-${scheduler}.yaml`)
  writeFileSync(file, AGENTS[agent]!(scheduler))
  const server = spawn(
    process.execPath,
    ['--import', 'tsx', join(root, 'test/support/fake-model-server.ts'), '--script', join(dir, 'script.json')],
    {
      cwd: root,
    },
  )
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = ''
      server.stdout.on('data', (d) => {
        out += d
        if (out.includes('\n')) resolve(out.split('\n')[0]!)
      })
      server.once('exit', (code) => reject(new Error(`fake model server exited (${code})`)))
    })
    const started = performance.now()
    const tea = spawn(process.execPath, [BUNDLE, 'run', file, '--quiet', '--data-dir', join(dir, '.tea')], {
      env: { ...process.env, OLLAMA_HOST: url },
    })
    let err = ''
    tea.stderr.on('data', (d) => (err += d))
    const code = await new Promise<number | null>((resolve) => tea.on('close', resolve))
    const ms = performance.now() - started
    if (code !== 0) process.stderr.write(`${agent} (scheduler ${scheduler}) exit ${code}: ${err.slice(0, 400)}\n`)
    const stats = (await (await fetch(`${url}/_simulation`)).json()) as { loads: string[] }
    if (process.argv.includes('--loads')) process.stderr.write(`${agent} scheduler ${scheduler}: ${stats.loads.join(' ')}\n`)
    return { ms, loads: stats.loads.length, ok: code === 0 }
  } finally {
    server.kill('SIGTERM')
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const s = (ms: number) => (ms / 1000).toFixed(2)

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'tea-schedule-'))
  writeFileSync(join(dir, 'script.json'), JSON.stringify(SCRIPT))
  console.log(
    `simulated server: load ${SIMULATE.loadMs} ms per model, ${SIMULATE.slots} slot, ${SIMULATE.maxLoaded} model resident, ${SIMULATE.tokensPerSecond} tokens/s; replies of ${TOKENS} tokens after the plan; ${RUNS} runs each, interleaved\n`,
  )
  console.log('| agent | scheduler off: median s (min–max) | loads | scheduler on: median s (min–max) | loads | speed-up |')
  console.log('| --- | --- | --- | --- | --- | --- |')
  try {
    for (const agent of Object.keys(AGENTS).filter((a) => !ONLY || a === ONLY)) {
      const off: Outcome[] = []
      const on: Outcome[] = []
      for (let i = 0; i < RUNS; i++) {
        off.push(await once(dir, agent, false))
        on.push(await once(dir, agent, true))
      }
      const cell = (xs: Outcome[]) => {
        const ms = xs.map((x) => x.ms)
        const failed = xs.filter((x) => !x.ok).length
        return `${s(median(ms))} (${s(Math.min(...ms))}–${s(Math.max(...ms))})${failed ? `, ${failed} failed` : ''} | ${median(xs.map((x) => x.loads))}`
      }
      const ratio = median(off.map((x) => x.ms)) / median(on.map((x) => x.ms))
      console.log(`| ${agent} | ${cell(off)} | ${cell(on)} | ${ratio.toFixed(2)}× |`)
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
