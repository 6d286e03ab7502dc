/**
 * The planning feature flag (AC8): a target built with `planning: false` carries no planning code, is smaller,
 * lists no plan.* action, and refuses an agent using one at load time, naming the missing feature.
 * Builds the core and full bundles into a temp dir. Skipped, with a message, until src/features.ts registers
 * the planning actions (the full bundle's `tea actions --json` then lists plan.execute).
 */

import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { ROOT } from '../e2e/cli.ts'

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
    env: { ...process.env, TEA_DATA_DIR: path.join(cwd, 'data') },
  })
  return { code: r.status, out: r.stdout, err: r.stderr }
}

test('001.3R-INT-017 / 001.3R-INT-018 / 001.3R-E2E-004 a build without planning has no planning code or actions, is smaller, and names the missing feature', async () => {
  // Under dist/ (ignored by git) rather than the OS temp dir: a bundle finds lmdb's native addon in the
  // node_modules above it.
  mkdirSync(path.join(ROOT, 'dist'), { recursive: true })
  const dir = mkdtempSync(path.join(ROOT, 'dist', 'test-feature-flag-'))
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
    for (const marker of PLANNING_MARKERS) {
      assert.ok(fullText.includes(marker), `the full bundle should contain "${marker}"`)
      assert.not.ok(coreText.includes(marker), `the core bundle contains planning text "${marker}"`)
    }
    assert.ok(statSync(core.outfile).size < statSync(full.outfile).size, `core ${core.size} B should be smaller than full ${full.size} B`)

    const coreActions = run(core.outfile, ['actions', '--json'], dir)
    assert.is(coreActions.code, 0, coreActions.err)
    assert.not.match(coreActions.out, '"plan.')
    assert.match(coreActions.out, '"llm.call"')

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
