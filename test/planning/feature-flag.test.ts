/**
 * The feature flags (planning AC8, reasoning AC8): a target built with `planning: false` and `reasoning: false`
 * (linux-arm64-core) carries no planning or reasoning code — not even the JSON Schema validator only reasoning
 * uses — is smaller, lists no plan.* or reason.* action, and refuses an agent using one at load time, naming the
 * missing feature; the full build runs a reasoning agent end to end. Builds the core and full bundles once.
 */

import { spawn, spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { bundleEnv, ROOT } from '../e2e/cli.ts'
import { startFakeModelServer } from '../support/fake-model-server.ts'
import { tempDir } from '../support/temp-dir.ts'

// Text only planning code contains (prompts, messages): if any of it is in a bundle, planning is in it.
const PLANNING_MARKERS = [
  'You break a goal into',
  'dependency cycle: ',
  'You revise a plan after a failure',
  'fill:#bbdefb',
  'too many replans',
]

type BuildTarget = (name: string, opts: { quiet: boolean; outfile: string }) => Promise<{ outfile: string; size: number }>

function run(bundle: string, args: string[], cwd: string) {
  const r = spawnSync(process.execPath, [bundle, ...args], {
    cwd,
    encoding: 'utf8',
    timeout: 30_000,
    env: bundleEnv({ TEA_DATA_DIR: path.join(cwd, 'data') }),
  })
  return { code: r.status, out: r.stdout, err: r.stderr }
}

// Text only reasoning code contains (prompts, messages, its validator's messages).
const REASONING_MARKERS = [
  'You reach a goal in steps',
  'Reason as a tree',
  'You judge whether an output meets',
  'is not a tool name; nothing was run',
  'Instance does not have required property',
]

/** Like run, without blocking this process (the fake model server lives in it). */
function runAsync(bundle: string, args: string[], cwd: string, env: Record<string, string>) {
  return new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
    const child = spawn(process.execPath, [bundle, ...args], {
      cwd,
      env: bundleEnv({ TEA_DATA_DIR: path.join(cwd, 'data'), ...env }),
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    child.on('close', (code) => resolve({ code, out, err }))
  })
}

test('001.3R-INT-017 / 001.3R-INT-018 / 001.3R-E2E-004 / 001.4R-INT-016 / 001.4R-INT-018 / 001.4R-E2E-006 a build without planning and reasoning has the code and actions of neither, is smaller, and names the missing feature', async () => {
  // Under dist/ (ignored by git) rather than the OS temp dir: a bundle finds lmdb's native addon in the
  // node_modules above it.
  mkdirSync(path.join(ROOT, 'dist'), { recursive: true })
  const dir = tempDir('test-feature-flag-', path.join(ROOT, 'dist'))
  try {
    const { buildTarget } = (await import(pathToFileURL(path.join(ROOT, 'build.mjs')).href)) as { buildTarget: BuildTarget }
    const full = await buildTarget('linux-x64', { quiet: true, outfile: path.join(dir, 'full', 'tea.cjs') })
    const core = await buildTarget('linux-arm64-core', { quiet: true, outfile: path.join(dir, 'core', 'tea.cjs') })
    const fullActions = run(full.outfile, ['actions', '--json'], dir)
    assert.match(
      fullActions.out,
      '"plan.execute"',
      `the full bundle must list plan.* actions: ${fullActions.code} ${fullActions.err.slice(0, 300)}`,
    )
    const fullText = readFileSync(full.outfile, 'utf8')
    const coreText = readFileSync(core.outfile, 'utf8')
    for (const marker of [...PLANNING_MARKERS, ...REASONING_MARKERS]) {
      assert.ok(fullText.includes(marker), `the full bundle should contain "${marker}"`)
      assert.not.ok(coreText.includes(marker), `the core bundle contains feature text "${marker}"`)
    }
    assert.ok(statSync(core.outfile).size < statSync(full.outfile).size, `core ${core.size} B should be smaller than full ${full.size} B`)

    assert.match(fullActions.out, '"reason.react"')
    assert.match(fullActions.out, '"reflection.loop"')
    const coreActions = run(core.outfile, ['actions', '--json'], dir)
    assert.is(coreActions.code, 0, coreActions.err)
    assert.not.match(coreActions.out, '"plan.')
    assert.not.match(coreActions.out, '"reason.')
    assert.not.match(coreActions.out, '"reflection.')
    assert.match(coreActions.out, '"llm.call"')
    assert.match(run(full.outfile, ['--version'], dir).out, /reasoning/)
    assert.not.match(run(core.outfile, ['--version'], dir).out, /reasoning|planning/)

    const reasoner = path.join(dir, 'reasoner.yaml')
    writeFileSync(reasoner, 'name: r\nnodes:\n  - name: t\n    uses: reason.cot\n    with: { problem: x }\n')
    const refusedReasoning = run(core.outfile, ['run', reasoner], dir)
    assert.is(refusedReasoning.code, 2, refusedReasoning.err)
    assert.match(refusedReasoning.err, "lacks the 'reasoning' feature")
    // 001.4R-E2E-006: the full build runs the CoT agent against a model server.
    const server = await startFakeModelServer()
    try {
      server.script({ content: { thinking: 'x is x', answer: 'x' } })
      const ran = await runAsync(full.outfile, ['run', reasoner, '-q', '--model', 'ollama:tiny'], dir, { OLLAMA_HOST: server.url })
      assert.is(ran.code, 0, ran.err)
      assert.is(JSON.parse(ran.out).answer, 'x')
    } finally {
      await server.close()
    }

    const agent = path.join(dir, 'agent.yaml')
    writeFileSync(agent, 'name: planner\nnodes:\n  - name: p\n    uses: plan.decompose\n    with: { goal: x }\n')
    const refused = run(core.outfile, ['run', agent], dir)
    assert.is(refused.code, 2, refused.err)
    assert.match(refused.err, 'UNKNOWN_ACTION')
    assert.match(refused.err, "lacks the 'planning' feature")
    assert.is(run(full.outfile, ['validate', agent], dir).code, 0)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test.run()
