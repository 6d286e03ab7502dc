/**
 * Security probe 2, finding G, as the probe ran it (issue 28 item 9): `tea run` of an agent whose `llm.call` uses
 * TEA's built-in `claude` shell provider, with a `claude` on PATH that is a wrapper script starting a grandchild
 * (`sleep`) that holds its stdout. Before the fix the run launched `claude … --dangerously-skip-permissions` three
 * times and a 2 s timeout took minutes; Ctrl-C twice left the grandchild running.
 */
import { gone } from '../support/process.ts'
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { collect, scratch, spawnTea, tea } from './cli.ts'
import { waitFor } from '../support/wait.ts'

const t = suite('shell providers end to end')

const SLEEP_S = 30

const AGENT = `name: ask-claude
settings:
  llm: { timeout: 2 }
nodes:
  - name: ask
    uses: llm.call
    with: { provider: shell, shell_provider: claude, prompt: "summarise {{ state.page }}" }
`

/**
 * A `claude` that records each launch's arguments, starts a sleeper that inherits its stdout, writes both pids
 * and waits. `ignoreTerm` makes the shell and the sleeper ignore SIGTERM, as a CLI busy in a tool call may.
 */
function fakeClaude(dir: string, ignoreTerm: boolean): void {
  const file = `${dir}/claude`
  writeFileSync(
    file,
    `#!/bin/sh
${ignoreTerm ? "trap '' TERM\n" : ''}printf '%s\\n' "$*" >> ${dir}/launches
sleep ${SLEEP_S} &
echo "$$ $!" > ${dir}/pids.tmp && mv ${dir}/pids.tmp ${dir}/pids
wait
`,
  )
  chmodSync(file, 0o755)
}

function pids(dir: string): number[] | undefined {
  if (!existsSync(`${dir}/pids`)) return undefined
  return readFileSync(`${dir}/pids`, 'utf8').trim().split(' ').map(Number)
}

t('28-9 G: a timed-out claude is launched once, without --dangerously-skip-permissions, and its grandchild ends with it', async () => {
  const s = scratch({ 'agent.yaml': AGENT })
  fakeClaude(s.dir, false)
  try {
    const t0 = Date.now()
    const r = await tea(['run', s.path('agent.yaml'), '-i', '{"page":"cost is $&"}', '--data-dir', s.path('data'), '-q'], {
      env: { PATH: `${s.dir}:${process.env.PATH}` },
      timeoutMs: 120_000,
    })
    const took = Date.now() - t0
    assert.is(r.code, 1, r.stderr)
    assert.match(r.stderr, 'LLM_TIMEOUT')
    assert.not.match(r.stderr, 'attempts')
    assert.equal(readFileSync(s.path('launches'), 'utf8').split('\n').filter(Boolean), ['-p summarise cost is $& --no-session-persistence'])
    // Before the fix: three launches, each waiting for its grandchild's sleep.
    assert.ok(took < (SLEEP_S * 1000) / 3, `the run took ${took} ms against a grandchild sleeping ${SLEEP_S} s`)
    for (const pid of pids(s.dir)!) assert.ok(await gone(pid), `pid ${pid} outlived the call`)
  } finally {
    reap(pids(s.dir))
    s.cleanup()
  }
})

t("28-9 G: Ctrl-C twice ends tea at once, and the CLI's process group with it, even one that ignores SIGTERM", async () => {
  const s = scratch({ 'agent.yaml': AGENT.replace('timeout: 2', 'timeout: 600') })
  fakeClaude(s.dir, true)
  try {
    const child = spawnTea(['run', s.path('agent.yaml'), '-i', '{"page":"p"}', '--data-dir', s.path('data'), '-q'], {
      env: { PATH: `${s.dir}:${process.env.PATH}` },
    })
    const done = collect(child, { timeoutMs: 60_000 })
    let exited = false
    void done.then(() => (exited = true))
    while (!pids(s.dir) && !exited) await new Promise((r) => setTimeout(r, 20))
    if (!pids(s.dir)) assert.unreachable(`claude was never started: ${(await done).stderr}`)
    // The second Ctrl-C once tea has taken the first (two sent at once may arrive as one signal).
    let err = ''
    child.stderr!.on('data', (d) => (err += d))
    child.kill('SIGINT')
    await waitFor(() => err.includes('SIGINT: stopping'), 'tea to take the first Ctrl-C')
    child.kill('SIGINT')
    const r = await done
    assert.is(r.code, 130, `exit ${r.code}: ${r.stderr}`)
    for (const pid of pids(s.dir)!) assert.ok(await gone(pid), `pid ${pid} outlived tea`)
  } finally {
    reap(pids(s.dir))
    s.cleanup()
  }
})

function reap(list: number[] | undefined): void {
  for (const pid of list ?? []) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
}

t.run()
