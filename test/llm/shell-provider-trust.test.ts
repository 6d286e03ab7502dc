/**
 * Issue 28 item 9 (security probe 2, finding G): what a shell provider may do on the board. The "CLIs" are small
 * scripts put on PATH under the names tea runs (`claude`, `codex`) or named by an agent's own provider, so the
 * real spawn path is used: the permission-skipping flags are absent unless the agent asks for them, a timeout
 * launches the command once, a stop ends the command's whole process group (a grandchild holding stdout
 * included), and a prompt reaches argv, stdin and a prompt file exactly as written.
 */
import { gone } from '../support/process.ts'
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { loadAgentText } from '../../src/agent/load.ts'
import { isControlSignal } from '../../src/core/signals.ts'
import { startRun } from '../../src/engine/lifecycle.ts'
import { buildRegistry } from '../../src/features.ts'
import { createLlmClient } from '../../src/llm/client.ts'
import type { LlmSettings, ShellProviderConfig } from '../../src/llm/types.ts'
import { createMemoryStore } from '../../src/store/memory-store.ts'
import { rejection, rejects } from '../support/expect.ts'
import { tempDir } from '../support/temp-dir.ts'

const t = suite<{ dir: string }>('shell providers: trust')
t.before.each((ctx) => {
  ctx.dir = tempDir('tea-shell-trust-')
})
t.after.each((ctx) => {
  rmSync(ctx.dir, { recursive: true, force: true })
})

/**
 * An executable `name` in `dir` that appends one JSON line per launch to `dir/launches`: its arguments and what
 * it read from stdin. It prints `reply`.
 */
function recorder(dir: string, name: string, reply = 'ok'): string {
  const file = join(dir, name)
  const log = join(dir, 'launches')
  writeFileSync(
    file,
    `#!${process.execPath}
const fs = require('fs')
let stdin = ''
try { stdin = fs.readFileSync(0, 'utf8') } catch {}
fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify({ argv: process.argv.slice(2), stdin }) + '\\n')
process.stdout.write(${JSON.stringify(reply)})
`,
  )
  chmodSync(file, 0o755)
  return file
}

function launches(dir: string): Array<{ argv: string[]; stdin: string }> {
  const log = join(dir, 'launches')
  if (!existsSync(log)) return []
  return readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { argv: string[]; stdin: string })
}

const messages = [{ role: 'user' as const, content: 'hello there' }]
const clientIn = (dir: string, defaults: LlmSettings = {}) =>
  createLlmClient({ env: { PATH: `${dir}:${process.env.PATH}` }, defaults: { provider: 'shell', ...defaults }, backoffBaseMs: 1 })

t('28-9 built-in claude and codex run without their permission-skipping flags by default', async ({ dir }) => {
  recorder(dir, 'claude')
  recorder(dir, 'codex')
  const llm = clientIn(dir)
  await llm.call({ messages, shell_provider: 'claude' })
  await llm.call({ messages, shell_provider: 'codex' })
  const [claude, codex] = launches(dir)
  assert.equal(claude!.argv, ['-p', 'hello there', '--no-session-persistence'])
  assert.equal(codex!.argv, ['exec', '-'])
  assert.is(codex!.stdin, 'hello there')
})

t('28-9 settings.llm.shell_skip_permissions: true gives claude and codex the flags TEA passes', async ({ dir }) => {
  recorder(dir, 'claude')
  recorder(dir, 'codex')
  const llm = clientIn(dir, { shell_skip_permissions: true })
  await llm.call({ messages, shell_provider: 'claude' })
  await llm.call({ messages, shell_provider: 'codex' })
  const [claude, codex] = launches(dir)
  assert.equal(claude!.argv, ['-p', 'hello there', '--dangerously-skip-permissions', '--no-session-persistence'])
  assert.equal(codex!.argv, ['--yolo', 'exec', '-'])
})

t(
  "28-9 an agent's own provider that writes a permission-skipping flag runs as its author wrote it, and the loader warns of it unless the setting says so",
  async ({ dir }) => {
    const command = recorder(dir, 'mycli')
    const cases: string[][] = [
      ['--yolo', 'exec', '-'],
      ['-p', '{prompt}', '--dangerously-skip-permissions'],
      ['--permission-mode', 'bypassPermissions', '-p', '{prompt}'],
      ['--approval-mode=yolo'],
      ['--sandbox', 'danger-full-access', 'exec'],
    ]
    const registry = buildRegistry()
    const file = (args: string[], extra = '') =>
      `name: cli\nsettings:\n  llm: { provider: shell, shell_provider: mine${extra} }\n  shell_providers:\n    mine: { command: ${JSON.stringify(command)}, args: ${JSON.stringify(args)} }\nnodes:\n  - name: ask\n    uses: llm.call\n    with: { prompt: "hi" }\n`
    for (const args of cases) {
      const { spec, warnings } = loadAgentText(file(args), '/tmp/cli.yaml', registry)
      assert.ok(spec)
      assert.equal(
        warnings.map((w) => w.code),
        ['SHELL_PERMISSIONS_OFF'],
        args.join(' '),
      )
      assert.match(warnings[0]!.message, /permission checks off/)
      assert.is(warnings[0]!.where.line, 5)
      assert.equal(loadAgentText(file(args, ', shell_skip_permissions: true'), '/tmp/cli.yaml', registry).warnings, [])
      await clientIn(dir, { shell_providers: { mine: { command, args } } }).call({ messages, shell_provider: 'mine' })
    }
    assert.is(launches(dir).length, cases.length, 'each ran as written')
    // Harmless neighbours of those flags are no warning: another value of the same option, a prompt that names the flag.
    assert.equal(loadAgentText(file(['--permission-mode', 'plan', '{prompt}']), '/tmp/cli.yaml', registry).warnings, [])
    const safe: Record<string, ShellProviderConfig> = { plan: { command, args: ['--permission-mode', 'plan', '{prompt}'] } }
    await clientIn(dir, { shell_providers: safe }).call({ messages: [{ role: 'user', content: '--yolo' }], shell_provider: 'plan' })
    assert.equal(launches(dir).at(-1)!.argv, ['--permission-mode', 'plan', '--yolo'])
  },
)

t('28-9 the agent file takes settings.llm.shell_skip_permissions and the run passes it to the provider', async ({ dir }) => {
  recorder(dir, 'claude', 'answered')
  const registry = buildRegistry()
  const agent = (extra: string) => `name: cli
settings:
  llm:
    provider: shell
    shell_provider: claude
${extra}nodes:
  - name: ask
    uses: llm.call
    with: { prompt: "hello there" }
    output: { answer: "{{ result.content }}" }
`
  for (const [extra, flagged] of [
    ['', false],
    ['    shell_skip_permissions: true\n', true],
  ] as const) {
    const { spec, problems } = loadAgentText(agent(extra), '/tmp/cli.yaml', registry)
    assert.ok(spec, JSON.stringify(problems))
    const llm = createLlmClient({ env: { PATH: `${dir}:${process.env.PATH}` }, defaults: spec.settings.llm })
    const r = await startRun(spec, { store: createMemoryStore(), registry, llm }, { runId: 'r', input: {} })
    assert.is(r.status, 'completed', JSON.stringify(r.error))
    assert.is(r.state.answer, 'answered')
    assert.is(launches(dir).at(-1)!.argv.includes('--dangerously-skip-permissions'), flagged)
  }
  const bad = loadAgentText(agent('    shell_skip_permissions: "yes"\n'), '/tmp/cli.yaml', registry)
  assert.not.ok(bad.spec, 'a setting that is not a boolean is refused at load')
})

t('28-9 a shell call that times out is launched once, whatever max_retries says', async ({ dir }) => {
  const log = join(dir, 'launches')
  const script = `require("fs").appendFileSync(${JSON.stringify(log)}, "x\\n"); setInterval(() => {}, 1000)`
  const providers = { slow: { command: process.execPath, args: ['-e', script], timeout: 0.3 } }
  const e = await rejects(
    clientIn(dir, { shell_providers: providers, max_retries: 2 }).call({ messages, shell_provider: 'slow' }),
    'LLM_TIMEOUT',
  )
  assert.is(readFileSync(log, 'utf8'), 'x\n', 'one launch')
  assert.not.match(e.message, 'attempts')
})

/**
 * A CLI that is a wrapper: `sh` starts a `sleep` that inherits its stdout (the pipe tea reads), records both pids,
 * and waits. Killing only `sh` leaves the sleep holding the pipe for `sleepS` seconds.
 */
function wrapper(dir: string, sleepS: number): { command: string; pids(): { shell: number; sleeper: number } | undefined } {
  const command = join(dir, 'wrapper.sh')
  writeFileSync(
    command,
    `#!/bin/sh\nsleep ${sleepS} &\necho "$$ $!" > ${JSON.stringify(join(dir, 'pids'))}.tmp\nmv ${JSON.stringify(join(dir, 'pids'))}.tmp ${JSON.stringify(join(dir, 'pids'))}\nwait\n`,
  )
  chmodSync(command, 0o755)
  return {
    command,
    pids() {
      const file = join(dir, 'pids')
      if (!existsSync(file)) return undefined
      const [shell, sleeper] = readFileSync(file, 'utf8').trim().split(' ').map(Number)
      return { shell: shell!, sleeper: sleeper! }
    },
  }
}

const SLEEP_S = 30

t("28-9 a timeout ends the command's whole process group: a grandchild holding stdout does not stretch the call", async ({ dir }) => {
  const cli = wrapper(dir, SLEEP_S)
  const t0 = Date.now()
  const providers = { wrapped: { command: cli.command, timeout: 1 } }
  try {
    await rejects(clientIn(dir, { shell_providers: providers }).call({ messages, shell_provider: 'wrapped' }), 'LLM_TIMEOUT')
    const took = Date.now() - t0
    // Without the group kill the call waits for the grandchild's sleep to end: SLEEP_S, not the 1 s timeout.
    assert.ok(took < (SLEEP_S * 1000) / 3, `the call took ${took} ms against a grandchild sleeping ${SLEEP_S} s`)
    const pids = cli.pids()!
    assert.ok(await gone(pids.sleeper), 'the grandchild was ended with its group')
    assert.ok(await gone(pids.shell))
  } finally {
    reap(cli.pids())
  }
})

t("28-9 cancelling the call (Ctrl-C) ends the command's whole process group", async ({ dir }) => {
  const cli = wrapper(dir, SLEEP_S)
  const controller = new AbortController()
  const providers = { wrapped: { command: cli.command } }
  try {
    const pending = rejection(
      clientIn(dir, { shell_providers: providers }).call({ messages, shell_provider: 'wrapped', signal: controller.signal }),
    )
    while (!cli.pids()) await new Promise((r) => setTimeout(r, 20))
    const t0 = Date.now()
    controller.abort()
    assert.ok(isControlSignal(await pending), 'a cancelled call is the cancel signal')
    const took = Date.now() - t0
    assert.ok(took < (SLEEP_S * 1000) / 3, `the cancel took ${took} ms against a grandchild sleeping ${SLEEP_S} s`)
    assert.ok(await gone(cli.pids()!.sleeper), 'the grandchild was ended with its group')
  } finally {
    reap(cli.pids())
  }
})

t("28-9 when tea's process exits mid-call, the command's process group is ended with it", async ({ dir }) => {
  const cli = wrapper(dir, SLEEP_S)
  // A separate Node process runs one call and exits while the command is still running.
  const main = join(dir, 'main.ts')
  const client = join(import.meta.dirname, '../../src/llm/client.ts')
  writeFileSync(
    main,
    `import { existsSync } from 'node:fs'
import { createLlmClient } from ${JSON.stringify(client)}
const llm = createLlmClient({ env: { PATH: process.env.PATH }, defaults: { provider: 'shell', shell_providers: { w: { command: ${JSON.stringify(cli.command)} } } } })
void llm.call({ messages: [{ role: 'user', content: 'hi' }], shell_provider: 'w' }).catch(() => {})
const poll = setInterval(() => { if (existsSync(${JSON.stringify(join(dir, 'pids'))})) { clearInterval(poll); process.exit(7) } }, 20)
`,
  )
  const { spawnSync } = await import('node:child_process')
  try {
    const r = spawnSync(process.execPath, ['--import', 'tsx', main], { encoding: 'utf8', timeout: 20_000 })
    assert.is(r.status, 7, r.stderr)
    const pids = cli.pids()!
    assert.ok(await gone(pids.sleeper), 'the grandchild did not outlive tea')
    assert.ok(await gone(pids.shell), 'the command did not outlive tea')
  } finally {
    reap(cli.pids())
  }
})

t('28-9 a prompt reaches argv, stdin and the prompt file literally: no $& expansion, no placeholder inside it', async ({ dir }) => {
  const text = "cost is $& and $' and $` and $$ and $1 and {input_file} and {prompt}"
  const echoArgv = 'process.stdout.write(process.argv.slice(1).join("|"))'
  const echoStdin = 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>process.stdout.write(s))'
  const echoFile = 'process.stdout.write(require("fs").readFileSync(process.argv[1],"utf8")+"|"+process.argv[2])'
  const providers: Record<string, ShellProviderConfig> = {
    argv: { command: process.execPath, args: ['-e', echoArgv, '{prompt}', 'pre-{prompt}-post'] },
    stdin: { command: process.execPath, args: ['-e', echoStdin], stdin_mode: 'pipe' },
    file: { command: process.execPath, args: ['-e', echoFile, '{input_file}', '[{prompt}]'], stdin_mode: 'file' },
  }
  const llm = clientIn(dir, { shell_providers: providers, max_retries: 0 })
  const ask = (name: string) => llm.call({ messages: [{ role: 'user', content: text }], shell_provider: name })
  assert.is((await ask('argv')).content, `${text}|pre-${text}-post`)
  assert.is((await ask('stdin')).content, text)
  assert.is((await ask('file')).content, `${text}|[${text}]`)
})

t(
  '28-9 a prompt with a NUL byte goes to stdin instead of an argument; a NUL the OS refuses is LLM_SHELL_ERROR, not a crash',
  async ({ dir }) => {
    const both = 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>process.stdout.write(process.argv.length+":"+JSON.stringify(s)))'
    const providers: Record<string, ShellProviderConfig> = {
      arg: { command: process.execPath, args: ['-e', both, '{prompt}'] },
      env: { command: process.execPath, args: ['-e', ''], env: { BAD: 'a\0b' } },
    }
    const llm = clientIn(dir, { shell_providers: providers, max_retries: 0 })
    const r = await llm.call({ messages: [{ role: 'user', content: 'x\0y' }], shell_provider: 'arg' })
    assert.is(r.content, `1:${JSON.stringify('x\0y')}`)
    await rejects(llm.call({ messages, shell_provider: 'env' }), 'LLM_SHELL_ERROR', 'could not start')
  },
)

/** A test that fails must still leave no sleeper behind. */
function reap(pids: { shell: number; sleeper: number } | undefined): void {
  for (const pid of pids ? [pids.shell, pids.sleeper] : []) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
}

t.run()
