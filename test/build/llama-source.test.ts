import { spawnSync } from 'node:child_process'
import { symlinkSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
// @ts-expect-error plain JavaScript build script without type declarations
import { builtFromSource } from '../../scripts/build/llama-source.mjs'
import { tempDir } from '../support/temp-dir.ts'

// Issue 30 item 3: armv7's llama.cpp is compiled from the source node-llama-cpp ships (scripts/build/llama-source.mjs),
// since its npm armv7 package carries AArch64 files. What it builds is run by test/e2e/sea-gguf.test.ts in the armv7
// executable under qemu; here, what a machine without the cross compiler is told.
const root = resolve('.')

test('issue 30 item 3: only armv7 is compiled from source; x64 and arm64 take their npm packages', () => {
  assert.equal(
    ['x64', 'arm64', 'arm'].map((arch) => builtFromSource(arch)),
    [false, false, true],
  )
})

test('issue 30 item 3: without the cross compiler the armv7 build stops and names the Debian packages to install', () => {
  // A PATH with node, cmake and git, and no arm-linux-gnueabihf-*: nothing is cloned or compiled.
  const bin = tempDir('tea-llama-source-')
  for (const tool of ['node', 'cmake', 'git']) {
    const found = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim()
    if (found) symlinkSync(found, join(bin, tool))
  }
  const r = spawnSync(process.execPath, [join(root, 'scripts', 'build', 'llama-source.mjs')], {
    encoding: 'utf8',
    env: { PATH: bin, HOME: bin, TEA_BUILD_CACHE: join(bin, 'cache') },
    timeout: 60_000,
  })
  assert.is(r.status, 1, r.stderr)
  assert.match(r.stderr, "armv7's llama.cpp is compiled from node-llama-cpp's source")
  assert.match(r.stderr, 'arm-linux-gnueabihf-g++ (Debian package g++-arm-linux-gnueabihf)')
  assert.match(r.stderr, 'apt-get install g++-arm-linux-gnueabihf')
  assert.match(r.stderr, 'bash .ci/install-sea-deps.sh')
  assert.not.match(r.stderr, /\n\s+at /, 'a stack trace')
  assert.is(r.stdout, '')
})

test.run()
