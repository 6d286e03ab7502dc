/**
 * Issue 10 item 3: TEA's shell providers — a model behind a command line — through the real client. The "model"
 * is a small Node script run as a child process, so every path is real: arguments, stdin, a prompt file, the
 * environment, exit status and stderr, the timeout and cancellation (the child must be gone afterwards).
 */
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { loadAgentText } from '../../src/agent/load.ts'
import { isControlSignal } from '../../src/core/signals.ts'
import { startRun } from '../../src/engine/lifecycle.ts'
import { buildRegistry } from '../../src/features.ts'
import { createLlmClient } from '../../src/llm/client.ts'
import { promptText } from '../../src/llm/shell-provider.ts'
import type { ShellProviderConfig } from '../../src/llm/types.ts'
import { createMemoryStore } from '../../src/store/memory-store.ts'
import { rejection, rejects } from '../support/expect.ts'
import { tempDir } from '../support/temp-dir.ts'

const t = suite<{ dir: string }>('shell providers')
t.before.each((ctx) => {
  ctx.dir = tempDir('tea-shell-test-')
})
t.after.each((ctx) => {
  rmSync(ctx.dir, { recursive: true, force: true })
})

const node = process.execPath
/** A command-line "model": `node -e <script> <args…>`. */
const cli = (script: string, args: string[] = [], extra: Partial<ShellProviderConfig> = {}): ShellProviderConfig => ({
  command: node,
  args: ['-e', script, ...args],
  ...extra,
})
const messages = [{ role: 'user' as const, content: 'hello there' }]
const client = (providers: Record<string, ShellProviderConfig>, env: NodeJS.ProcessEnv = {}) =>
  createLlmClient({ env: { PATH: process.env.PATH, ...env }, defaults: { provider: 'shell', shell_providers: providers, max_retries: 0 } })
const call = (providers: Record<string, ShellProviderConfig>, name: string, extra: Record<string, unknown> = {}, env?: NodeJS.ProcessEnv) =>
  client(providers, env).call({ messages, shell_provider: name, ...extra })

t('10-3 the prompt as an argument ({prompt}); stdout is the reply', async () => {
  const r = await call({ echo: cli('process.stdout.write("ARG:" + process.argv[1])', ['{prompt}']) }, 'echo')
  assert.is(r.content, 'ARG:hello there')
  assert.is(r.model, 'shell:echo')
})

t('10-3 without {prompt}, the conversation goes to stdin, flattened as TEA does', async () => {
  const script = 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>process.stdout.write(s.toUpperCase()))'
  const r = await client({ up: cli(script) }).call({
    messages: [{ role: 'system', content: 'be brief' }, ...messages],
    shell_provider: 'up',
  })
  assert.is(r.content, 'SYSTEM: BE BRIEF\n\nHELLO THERE')
  assert.is(
    promptText([
      { role: 'assistant', content: 'a' },
      { role: 'user', content: 'b' },
    ]),
    'Assistant: a\n\nb',
  )
})

t('10-3 stdin_mode: file writes the prompt to a temporary file named by {input_file}, removed afterwards', async () => {
  const script = 'const f=process.argv[1];process.stdout.write(f+"|"+require("fs").readFileSync(f,"utf8"))'
  const r = await call({ file: cli(script, ['{input_file}'], { stdin_mode: 'file' }) }, 'file')
  const [file, text] = r.content.split('|')
  assert.is(text, 'hello there')
  assert.not.ok(existsSync(file!), 'the prompt file is removed')
})

t('10-3 ${VAR} in arguments and env values comes from the environment', async () => {
  const r = await call(
    { env: cli('process.stdout.write(process.argv[1] + "/" + process.env.GREETING)', ['${WHO}'], { env: { GREETING: 'hi ${WHO}' } }) },
    'env',
    {},
    { WHO: 'pi' },
  )
  assert.is(r.content, 'pi/hi pi')
})

t('10-3 a prompt over 100 KB goes to stdin even where an argument asked for it', async () => {
  const script = 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>process.stdout.write(String(process.argv.length)+":"+s.length))'
  const big = 'x'.repeat(150_000)
  const r = await client({ big: cli(script, ['{prompt}']) }).call({ messages: [{ role: 'user', content: big }], shell_provider: 'big' })
  assert.is(r.content, `1:${big.length}`)
})

t('10-3 a non-zero exit is LLM_SHELL_ERROR with the status and the end of stderr; a missing command names itself', async () => {
  const e = await rejects(
    call({ bad: cli('console.error("model file missing"); process.exit(3)') }, 'bad'),
    'LLM_SHELL_ERROR',
    'status 3',
    'model file missing',
  )
  assert.is((e.details as { status: number }).status, 3)
  const missing = await rejects(
    call({ gone: { command: 'no-such-llm-cli' } }, 'gone'),
    'LLM_SHELL_ERROR',
    "command 'no-such-llm-cli' not found",
  )
  assert.match(missing.hint ?? '', 'settings.shell_providers.gone')
  await rejects(call({}, 'unknown-one'), 'LLM_BAD_MODEL', "shell provider 'unknown-one' is not configured", 'claude')
})

t('10-3 past its timeout the child is stopped (LLM_TIMEOUT) and is gone', async ({ dir }) => {
  const pidFile = join(dir, 'pid')
  const script = `require("fs").writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000)`
  const t0 = Date.now()
  await rejects(call({ slow: cli(script, [], { timeout: 0.5 }) }, 'slow'), 'LLM_TIMEOUT', 'did not finish within 0.5 s')
  assert.ok(Date.now() - t0 < 5000)
  assert.not.ok(alive(Number(readFileSync(pidFile, 'utf8'))), 'the child was killed')
})

t('10-3 cancelling the call (Ctrl-C) stops the child', async ({ dir }) => {
  const pidFile = join(dir, 'pid')
  const script = `require("fs").writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000)`
  const controller = new AbortController()
  const pending = rejection(call({ hang: cli(script) }, 'hang', { signal: controller.signal }))
  while (!existsSync(pidFile) || !readFileSync(pidFile, 'utf8')) await new Promise((r) => setTimeout(r, 20))
  controller.abort()
  assert.ok(isControlSignal(await pending), 'a cancelled call is the cancel signal, not a failure')
  const pid = Number(readFileSync(pidFile, 'utf8'))
  for (let i = 0; i < 50 && alive(pid); i++) await new Promise((r) => setTimeout(r, 20))
  assert.not.ok(alive(pid))
})

t('10-3 a reply over max_reply_bytes stops the child with LLM_REPLY_TOO_LARGE', async () => {
  await rejects(
    call({ loud: cli('setInterval(() => process.stdout.write("y".repeat(1000)), 1)') }, 'loud', { max_reply_bytes: 5000 }),
    'LLM_REPLY_TOO_LARGE',
  )
})

t('10-3 a TEA agent with settings.shell_providers and provider: shell runs end to end', async () => {
  const registry = buildRegistry()
  const yaml = `name: shell-agent
settings:
  shell_providers:
    local:
      command: ${JSON.stringify(node)}
      args: ["-e", "process.stdout.write('summary of: ' + process.argv[1])", "{prompt}"]
      timeout: 30
      verbose: true
nodes:
  - name: ask
    uses: llm.call
    with:
      provider: shell
      shell_provider: "{{ state.engine | default('local') }}"
      prompt: "Summarise {{ state.topic }}"
    output: { answer: "{{ result.content }}" }
`
  const { spec, problems } = loadAgentText(yaml, '/tmp/shell-agent.yaml', registry)
  assert.ok(spec, JSON.stringify(problems))
  const llm = createLlmClient({ env: { PATH: process.env.PATH }, defaults: spec.settings.llm })
  const r = await startRun(spec, { store: createMemoryStore(), registry, llm }, { runId: 'r', input: { topic: 'pumps' } })
  assert.is(r.status, 'completed', JSON.stringify(r.error))
  assert.is(r.state.answer, 'summary of: Summarise pumps')
})

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

t.run()
