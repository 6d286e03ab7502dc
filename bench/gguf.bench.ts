/**
 * GGUF models in the tea process (issue 30 item 7), with the tiny random-weight model (scripts/tiny-gguf.mjs:
 * llama architecture, 64-dim, 2 layers, 356 tokens, 0.5 MB f32). Its figures are the runtime's cost around a
 * model, not a real model's speed: a 0.5-1.5 B model's tokens cost 100-1000 times more compute.
 *
 * - load: a fresh process loads llama.cpp's addon (loadLlama), the model (mmap) and a 2048-token context, then the
 *   first reply: medians of `--runs` processes, and the process's peak RSS after a 200-token reply.
 * - tokens/s: a 200-token greedy reply (temperature 0: the tiny model never ends its turn), by thread count.
 * - per-call overhead: one-token replies through the same LlmClient, in-process (gguf:) and over Ollama's API to
 *   the fake model server (ollama:), 50 calls each after a warm-up: the median per call; and the same 20-node agent
 *   run through the engine on each (memory store, in-process), its wall time per call.
 * - start-up of a `tea run` that uses no GGUF model (a one-node `run:` agent): the bundle when it is built
 *   (dist/linux-x64/tea.cjs), and from source; node-llama-cpp is not imported by such a run (checked).
 *
 *   npx tsx bench/gguf.bench.ts [--runs 5]
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { median } from './measure.ts'

const root = join(import.meta.dirname, '..')
const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name)
  return i === -1 ? undefined : process.argv[i + 1]
}
const RUNS = Number(arg('--runs') ?? 5)
const messages = [{ role: 'user' as const, content: 'Say something.' }]

if (process.argv[2] === '--child') await child(process.argv[3]!, Number(process.argv[4]))
else await main()

/** One fresh process's figures: load times, the first reply, tokens/s at `threads`, peak RSS. */
async function child(model: string, threads: number): Promise<void> {
  const t0 = performance.now()
  const { loadLlama } = await import('../src/llm/gguf/addon.ts')
  await loadLlama()
  const addon = performance.now() - t0
  const { createLlmClient } = await import('../src/llm/client.ts')
  const llm = createLlmClient({ env: {}, defaults: { model: `gguf:${model}`, threads, temperature: 0 } })
  const t1 = performance.now()
  await llm.call({ messages, max_tokens: 1 })
  const first = performance.now() - t1
  const t2 = performance.now()
  const r = await llm.call({ messages: [{ role: 'user', content: 'Talk.' }], max_tokens: 200 })
  const seconds = (performance.now() - t2) / 1000
  const out = {
    addon,
    first,
    tokensPerSecond: r.usage.completion_tokens / seconds,
    tokens: r.usage.completion_tokens,
    rssMiB: process.resourceUsage().maxRSS / 1024,
  }
  process.stdout.write(`${JSON.stringify(out)}\n`)
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'tea-gguf-bench-'))
  const model = join(dir, 'tiny.gguf')
  execFileSync(process.execPath, [join(root, 'scripts/tiny-gguf.mjs'), model])
  const rows: string[] = []
  for (const threads of [1, 2]) {
    const runs = Array.from({ length: RUNS }, () => {
      const r = spawnSync(
        process.execPath,
        ['--import', 'tsx', join(import.meta.dirname, 'gguf.bench.ts'), '--child', model, String(threads)],
        {
          cwd: root,
          encoding: 'utf8',
        },
      )
      if (r.status !== 0) throw new Error(r.stderr)
      return JSON.parse(r.stdout.trim().split('\n').pop()!) as {
        addon: number
        first: number
        tokensPerSecond: number
        tokens: number
        rssMiB: number
      }
    })
    const m = (f: (x: (typeof runs)[number]) => number) => median(runs.map(f))
    rows.push(
      `| ${threads} | ${m((x) => x.addon).toFixed(0)} ms | ${m((x) => x.first).toFixed(0)} ms | ${m((x) => x.tokensPerSecond).toFixed(0)} | ${m((x) => x.rssMiB).toFixed(0)} MiB |`,
    )
  }
  console.log(`### Load, speed and memory: the tiny model, ${RUNS} fresh processes each (medians)\n`)
  console.log('| threads | addon load | model + context load, first 1-token reply | tokens/s (200-token reply) | peak RSS |')
  console.log('|---|---|---|---|---|')
  console.log(rows.join('\n'))

  console.log('\n### Per-call overhead: 1-token replies through the same client, 50 calls after a warm-up (median per call)\n')
  const { createLlmClient } = await import('../src/llm/client.ts')
  const { startFakeModelServer } = await import('../test/support/fake-model-server.ts')
  const server = await startFakeModelServer()
  server.fallback({ content: 'ok' })
  const timeCalls = async (llm: ReturnType<typeof createLlmClient>): Promise<number> => {
    await llm.call({ messages, max_tokens: 1 })
    const each: number[] = []
    for (let i = 0; i < 50; i++) {
      const t = performance.now()
      await llm.call({ messages, max_tokens: 1 })
      each.push(performance.now() - t)
    }
    return median(each)
  }
  const inProcess = await timeCalls(createLlmClient({ env: {}, defaults: { model: `gguf:${model}`, threads: 1, temperature: 0 } }))
  const overHttp = await timeCalls(createLlmClient({ env: { OLLAMA_HOST: server.url }, defaults: { model: 'ollama:tiny' } }))
  // The same agent (20 llm.call nodes, one token each) run through the engine, in-process: its wall time per call.
  const { loadAgentText } = await import('../src/agent/load.ts')
  const { lazyRegistry } = await import('../src/catalog.ts')
  const { startRun } = await import('../src/engine/lifecycle.ts')
  const { createMemoryStore } = await import('../src/store/memory-store.ts')
  const registry = lazyRegistry()
  await registry.load()
  const agentText = (m: string) =>
    `name: calls\nsettings:\n  llm: { model: "${m}", threads: 1, temperature: 0, max_tokens: 1 }\nnodes:\n${Array.from({ length: 20 }, (_, i) => `  - name: n${i}\n    uses: llm.call\n    with: { prompt: "Say something." }\n`).join('')}`
  const perCallInRun = async (m: string, env: NodeJS.ProcessEnv): Promise<number> => {
    const { spec } = loadAgentText(agentText(m), join(dir, 'calls.yaml'), registry)
    const times: number[] = []
    for (let i = 0; i < RUNS + 1; i++) {
      const llm = createLlmClient({ env, defaults: spec!.settings.llm })
      const t = performance.now()
      const r = await startRun(spec!, { store: createMemoryStore(), registry, llm }, { runId: `r${i}` })
      if (r.status !== 'completed') throw new Error(JSON.stringify(r.error))
      if (i > 0) times.push((performance.now() - t) / 20)
    }
    return median(times)
  }
  const runGguf = await perCallInRun(`gguf:${model}`, {})
  const runOllama = await perCallInRun('ollama:tiny', { OLLAMA_HOST: server.url })
  await server.close()
  console.log('| model | per call, client alone | per call, in a 20-node run |')
  console.log('|---|---|---|')
  console.log(`| gguf: in the process (prompt cached, 1 token computed) | ${inProcess.toFixed(2)} ms | ${runGguf.toFixed(2)} ms |`)
  console.log(`| ollama: the fake server over HTTP (no compute) | ${overHttp.toFixed(2)} ms | ${runOllama.toFixed(2)} ms |`)

  console.log(`\n### Start-up of a tea run that uses no GGUF model (a one-node run: agent, ${RUNS * 2} runs, median)\n`)
  writeFileSync(join(dir, 'plain.yaml'), 'name: plain\nnodes:\n  - name: a\n    run: "return { ok: true }"\n')
  const bundle = join(root, 'dist/linux-x64/tea.cjs')
  const startup = (args: string[]): number =>
    median(
      Array.from({ length: RUNS * 2 }, () => {
        const t = performance.now()
        const r = spawnSync(process.execPath, [...args, 'run', join(dir, 'plain.yaml'), '--data-dir', join(dir, 'data'), '-q'], {
          cwd: root,
        })
        if (r.status !== 0) throw new Error(String(r.stderr))
        return performance.now() - t
      }),
    )
  console.log('| tea | wall time |')
  console.log('|---|---|')
  if (existsSync(bundle)) console.log(`| bundle (dist/linux-x64/tea.cjs) | ${startup([bundle]).toFixed(0)} ms |`)
  console.log(`| source (tsx) | ${startup(['--import', 'tsx', join(root, 'src/cli/bin.ts')]).toFixed(0)} ms |`)
  // The run must not import node-llama-cpp: a resolve hook (module.register) notes every specifier that names it.
  const seen = join(dir, 'llama-imports.txt')
  writeFileSync(
    join(dir, 'hooks.mjs'),
    `import { appendFileSync } from 'node:fs'\nexport async function resolve(s, c, next) { if (s.includes('node-llama-cpp')) appendFileSync(${JSON.stringify(seen)}, s + '\\n'); return next(s, c) }\n`,
  )
  writeFileSync(
    join(dir, 'register.mjs'),
    `import { register } from 'node:module'\nregister(${JSON.stringify(`file://${join(dir, 'hooks.mjs')}`)})\n`,
  )
  const args = (run: string) => [
    '--import',
    join(dir, 'register.mjs'),
    '--import',
    'tsx',
    join(root, 'src/cli/bin.ts'),
    'run',
    join(dir, run),
    '--data-dir',
    join(dir, 'data'),
    '-q',
  ]
  spawnSync(process.execPath, args('plain.yaml'), { cwd: root })
  const plain = existsSync(seen)
  writeFileSync(
    join(dir, 'tiny.yaml'),
    `name: t\nsettings: { llm: { model: "gguf:${model}", threads: 1 } }\nnodes:\n  - name: a\n    uses: llm.call\n    with: { prompt: hi, max_tokens: 1 }\n`,
  )
  spawnSync(process.execPath, args('tiny.yaml'), { cwd: root })
  console.log(
    `\nnode-llama-cpp imported by that run: ${plain ? 'YES (a regression)' : 'no'}; by a run with a gguf: model: ${existsSync(seen) ? 'yes' : 'NO (the hook saw nothing: the check is void)'}`,
  )
  rmSync(dir, { recursive: true, force: true })
}
