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
 * is the command's stdout, capped by `max_reply_bytes`. The child is killed — SIGTERM, then SIGKILL after 2 s —
 * when the time runs out, when the run is cancelled (Ctrl-C), or when the reply passes the cap; a non-zero exit is
 * LLM_SHELL_ERROR with the status and the end of stderr.
 */

import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TeaError } from '../core/errors.ts'
import { cancelled } from '../core/signals.ts'
import { formatBytes, oneLine } from './failure.ts'
import type { ChatMessage, LlmProvider, ProviderReply, ProviderRequest, ShellProviderConfig } from './types.ts'

/** The providers TEA knows without configuration (an agent's own entry of the same name wins). */
export const TEA_SHELL_PROVIDERS: Readonly<Record<string, ShellProviderConfig>> = {
  claude: { command: 'claude', args: ['-p', '{prompt}', '--dangerously-skip-permissions', '--no-session-persistence'] },
  codex: { command: 'codex', args: ['--yolo', 'exec', '-'], stdin_mode: 'pipe' },
  gemini: { command: 'gemini', args: ['prompt'], stdin_mode: 'pipe' },
  qwen: { command: 'qwen', args: [], stdin_mode: 'pipe' },
  opencode: { command: 'opencode', args: ['-p', '{prompt}', '-q'] },
  cursor: { command: 'agent', args: ['-p', '{prompt}', '--output-format', 'text'] },
}

/** Past this, a prompt goes to stdin even when an argument asks for it (Linux allows 128 KB per argument). */
const MAX_ARG_BYTES = 100_000
const KILL_GRACE_MS = 2000
const STDERR_KEPT = 2000

export function createShellProvider(
  configured: Readonly<Record<string, ShellProviderConfig>> | undefined,
  env: NodeJS.ProcessEnv,
): LlmProvider {
  const providers = { ...TEA_SHELL_PROVIDERS, ...configured }
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
  const inArgs = args.some((a) => a.includes('{prompt}')) && Buffer.byteLength(prompt) <= MAX_ARG_BYTES
  let scratch: string | undefined
  let argv: string[]
  let stdin: string | undefined
  if (config.stdin_mode === 'file') {
    scratch = mkdtempSync(join(tmpdir(), 'tea-shell-'))
    const file = join(scratch, 'prompt.txt')
    writeFileSync(file, prompt)
    argv = args.map((a) => a.replaceAll('{input_file}', file).replaceAll('{prompt}', inArgs ? prompt : ''))
  } else if (inArgs) {
    argv = args.map((a) => a.replaceAll('{prompt}', prompt))
  } else {
    argv = args.filter((a) => !a.includes('{prompt}'))
    stdin = prompt
  }
  const childEnv = { ...env, ...Object.fromEntries(Object.entries(config.env ?? {}).map(([k, v]) => [k, expand(String(v))])) }
  const timeoutMs = config.timeout !== undefined ? config.timeout * 1000 : request.timeoutMs
  const what = `shell provider '${name}' (${command})`

  return new Promise<ProviderReply>((resolve, reject) => {
    const child = spawn(command, argv, { env: childEnv, stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] })
    let out = ''
    let outBytes = 0
    let err = ''
    let failure: unknown
    let killer: NodeJS.Timeout | undefined
    const stop = (why: unknown): void => {
      if (failure !== undefined) return
      failure = why
      child.kill('SIGTERM')
      killer = setTimeout(() => child.kill('SIGKILL'), KILL_GRACE_MS)
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
