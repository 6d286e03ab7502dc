import { execFileSync, spawnSync } from 'node:child_process'
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
// @ts-expect-error plain JavaScript build script without type declarations
import { importedNames, llamaJs, prebuiltFiles } from '../../scripts/build/llama.mjs'
import { tempDir } from '../support/temp-dir.ts'

// Issue 30 item 3: what a build with the llama flag carries (scripts/build/llama.mjs): node-llama-cpp's JavaScript
// bundled apart, without its CLI and build-from-source path, loading the prebuilt addon from its own folder; and
// the prebuilt files of the target's arch, each checked to be built for it.
const root = resolve('.')
const tmp = tempDir('tea-llama-build-')
test.after(() => rmSync(tmp, { recursive: true, force: true }))

const elfMachine = (file: string): number => readFileSync(file).readUInt16LE(18)

test('issue 30 item 3: the x64 and arm64 prebuilt files are ELF of their arch, with the addon and its libraries', () => {
  for (const [arch, machine] of [
    ['x64', 62],
    ['arm64', 183],
  ] as const) {
    const files = prebuiltFiles(root, arch) as Record<string, string>
    for (const f of ['llama-addon.node', 'libllama.v0.4.0.so', 'libggml-base.so', '_nlcBuildMetadata.json'])
      assert.ok(f in files, `${arch}: ${f}`)
    for (const [name, file] of Object.entries(files)) if (!name.endsWith('.json')) assert.is(elfMachine(file), machine, `${arch} ${name}`)
  }
})

test("issue 30 item 3: the armv7l package on npm carries another arch's binaries, and the build refuses it", () => {
  // Every @node-llama-cpp/linux-armv7l release so far (3.1.1 to 3.22.1) holds x86-64 or AArch64 files. When one
  // holds ARM (32-bit) files, this fails: turn the llama flag on for targets/linux-armv7.json then.
  try {
    prebuiltFiles(root, 'arm')
    assert.unreachable('the armv7l prebuilt package was accepted')
  } catch (e) {
    assert.match((e as Error).message, /is not built for arm \(ELF machine (62|183), class 2; want 40, class 1\)/)
    assert.match((e as Error).message, 'turn the llama flag off for this target')
  }
})

test('issue 30 item 3: llama.cjs exports what src/llm/gguf imports and carries none of the CLI or build-from-source packages', async () => {
  const names = importedNames(root) as string[]
  assert.ok(names.includes('getLlama'), names.join(', '))
  const js = await llamaJs(root)
  const packages = Object.keys(js.packages)
  for (const cli of ['yargs', 'cmake-js', 'simple-git', 'ipull', 'ora', 'which', 'cross-spawn', 'proper-lockfile', '@reflink/reflink'])
    assert.not.ok(packages.includes(cli), `${cli} is in llama.cjs`)
  assert.equal(
    packages.filter((p) => p.startsWith('@node-llama-cpp/')),
    [],
  )
  assert.ok(js.text.length < 1_000_000, `llama.cjs is ${js.text.length} bytes`)
})

test('issue 30 item 3: llama.cjs in a folder with the x64 addon loads it from there and runs the tiny model (no node_modules)', async () => {
  const js = await llamaJs(root)
  const dir = join(tmp, 'llama')
  execFileSync('mkdir', ['-p', dir])
  writeFileSync(join(dir, 'llama.cjs'), js.text)
  for (const [name, file] of Object.entries(prebuiltFiles(root, 'x64') as Record<string, string>)) copyFileSync(file, join(dir, name))
  const model = join(tmp, 'tiny.gguf')
  execFileSync(process.execPath, [join(root, 'scripts', 'tiny-gguf.mjs'), model])
  const probe = join(tmp, 'probe.cjs')
  writeFileSync(
    probe,
    [
      `const m = require(${JSON.stringify(join(dir, 'llama.cjs'))})`,
      ';(async () => {',
      "  const llama = await m.getLlama({ build: 'never', gpu: false, logLevel: 'error', logger: () => {} })",
      `  const model = await llama.loadModel({ modelPath: ${JSON.stringify(model)} })`,
      '  const ctx = await model.createContext({ contextSize: 256, threads: 1 })',
      '  let n = 0',
      "  for await (const t of ctx.getSequence().evaluate(model.tokenize('hi'), { temperature: 0 })) if (++n >= 4) break",
      '  console.log(JSON.stringify({ binding: llama.buildType, n }))',
      '  await llama.dispose()',
      '})()',
    ].join('\n'),
  )
  // A fresh process away from the checkout: the addon must come from the folder, not from node_modules.
  const out = execFileSync(process.execPath, [probe], { cwd: tmp, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: tmp } })
  assert.equal(JSON.parse(out.trim().split('\n').at(-1)!), { binding: 'prebuilt', n: 4 })
  // Only the carried CPU build: asking for a GPU is refused, never a download or a build.
  const gpu = spawnSync(
    process.execPath,
    [
      '-e',
      `require(${JSON.stringify(join(dir, 'llama.cjs'))}).getLlama({ gpu: 'cuda' }).catch((e) => { console.error(e.message); process.exit(3) })`,
    ],
    { encoding: 'utf8' },
  )
  assert.is(gpu.status, 3)
  assert.match(gpu.stderr, "tea carries llama.cpp's CPU build only")
})

test.run()
