import { execFileSync } from 'node:child_process'
import { rmSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { tempDir } from '../support/temp-dir.ts'
import { bundleEnv } from '../e2e/cli.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

test('the pool works from a single CJS bundle: workers re-enter the bundle, timeouts kill, actions run', async () => {
  const dir = tempDir('tea-pool-bundle-')
  try {
    const { bundle } = (await import(pathToFileURL(path.join(root, 'scripts/build/bundle.mjs')).href)) as {
      bundle: (o: object) => Promise<unknown>
    }
    const outfile = path.join(dir, 'pool-test.cjs')
    // The same two-role entry as build.mjs: inside a tinypool worker the bundle is the worker module.
    const entry = [
      `if (!require('node:worker_threads').isMainThread && process.__tinypool_state__ && process.__tinypool_state__.isTinypoolWorker) {`,
      `  module.exports = require('./src/worker.ts')`,
      `} else {`,
      `  require('./src/sea/worker-hook.ts').installWorkerHook()`,
      `  require('./test/pool/fixtures/bundle-main.ts').main().catch((e) => { console.error(e); process.exitCode = 1 })`,
      `}`,
    ].join('\n')
    await bundle({
      root,
      entry,
      outfile,
      define: {
        __TEA_TARGET__: '"pool-test"',
        __TEA_VERSION__: '"0"',
        __FEATURE_PLANNING__: 'true',
        __FEATURE_REASONING__: 'true',
        __FEATURE_LLAMA__: 'false',
      },
      // Without llama.cpp, as a build of a target without the flag: node-llama-cpp and the GGUF provider are the
      // build's stand-ins (scripts/build/plugins.mjs llamaPlugin), not node_modules' ESM.
      target: { name: 'pool-test', features: { llama: false } },
    })
    const stdout = execFileSync(process.execPath, [outfile], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 30_000,
      env: bundleEnv({ TEA_CACHE_DIR: dir }),
    })
    const out = JSON.parse(stdout.trim().split('\n').at(-1)!)
    assert.equal(out.code, [2, 11, 1, { counter: 2 }])
    assert.is(out.timeout, 'POOL_ERROR')
    assert.is(out.after, 'still working')
    assert.equal(out.action, { content: 'echo hi', model: 'fake:m', usage: { prompt_tokens: 0, completion_tokens: 0 }, attempts: 1 })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test.run()
