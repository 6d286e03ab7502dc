/**
 * TEA's shell providers: a model behind a command line (`llama-cli`, `ollama run`, or the coding CLIs TEA's own
 * examples call: `claude`, `gemini`, `codex`…). Configured in `settings.shell_providers` (or
 * `settings.llm.shell_providers`) and chosen with `provider: shell` + `shell_provider: <name>`, as TEA does:
 *
 *   shell_providers:
 *     local:
 *       command: llama-cli
 *       args: ["-m", "${MODELS}/phi.gguf", "-p", "{prompt}"]   # {prompt} in an argument, else the prompt goes to stdin
 *       stdin_mode: pipe        # or file: the prompt is written to a temporary file named by {input_file}
 *       timeout: 600            # seconds; else the call's timeout
 *       env: { LLAMA_LOG: "0" }
 *
 * The conversation is flattened to text as TEA does (system and assistant turns labelled, user turns as they are,
 * a blank line between). `${VAR}` in the command, arguments and env values is taken from the environment. A
 * prompt over 100 KB never goes in an argument (it would pass the OS limit): it goes to stdin instead. The reply
 * is the command's stdout, capped by `max_reply_bytes`. The command's whole process group is stopped — SIGTERM,
 * then SIGKILL after 2 s — when the time runs out, when the run is cancelled (Ctrl-C), or when the reply passes
 * the cap (process-group.ts); a non-zero exit is LLM_SHELL_ERROR with the status and the end of stderr.
 *
 * Trust. Whatever reaches the prompt — a scraped page, a model's earlier reply, a run's input — is text the CLI
 * acts on, and a coding CLI acts with tools. So the built-ins run with the CLI's own permission checks on; the
 * flags that switch them off (`--dangerously-skip-permissions`, `--yolo`) are passed only when the agent sets
 * `settings.llm.shell_skip_permissions: true`. An agent's own provider may write one in its `args:` (TEA's own
 * files do): that is the author asking in so many words, and the loader warns of it (`shellPermissionWarnings`).
 * The prompt is passed literally: no `$&`-style replacement patterns, no shell.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TeaError } from '../core/errors.ts'
import { cancelled } from '../core/signals.ts'
import { formatBytes, oneLine } from './failure.ts'
import { signalGroup, spawnGroup } from './process-group.ts'
import type { ChatMessage, LlmProvider, ProviderReply, ProviderRequest, ShellProviderConfig } from './types.ts'

/**
 * The providers TEA knows without configuration (an agent's own entry of the same name wins). TEA runs `claude` and
 * `codex` with their permission checks off; tea adds those flags only under `shell_skip_permissions`
 * (SKIPPING_PERMISSIONS).
 */
export const TEA_SHELL_PROVIDERS: Readonly<Record<string, ShellProviderConfig>> = {
  claude: { command: 'claude', args: ['-p', '{prompt}', '--no-session-persistence'] },
  codex: { command: 'codex', args: ['exec', '-'], stdin_mode: 'pipe' },
  gemini: { command: 'gemini', args: ['prompt'], stdin_mode: 'pipe' },
  qwen: { command: 'qwen', args: [], stdin_mode: 'pipe' },
  opencode: { command: 'opencode', args: ['-p', '{prompt}', '-q'] },
  cursor: { command: 'agent', args: ['-p', '{prompt}', '--output-format', 'text'] },
}

/** The built-ins as TEA itself runs them, with every tool allowed without asking: only with shell_skip_permissions. */
const SKIPPING_PERMISSIONS: Readonly<Record<string, ShellProviderConfig>> = {
  claude: { command: 'claude', args: ['-p', '{prompt}', '--dangerously-skip-permissions', '--no-session-persistence'] },
  codex: { command: 'codex', args: ['--yolo', 'exec', '-'], stdin_mode: 'pipe' },
}

/**
 * Flags of the coding CLIs that switch their permission checks or sandbox off. An agent's own provider may not
 * pass them unless it sets shell_skip_permissions, so that one setting says whether an agent runs a CLI unchecked.
 * Only unambiguous long flags are listed: short ones (`-y`) mean other things to other commands.
 */
const PERMISSION_SKIPPING_FLAGS: readonly string[] = [
  '--dangerously-skip-permissions',
  '--allow-dangerously-skip-permissions',
  '--dangerously-bypass-approvals-and-sandbox',
  '--yolo',
]
/** Options whose one value switches the checks off (claude, gemini and qwen, codex), as `--opt value` or `--opt=value`. */
const PERMISSION_SKIPPING_VALUES: Readonly<Record<string, string>> = {
  '--permission-mode': 'bypassPermissions',
  '--approval-mode': 'yolo',
  '--sandbox': 'danger-full-access',
}

export interface ShellProviderOptions {
  /** `settings.llm.shell_skip_permissions`: run the coding CLIs with their permission checks off. */
  skipPermissions?: boolean
}

/** Past this, a prompt goes to stdin even when an argument asks for it (Linux allows 128 KB per argument). */
const MAX_ARG_BYTES = 100_000
const KILL_GRACE_MS = 2000
const STDERR_KEPT = 2000

export function createShellProvider(
  configured: Readonly<Record<string, ShellProviderConfig>> | undefined,
  env: NodeJS.ProcessEnv,
  options: ShellProviderOptions = {},
): LlmProvider {
  const skip = options.skipPermissions === true
  const providers = { ...TEA_SHELL_PROVIDERS, ...(skip && SKIPPING_PERMISSIONS), ...configured }
  return {
    name: 'shell',
    chat(request) {
      const config = Object.hasOwn(providers, request.model) ? providers[request.model] : undefined
      if (!config) {
        return Promise.reject(
          new TeaError(
            'LLM_BAD_MODEL',
            `shell provider '${request.model}' is not configured (known: ${Object.keys(providers).join(', ')})`,
            {
              hint: 'add it under settings.shell_providers: {command, args, stdin_mode, timeout, env}',
            },
          ),
        )
      }
      return runCommand(request.model, config, request, env)
    },
  }
}

/** The conversation as one text, as TEA hands it to a command line. */
export function promptText(messages: readonly ChatMessage[]): string {
  return messages
    .map((m) => (m.role === 'system' ? `System: ${m.content}` : m.role === 'assistant' ? `Assistant: ${m.content}` : m.content))
    .join('\n\n')
}

function runCommand(name: string, config: ShellProviderConfig, request: ProviderRequest, env: NodeJS.ProcessEnv): Promise<ProviderReply> {
  const prompt = promptText(request.messages)
  const expand = (s: string): string => s.replace(/\$\{([^}]+)\}/g, (_, v: string) => env[v] ?? '')
  const command = expand(config.command)
  const args = (config.args ?? []).map((a) => expand(String(a)))
  // An argument cannot hold a NUL byte (the OS ends it there, and Node refuses it): such a prompt goes to stdin, as
  // a long one does, rather than failing the call.
  const inArgs = args.some((a) => a.includes('{prompt}')) && Buffer.byteLength(prompt) <= MAX_ARG_BYTES && !prompt.includes('\0')
  let scratch: string | undefined
  let argv: string[]
  let stdin: string | undefined
  if (config.stdin_mode === 'file') {
    scratch = mkdtempSync(join(tmpdir(), 'tea-shell-'))
    const file = join(scratch, 'prompt.txt')
    writeFileSync(file, prompt)
    argv = args.map((a) => fill(a, { input_file: file, prompt: inArgs ? prompt : '' }))
  } else if (inArgs) {
    argv = args.map((a) => fill(a, { prompt }))
  } else {
    argv = args.filter((a) => !a.includes('{prompt}'))
    stdin = prompt
  }
  const childEnv = { ...env, ...Object.fromEntries(Object.entries(config.env ?? {}).map(([k, v]) => [k, expand(String(v))])) }
  const timeoutMs = config.timeout !== undefined ? config.timeout * 1000 : request.timeoutMs
  const what = `shell provider '${name}' (${command})`

  return new Promise<ProviderReply>((resolve, reject) => {
    let child: ReturnType<typeof spawnGroup>
    try {
      child = spawnGroup(command, argv, { env: childEnv, stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] })
    } catch (e) {
      // spawn throws, rather than emitting 'error', for what it refuses outright: a NUL byte in the command, an
      // argument or an env value (from ${VAR}).
      if (scratch) rmSync(scratch, { recursive: true, force: true })
      return reject(
        new TeaError('LLM_SHELL_ERROR', `${what} could not start: ${e instanceof Error ? e.message : String(e)}`, {
          cause: e,
          details: { provider: name, command },
        }),
      )
    }
    let out = ''
    let outBytes = 0
    let err = ''
    let failure: unknown
    let killer: NodeJS.Timeout | undefined
    // The last resort when the pipes stay open: SIGKILL the group, and stop waiting for an end-of-file that a
    // process outside the group (one that left it with setsid) may never send.
    const forceClose = (): void => {
      signalGroup(child, 'SIGKILL')
      child.stdout?.destroy()
      child.stderr?.destroy()
    }
    const stop = (why: unknown): void => {
      if (failure !== undefined) return
      failure = why
      signalGroup(child, 'SIGTERM')
      killer ??= setTimeout(forceClose, KILL_GRACE_MS)
      killer.unref()
    }
    const timer = setTimeout(
      () =>
        stop(
          new TeaError('LLM_TIMEOUT', `${what} did not finish within ${timeoutMs / 1000} s; it was stopped`, {
            details: { provider: name, timeout: timeoutMs / 1000 },
            hint: `raise timeout under settings.shell_providers.${name} (seconds), or settings.llm.timeout`,
          }),
        ),
      timeoutMs,
    )
    const onAbort = (): void => stop(cancelled('LLM call cancelled'))
    request.signal?.addEventListener('abort', onAbort, { once: true })
    if (request.signal?.aborted) onAbort()

    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      if (failure !== undefined) return
      outBytes += Buffer.byteLength(chunk)
      if (outBytes > request.maxReplyBytes) {
        stop(
          new TeaError(
            'LLM_REPLY_TOO_LARGE',
            `${what} wrote more than max_reply_bytes (${formatBytes(request.maxReplyBytes)}); it was stopped`,
            {
              details: { provider: name, max_reply_bytes: request.maxReplyBytes, bytes: outBytes },
            },
          ),
        )
        return
      }
      out += chunk
      request.onToken?.(chunk)
    })
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      err = (err + chunk).slice(-STDERR_KEPT)
    })
    if (stdin !== undefined) {
      // A command that exits without reading its stdin closes the pipe: that is its answer, not our failure.
      child.stdin!.on('error', () => {})
      child.stdin!.end(stdin)
    }
    // The command has answered when it exits; a process it left behind holding the pipes (a daemon, a forgotten
    // `sleep`) does not stretch the call past a short grace.
    child.on('exit', () => {
      killer ??= setTimeout(forceClose, KILL_GRACE_MS)
      killer.unref()
    })
    const finish = (): void => {
      clearTimeout(timer)
      if (killer) clearTimeout(killer)
      request.signal?.removeEventListener('abort', onAbort)
      if (scratch) rmSync(scratch, { recursive: true, force: true })
    }
    child.on('error', (e: NodeJS.ErrnoException) => {
      finish()
      const missing = e.code === 'ENOENT'
      reject(
        new TeaError('LLM_SHELL_ERROR', missing ? `${what}: command '${command}' not found` : `${what} could not start: ${e.message}`, {
          cause: e,
          details: { provider: name, command },
          ...(missing && { hint: `install ${command}, put it on PATH, or set command: under settings.shell_providers.${name}` }),
        }),
      )
    })
    child.on('close', (code, signal) => {
      finish()
      if (failure !== undefined) return reject(failure)
      if (code !== 0) {
        const tail = oneLine(err, 300)
        return reject(
          new TeaError(
            'LLM_SHELL_ERROR',
            `${what} exited with ${code === null ? `signal ${signal}` : `status ${code}`}${tail ? `: ${tail}` : ''}`,
            {
              details: { provider: name, command, status: code, signal, stderr: err },
            },
          ),
        )
      }
      resolve({ content: out, usage: { prompt_tokens: 0, completion_tokens: 0 } })
    })
  })
}

/**
 * `{prompt}` and `{input_file}` in one argument, each replaced by its text exactly. One pass with a function: a
 * replacement string would expand `$&`, `` $` `` and `$'` (`cost is $&` arrived as `cost is {prompt}`), and a
 * second pass would look for placeholders inside the prompt itself.
 */
function fill(arg: string, values: { prompt: string; input_file?: string }): string {
  return arg.replace(/\{(prompt|input_file)\}/g, (whole, key: 'prompt' | 'input_file') => values[key] ?? whole)
}

/**
 * The agent's own providers that switch a coding CLI's permission checks off in their `args:`, each with the flag as
 * written, when `shell_skip_permissions` is not set: what the loader warns of.
 */
export function shellPermissionWarnings(
  providers: Readonly<Record<string, ShellProviderConfig>> | undefined,
  skipPermissions: boolean | undefined,
): Array<{ provider: string; flag: string }> {
  if (skipPermissions === true || !providers) return []
  return Object.entries(providers).flatMap(([provider, config]) => {
    const flag = permissionSkipping((config.args ?? []).map(String))
    return flag === undefined ? [] : [{ provider, flag }]
  })
}

/** The first argument that switches a coding CLI's permission checks off, as written (`--flag` or `--flag=value`). */
function permissionSkipping(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    const [flag, inline] =
      arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined]
    if (PERMISSION_SKIPPING_FLAGS.includes(flag)) return arg
    const unsafe = Object.hasOwn(PERMISSION_SKIPPING_VALUES, flag) ? PERMISSION_SKIPPING_VALUES[flag] : undefined
    if (unsafe !== undefined && (inline ?? args[i + 1]) === unsafe) return inline === undefined ? `${arg} ${unsafe}` : arg
  }
  return undefined
}
