/**
 * What MCP costs (issue 32), in three parts:
 *   size   the bytes of the linux-x64 bundle that only the MCP modules reach: the SDK and what only it imports, and
 *          tea's own MCP modules (the esbuild metafile's import graph, with and without the MCP modules' imports).
 *   call   median µs of one tools.mcp call to a server already running (test/support/mcp-server.mjs `echo`), over
 *          stdio and over streamable HTTP, beside the built-in json.parse on the same input, in-process.
 *   start  (--bundle) wall ms of `tea run` through the built bundle: an agent of one built-in node against the
 *          same agent calling one MCP tool (the SDK loaded, the server started, the call, the server stopped), in
 *          shuffled rounds.
 *          With --before BUNDLE, also `tea run` of a 3-node agent without MCP through both bundles, in the same rounds.
 * Run: npx tsx bench/mcp.bench.ts [--bundle dist/linux-x64/tea.cjs [--before OTHER/tea.cjs]] [--rounds 15]
 */

import { execFileSync, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
// @ts-expect-error plain JavaScript build script without type declarations
import { buildTarget } from '../build.mjs'
import { jsonParse } from '../src/actions/json/parse.ts'
import { toolsMcp } from '../src/actions/tools/mcp/action.ts'
import { closeMcpServers } from '../src/actions/tools/mcp/servers.ts'
import type { ActionContext } from '../src/actions/types.ts'

const root = resolve(import.meta.dirname, '..')
const SERVER = join(root, 'test/support/mcp-server.mjs')
const args = process.argv.slice(2)
const opt = (name: string): string | undefined => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined)
const ROUNDS = Number(opt('--rounds') ?? 15)

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}
const range = (xs: number[]): string => `${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)}`

/** Bytes in the bundle of the modules reachable from the entry only through the MCP modules. */
async function size(): Promise<void> {
  // Built outside the tree: the build copies the language runtimes beside the bundle, which the linters would read.
  const out = mkdtempSync(join(tmpdir(), 'tea-bench-mcp-size-'))
  const r = (await buildTarget('linux-x64', { quiet: true, metafile: true, outfile: join(out, 'tea.cjs') }).finally(() =>
    rmSync(out, { recursive: true, force: true }),
  )) as {
    size: number
    metafile: {
      inputs: Record<string, { imports: Array<{ path: string }> }>
      outputs: Record<string, { inputs: Record<string, { bytesInOutput: number }>; entryPoint?: string }>
    }
  }
  const output = Object.values(r.metafile.outputs)[0]!
  const bytes = (files: Iterable<string>): number => [...files].reduce((a, f) => a + (output.inputs[f]?.bytesInOutput ?? 0), 0)
  const mcpModule = (f: string): boolean =>
    f.startsWith('src/actions/tools/mcp/') || f.startsWith('src/cli/mcp/') || f === 'src/cli/mcp.ts' || f === 'src/cli/serve/mcp-route.ts'
  const reach = (skip: (f: string) => boolean): Set<string> => {
    const seen = new Set<string>()
    const roots = Object.keys(r.metafile.inputs).filter(
      (f) => !Object.values(r.metafile.inputs).some((i) => i.imports.some((x) => x.path === f)),
    )
    const visit = (f: string): void => {
      if (seen.has(f) || skip(f)) return
      seen.add(f)
      for (const i of r.metafile.inputs[f]?.imports ?? []) visit(i.path)
    }
    roots.forEach(visit)
    return seen
  }
  const all = reach(() => false)
  const without = reach(mcpModule)
  const only = [...all].filter((f) => !without.has(f))
  const sdk = only.filter((f) => f.includes('node_modules/'))
  const byPackage = new Map<string, number>()
  for (const f of sdk) {
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(f)![1]!
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + bytes([f]))
  }
  console.log(`bundle (linux-x64, this tree): ${r.size} bytes`)
  console.log(`only the MCP modules reach: ${bytes(only)} bytes (${((bytes(only) / r.size) * 100).toFixed(1)} %)`)
  console.log(`  tea's MCP modules: ${bytes(only.filter((f) => !f.includes('node_modules/')))} bytes`)
  for (const [pkg, n] of [...byPackage].sort((a, b) => b[1] - a[1])) console.log(`  ${pkg}: ${n} bytes`)
}

function context(servers: Record<string, unknown>): ActionContext {
  return {
    settings: { sections: { mcp: { servers } }, http_allow: ['127.0.0.1'] },
    signal: new AbortController().signal,
  } as unknown as ActionContext
}

/** Median µs per call over ROUNDS rounds of `per` calls. */
async function perCall(call: () => Promise<unknown>, per = 200): Promise<number[]> {
  for (let i = 0; i < 20; i++) await call() // warm: the server started, the code optimised
  const rounds: number[] = []
  for (let r = 0; r < ROUNDS; r++) {
    const start = performance.now()
    for (let i = 0; i < per; i++) await call()
    rounds.push(((performance.now() - start) * 1000) / per)
  }
  return rounds
}

async function calls(): Promise<void> {
  const http = spawn(process.execPath, [SERVER, '--http'], { stdio: ['ignore', 'pipe', 'inherit'] })
  try {
    let text = ''
    http.stdout!.setEncoding('utf8')
    while (!/port (\d+)\n/.test(text)) text += ((await once(http.stdout!, 'data')) as [string])[0]
    const url = `http://127.0.0.1:${/port (\d+)/.exec(text)![1]}/mcp`
    const ctx = context({ s: { command: process.execPath, args: [SERVER] }, h: { url } })
    const rows: Array<[string, number[]]> = [
      ['json.parse (built-in)', await perCall(async () => jsonParse.run({ text: '{"text":"hello"}' } as never, ctx))],
      ['tools.mcp echo, stdio', await perCall(async () => toolsMcp.run({ server: 's', tool: 'echo', text: 'hello' } as never, ctx))],
      [
        'tools.mcp echo, streamable HTTP',
        await perCall(async () => toolsMcp.run({ server: 'h', tool: 'echo', text: 'hello' } as never, ctx), 50),
      ],
    ]
    console.log(`\n| call (server running) | µs per call, median of ${ROUNDS} rounds | min–max |`)
    console.log('| --- | --- | --- |')
    for (const [name, xs] of rows) console.log(`| ${name} | ${median(xs).toFixed(1)} | ${range(xs)} |`)
  } finally {
    await closeMcpServers()
    http.kill()
  }
}

function start(bundle: string, before?: string): void {
  const dir = mkdtempSync(join(tmpdir(), 'tea-bench-mcp-'))
  try {
    const agent = (name: string, node: string) => {
      writeFileSync(
        join(dir, `${name}.yaml`),
        `name: ${name}\nsettings:\n  mcp:\n    servers:\n      s: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(SERVER)}] }\nnodes:\n${node}`,
      )
      return join(dir, `${name}.yaml`)
    }
    const plain = agent('plain', '  - name: a\n    uses: json.parse\n    with: { text: \'{"text":"hello"}\' }\n')
    const mcp = agent('mcp', '  - name: a\n    uses: tools.mcp\n    with: { server: s, tool: echo, text: hello }\n')
    const time = (file: string): number => {
      const t = performance.now()
      execFileSync(process.execPath, [bundle, 'run', file, '-q', '--data-dir', join(dir, 'data')], { stdio: 'ignore' })
      return performance.now() - t
    }
    const rows: Record<string, number[]> = { plain: [], mcp: [] }
    time(plain)
    time(mcp)
    for (let r = 0; r < ROUNDS; r++)
      for (const [name, file] of Math.random() < 0.5
        ? ([
            ['plain', plain],
            ['mcp', mcp],
          ] as const)
        : ([
            ['mcp', mcp],
            ['plain', plain],
          ] as const))
        rows[name]!.push(time(file))
    console.log(`\n| tea run (bundle on Node ${process.version}) | ms, median of ${ROUNDS} | min–max |`)
    console.log('| --- | --- | --- |')
    console.log(`| one json.parse node | ${median(rows.plain!).toFixed(1)} | ${range(rows.plain!)} |`)
    console.log(`| one tools.mcp node (SDK loaded, server started and stopped) | ${median(rows.mcp!).toFixed(1)} | ${range(rows.mcp!)} |`)
    if (before) {
      // The start of an agent that uses no MCP, this bundle against one built without it: what carrying the SDK costs.
      const three = join(dir, 'three.yaml')
      writeFileSync(three, `name: three\nnodes:\n${['a', 'b', 'c'].map((n) => `  - name: ${n}\n    run: "return { ${n}: 1 }"\n`).join('')}`)
      const run = (b: string): number => {
        const t = performance.now()
        execFileSync(process.execPath, [b, 'run', three, '-q', '--data-dir', join(dir, 'data')], { stdio: 'ignore' })
        return performance.now() - t
      }
      const runs: Record<string, number[]> = { after: [], before: [] }
      run(bundle)
      run(before)
      for (let r = 0; r < ROUNDS; r++)
        for (const [name, b] of Math.random() < 0.5
          ? ([
              ['after', bundle],
              ['before', before],
            ] as const)
          : ([
              ['before', before],
              ['after', bundle],
            ] as const))
          runs[name]!.push(run(b))
      console.log(`| three.yaml (3 run: nodes), this bundle | ${median(runs.after!).toFixed(1)} | ${range(runs.after!)} |`)
      console.log(`| three.yaml, the bundle given with --before | ${median(runs.before!).toFixed(1)} | ${range(runs.before!)} |`)
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

async function main(): Promise<void> {
  console.log(`load average: ${execFileSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).trim()}`)
  await size()
  await calls()
  const bundle = opt('--bundle')
  const before = opt('--before')
  if (bundle) start(resolve(bundle), before && resolve(before))
}

await main()
