/**
 * The entry-point fuzz (issue 28 item 1): hostile JSON — nested thousands deep, huge, malformed, prototype keys,
 * lone surrogates — into every place JSON enters tea, each through the function that reads it there: the run's
 * input (`-i`, `--input-file`, `--set`), AOF messages, task files (filesystem and NATS entries), handoff inputs,
 * NATS payload references, cassette lines, model replies (through the real Ollama and OpenAI clients against a
 * local server, and the parsers of tool arguments and plans), and `tea serve`'s HTTP API (bodies, paths and
 * cookies with bad `%` escapes) on a live process. What must hold: every refusal is a TeaError with a code from the
 * table (never another exception, never a stack), nothing pollutes `Object.prototype`, and `tea serve` answers
 * afterwards. `soak.test.ts` runs a slice; `npm run soak` runs ≥ 100,000 inputs.
 */

import { writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { join } from 'node:path'
import { parseProtocolMessage } from '../../src/aof/protocol/parse-message.ts'
import { parseEntry as parseNatsEntry } from '../../src/aof/store/nats/entries.ts'
import { refOf } from '../../src/aof/store/nats/payload.ts'
import { parseTaskText } from '../../src/aof/protocol/task-file.ts'
import { handoffInputsOf } from '../../src/aof/protocol/handoff.ts'
import { readInput } from '../../src/cli/input.ts'
import { ERROR_CODES, isTeaError } from '../../src/core/errors.ts'
import { extractJson } from '../../src/core/json-extract.ts'
import { parseEntry as parseCassetteLine } from '../../src/llm/cassette.ts'
import { createLlmClient } from '../../src/llm/client.ts'
import { toolArguments } from '../../src/llm/tool-calls.ts'
import { parseReply } from '../../src/planning/parse.ts'
import { scratch } from '../e2e/cli.ts'
import { startServe } from '../e2e/serve-harness.ts'
import { startFakeModelServer } from '../support/fake-model-server.ts'

export interface FuzzFigures {
  total: number
  byKind: Record<string, number>
  /** Anything thrown that is not a TeaError, a 5xx from serve, a serve that stopped answering. */
  crashes: string[]
  /** TeaErrors whose code is not in the table. */
  uncoded: string[]
}

/** One hostile JSON text, seeded: what an attacker would send to a JSON reader. */
export function hostileJson(random: () => number): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!
  const r = random()
  if (r < 0.3) {
    const depth = pick([127, 128, 129, 500, 1_500, 5_000, 30_000])
    const [open, close] = pick([
      ['[', ']'],
      ['{"a":', '}'],
      ['[{"b":', '}]'],
    ] as const)
    const inner = open.repeat(depth) + pick(['1', '"x"', 'null', '[]']) + close.repeat(depth)
    // Cut short sometimes: deep and unterminated.
    return random() < 0.2 ? inner.slice(0, Math.floor(inner.length * random())) : inner
  }
  if (r < 0.35) {
    const size = pick([1_000, 100_000, 1_000_000])
    return random() < 0.5 ? JSON.stringify('x'.repeat(size)) : `[${'0,'.repeat(size / 2)}0]`
  }
  if (r < 0.55) return pick(PROTO)
  if (r < 0.65)
    return pick(['"\\ud800"', '"\\u0000"', '"\u2028"', '{"\\ud83d": "\\udc00"}', '1e999', '-0', '123456789012345678901234567890'])
  return mutate(pick(BASES), random)
}

const PROTO = [
  '{"__proto__": {"polluted": 1}}',
  '{"constructor": {"prototype": {"polluted": 1}}}',
  '{"a": {"__proto__": {"polluted": 1}}, "__proto__": null}',
  '[{"__proto__": {"toString": 1}}]',
]
const BASES = ['{"agent": "hello", "input": {"x": [1, {"y": "z"}]}}', '{"a": [[[]]], "b": {"c": null}}', '[1, 2, {"k": "v"}]']
const GLYPHS = ['{', '}', '[', ']', '"', '\\', ',', ':', '\u0000', '\ud800', 'e9', '-', '%', '%zz', '\n']

function mutate(base: string, random: () => number): string {
  let s = base
  for (let i = 1 + Math.floor(random() * 4); i > 0; i--) {
    const at = Math.floor(random() * (s.length + 1))
    const op = random()
    if (op < 0.5) s = s.slice(0, at) + GLYPHS[Math.floor(random() * GLYPHS.length)] + s.slice(at)
    else s = s.slice(0, at) + s.slice(at + 1 + Math.floor(random() * 6))
  }
  return s
}

const TASK = (extra: string): string =>
  `---\nid: TASK-2026-01-01-001\ntitle: a task\nstatus: ready\nrouting:\n  agent: swe\nmetadata: ${extra}\n---\nDo it.\n`
const ENVELOPE = (payload: string): string =>
  `AOF/1 {"protocol":"aof","version":1,"projectId":"p","type":"status.update","taskId":"TASK-2026-01-01-001","fromAgent":"a","sentAt":"2026-01-01T00:00:00Z","payload":${payload}}`
const SERVER = { provider: 'ollama', url: 'http://127.0.0.1:9' } as never

type Kind = [name: string, run: (json: string) => unknown]

export async function fuzzEntryPoints(total: number, random: () => number): Promise<FuzzFigures> {
  const out: FuzzFigures = { total: 0, byKind: {}, crashes: [], uncoded: [] }
  const s = scratch({
    'input.json': '{}',
    'hello.yaml': 'name: hello\nnodes:\n  - name: a\n    run: "return { seen: typeof state.x }"\n',
  })
  const inputFile = s.path('input.json')
  const inProcess: Kind[] = [
    ['-i', (j) => readInput(j, undefined, s.dir)],
    [
      '--input-file',
      (j) => {
        writeFileSync(inputFile, j)
        return readInput(`@${inputFile}`, undefined, s.dir)
      },
    ],
    ['--set', (j) => readInput(undefined, [`k=${j}`], s.dir)],
    ['AOF message', (j) => parseProtocolMessage(random() < 0.5 ? ENVELOPE(j) : j)],
    ['AOF task file', (j) => parseTaskText(TASK(j), '/tmp/TASK.md', 'ready', 'TASK-2026-01-01-001')],
    ['NATS task entry', (j) => parseNatsEntry(TASK(j), 'TASK-2026-01-01-001', 'nats://x/p/tasks/TASK-2026-01-01-001')],
    ['handoff inputs', (j) => handoffInputsOf(j)],
    ['NATS payload ref', (j) => refOf(new TextEncoder().encode(`{"$ref": ${j}, "size": 1, "sha256": "x"}`))],
    ['cassette line', (j) => parseCassetteLine(random() < 0.5 ? `{"request": {"model": "m"}, "response": ${j}}` : j, 'fuzz.jsonl:1')],
    ['tool arguments', (j) => toolArguments(j, SERVER, j)],
    ['model reply (JSON in text)', (j) => extractJson(`Sure: ${j}`)],
    ['model reply (plan)', (j) => parseReply(`{"subtasks": ${j}}`, 'fuzz')],
  ]
  const note = (kind: string, e: unknown, i: number): void => {
    if (!isTeaError(e)) out.crashes.push(`${kind} #${i}: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`.slice(0, 300))
    else if (!Object.hasOwn(ERROR_CODES, e.code)) out.uncoded.push(`${kind} #${i}: ${e.code}`)
  }
  const count = (kind: string): void => {
    out.byKind[kind] = (out.byKind[kind] ?? 0) + 1
    out.total++
  }
  // Model replies through the real clients and serve's API over HTTP are slower: a share each.
  const viaModel = Math.max(20, Math.floor(total / 50))
  const viaServe = Math.max(50, Math.floor(total / 10))
  const local = Math.max(0, total - viaModel - viaServe)
  try {
    for (let i = 0; i < local; i++) {
      const [kind, run] = inProcess[i % inProcess.length]!
      count(kind)
      const json = hostileJson(random)
      const started = Date.now()
      try {
        run(json)
      } catch (e) {
        note(kind, e, i)
      }
      if (process.env.TEA_FUZZ_TIMES && Date.now() - started > 200)
        console.error(`fuzz: ${kind} took ${Date.now() - started} ms on ${json.slice(0, 60)}… (${json.length} chars)`)
    }
    await fuzzModelReplies(viaModel, random, count, note)
    await fuzzServe(viaServe, random, s.dir, count, (m) => out.crashes.push(m))
    if (({} as Record<string, unknown>).polluted !== undefined) out.crashes.push('Object.prototype was polluted')
  } finally {
    s.cleanup()
  }
  return out
}

async function fuzzModelReplies(
  n: number,
  random: () => number,
  count: (kind: string) => void,
  note: (kind: string, e: unknown, i: number) => void,
): Promise<void> {
  const server = await startFakeModelServer()
  try {
    for (let i = 0; i < n; i++) {
      const openai = i % 2 === 1
      const kind = openai ? 'model reply (OpenAI client)' : 'model reply (Ollama client)'
      const json = hostileJson(random)
      // Every request answers with this hostile body (a 200), through the real client's parsing.
      server.fallback({
        garbage: openai ? `{"choices": [{"message": {"role": "assistant", "content": "x", "tool_calls": ${json}}}]}` : json,
      })
      count(kind)
      const llm = createLlmClient({
        env: openai ? { OPENAI_BASE_URL: server.url } : { OLLAMA_HOST: server.url },
        defaults: { model: openai ? 'openai:m' : 'ollama:m', max_retries: 0, timeout: 10 },
      })
      try {
        await llm.call({ messages: [{ role: 'user', content: 'p' }] })
      } catch (e) {
        note(kind, e, i)
      } finally {
        await llm.close()
      }
    }
  } finally {
    await server.close()
  }
}

async function fuzzServe(
  n: number,
  random: () => number,
  dir: string,
  count: (k: string) => void,
  crash: (m: string) => void,
): Promise<void> {
  const daemon = await startServe(['--agents', dir, '--data-dir', join(dir, 'data'), '--no-resume'])
  const { port } = new URL(daemon.url)
  try {
    for (let i = 0; i < n; i++) {
      const json = hostileJson(random)
      const r = random()
      let method = 'POST'
      let path = '/api/runs'
      let body: string | undefined = r < 0.6 ? `{"agent": "hello", "input": ${json}}` : json
      const headers: Record<string, string> = { 'content-type': 'application/json' }
      if (r > 0.8) {
        method = 'GET'
        body = undefined
        path = `/api/runs/${printable(mutate('%41%zz%', random))}`
      } else if (r > 0.7) headers.cookie = `tea_token=${printable(mutate('%E0%A4%A', random))}`
      count(method === 'GET' ? 'tea serve path' : 'tea serve body')
      const status = await send(Number(port), method, path, headers, body).catch((e: Error) => {
        crash(`tea serve #${i}: ${e.message}`)
        return 0
      })
      if (status >= 500) crash(`tea serve #${i}: HTTP ${status} for ${method} ${path} ${body?.slice(0, 80) ?? ''}`)
      if (daemon.child.exitCode !== null || daemon.child.signalCode !== null) {
        crash(`tea serve #${i}: the process exited (${daemon.child.exitCode ?? daemon.child.signalCode}): ${daemon.stderr().slice(-500)}`)
        return
      }
    }
    const after = await daemon.json('GET', '/api/runs')
    if (after.status !== 200) crash(`tea serve stopped answering: GET /api/runs → ${after.status}`)
  } finally {
    await daemon.stop()
  }
}

/** What an HTTP client can put on the request line or in a header: the rest as UTF-8 escapes (bad ones included). */
function printable(s: string): string {
  return s.replace(/[^\x21-\x7e]/g, (c) => (/[\ud800-\udfff]/.test(c) ? '%ED%A0%80' : encodeURIComponent(c)))
}

/** One raw request; its status (the body is drained). Sockets are not reused, as a page's forged requests aren't. */
function send(port: number, method: string, path: string, headers: Record<string, string>, body?: string): Promise<number> {
  return new Promise((done, fail) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      res.resume()
      res.on('end', () => done(res.statusCode ?? 0))
    })
    req.on('error', fail)
    req.setTimeout(30_000, () => req.destroy(new Error('no answer within 30 s')))
    req.end(body)
  })
}
