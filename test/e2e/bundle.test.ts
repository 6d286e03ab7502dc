import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
// @ts-expect-error plain JavaScript build script without type declarations
import { buildTarget } from '../../build.mjs'
import { tempDir } from '../support/temp-dir.ts'
import { bundleEnv } from './cli.ts'

// Build-time feature flags really remove code: the core target (planning, reasoning, prolog, lua and python off) is built next to the
// full arm64 target and compared by the modules esbuild put in, by distinctive strings, and by size.
const tmp = tempDir('tea-bundle-test-')
test.after(() => rmSync(tmp, { recursive: true, force: true }))

interface Built {
  file: string
  size: number
  text: string
  inputs: string[]
}
const built: Record<string, Built> = {}

async function build(name: string): Promise<Built> {
  const r = await buildTarget(name, { quiet: true, metafile: true, outfile: join(tmp, name, 'tea.cjs') })
  const out = Object.values(r.metafile.outputs)[0] as { inputs: Record<string, unknown> }
  return { file: r.outfile, size: r.size, text: readFileSync(r.outfile, 'utf8'), inputs: Object.keys(out.inputs) }
}

test.before(async () => {
  built.full = await build('linux-arm64')
  built.core = await build('linux-arm64-core')
})

const featureModules = (b: Built): string[] => b.inputs.filter((f) => /^src\/(planning|reasoning|prolog|lua|python)\//.test(f))
const hasSources = (dir: string): boolean => {
  try {
    return readdirSync(join('src', dir)).some((f) => f.endsWith('.ts'))
  } catch {
    return false
  }
}

test('the full target bundles the planning, reasoning, prolog, lua and python modules that exist in src/', () => {
  for (const feature of ['planning', 'reasoning', 'prolog', 'lua', 'python']) {
    if (!hasSources(feature)) continue
    assert.ok(
      built.full!.inputs.some((f) => f.startsWith(`src/${feature}/`)),
      `no src/${feature}/ module in the full bundle`,
    )
  }
})

test('the core target (planning, reasoning, prolog, lua and python off) contains no module of theirs', () => {
  assert.equal(featureModules(built.core!), [])
})

test('the Prolog, Lua and Python engines travel beside the full bundle only: the core target carries no engine at all', () => {
  for (const f of [
    'prolog/swipl-web.js',
    'prolog/swipl-web.wasm',
    'prolog/swipl-web.data',
    'lua/index.cjs',
    'lua/glue.wasm',
    'python/pyodide.cjs',
    'python/pyodide.asm.wasm',
    'python/python_stdlib.zip',
  ]) {
    assert.ok(existsSync(join(dirname(built.full!.file), f)), `${f} beside the full bundle`)
    assert.not.ok(existsSync(join(dirname(built.core!.file), f)), `${f} beside the core bundle`)
  }
  for (const s of ['swipl', 'SWIPL', 'tea_run(', 'prolog.run', 'wasmoon', 'lua.run', 'LuaFactory', 'pyodide', 'python.run']) {
    assert.not.ok(built.core!.text.includes(s), `'${s}' in the core bundle`)
  }
})

test("issue 30 item 3: llama.cpp travels beside the full bundle (node-llama-cpp's JavaScript apart, the arm64 addon and its libraries); the core target carries none of it", () => {
  const full = join(dirname(built.full!.file), 'llama')
  const names = readdirSync(full)
  for (const f of ['llama.cjs', 'llama-addon.node', '_nlcBuildMetadata.json', 'libllama.v0.4.0.so', 'libggml-base.so'])
    assert.ok(names.includes(f), `${f} in llama/ beside the full bundle`)
  // The arm64 build's files are AArch64 ELF (e_machine 183), stripped: no .symtab section name left in them.
  const addon = readFileSync(join(full, 'llama-addon.node'))
  assert.is(addon.readUInt16LE(18), 183)
  assert.not.ok(addon.includes('.symtab'), 'the addon is stripped')
  assert.not.ok(existsSync(join(dirname(built.core!.file), 'llama')), 'llama/ beside the core bundle')
  // The program carries none of node-llama-cpp's JavaScript (it is llama/llama.cjs, loaded at the first gguf: model).
  assert.equal(
    built.full!.inputs.filter((f) => f.includes('node_modules/node-llama-cpp') || f.includes('node_modules/@node-llama-cpp')),
    [],
  )
  const js = readFileSync(join(full, 'llama.cjs'), 'utf8')
  assert.ok(js.includes('llama-addon.node'), 'llama.cjs loads the addon beside itself')
  for (const cli of ['simple-git', 'cmake-js', 'ipull', 'yargs'])
    assert.not.ok(js.includes(`require("${cli}")`), `llama.cjs requires ${cli}`)
})

test('issue 30 item 3: the core bundle has no trace of node-llama-cpp, the llama runtime or the GGUF provider', () => {
  // Only the provider's stand-in (its functions fail naming the builds that have GGUF models: plugins.mjs) and the
  // model path helper the client resolves `gguf:` names with.
  assert.equal(
    built.core!.inputs.filter((f) => /node-llama-cpp|src\/llm\/gguf\/|src\/sea\/llama-runtime|src\/llama\//.test(f)),
    ['src/llm/gguf/provider.ts', 'src/llm/gguf/path.ts'].filter((f) => built.core!.inputs.includes(f)),
  )
  for (const s of ['node-llama-cpp', 'llama-addon', 'llama.cjs', 'getLlama', 'LlamaChat', 'llama.cpp:'])
    assert.not.ok(built.core!.text.includes(s), `'${s}' in the core bundle`)
  assert.ok(built.core!.text.includes("lacks the 'llama' feature"), "the core bundle's gguf: models fail naming the feature")
  assert.ok(built.full!.text.includes('llama.cpp:'), 'the full bundle has the addon loader')
})

test('no distinctive planning or reasoning string survives in the core bundle', () => {
  const strings = [
    'plan.decompose',
    'plan.execute',
    // (not 'plan.replan': the TEA dialect, in every build, sets aside two parameters TEA's plan.replan never reads)
    'max_replans',
    'reason.cot',
    'reason.react',
    'reason.self_correct',
    'reason.decompose',
    // (not 'prolog.query': validate.extraction, in every build, calls it by name and says when the build lacks it)
    'tea_goal_name',
    'tea_returns',
    'json.decode(state_json)',
    '_MISSING = {', // the Python glue's stand-ins (node's stream errors say ERR_MISSING_ARGS)
  ]
  const inFull = strings.filter((s) => built.full!.text.includes(s))
  assert.ok(inFull.length > 0, 'the full bundle should carry the plan.*/reason.* action names')
  assert.equal(
    strings.filter((s) => built.core!.text.includes(s)),
    [],
  )
})

test('the core bundle is measurably smaller than the full one (at least 5%)', () => {
  const { full, core } = built
  assert.ok(core!.size < full!.size * 0.95, `core ${core!.size} B vs full ${full!.size} B`)
})

test('each bundle reports its own target and features, with any Node on the host', () => {
  for (const [name, b, features] of [
    ['linux-arm64', built.full!, 'planning, reasoning, prolog, lua, python, fleet, llama'],
    ['linux-arm64-core', built.core!, 'none'],
  ] as const) {
    const r = spawnSync(process.execPath, [b.file, '--version'], { encoding: 'utf8', timeout: 30_000, env: bundleEnv() })
    assert.is(r.status, 0, r.stderr)
    assert.match(r.stdout, `(${name}; features: ${features};`)
  }
})

test('a bundle copied away from node_modules still answers --version: lmdb loads only when a store opens', () => {
  const away = join(tmp, 'away')
  const r0 = spawnSync('cp', [built.core!.file, join(tmp, 'tea-away.cjs')])
  assert.is(r0.status, 0)
  const r = spawnSync(process.execPath, [join(tmp, 'tea-away.cjs'), '--version'], {
    cwd: tmp,
    encoding: 'utf8',
    timeout: 30_000,
    env: { PATH: process.env.PATH ?? '', HOME: away, NODE_V8_COVERAGE: '' }, // empty: bundleEnv in cli.ts says why
  })
  assert.is(r.status, 0, r.stderr)
  assert.match(r.stdout, '(linux-arm64-core; features: none;')
})

test.run()
