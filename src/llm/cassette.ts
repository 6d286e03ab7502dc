/**
 * Cassettes: recorded model exchanges, so agents and tests run offline and deterministically.
 *
 * Format: JSONL, one exchange per line, blank lines ignored:
 *   {"request": {"model": "ollama:qwen2.5:1.5b", "messages": [{"role": "user", "content": "…"}],
 *                "format"?: "json" | {JSON Schema}, "temperature"?: 0.2},
 *    "response": {"content": "…", "usage": {"prompt_tokens": 12, "completion_tokens": 40}},
 *    "tokens"?: ["…", "…"]}
 * `tokens` is present when the call was streamed; replay feeds them to the token callback in order.
 * An embeddings call is a line of its own:
 *   {"embed": {"model": "ollama:nomic-embed-text", "input": ["…", …], "embeddings": [[0.1, …], …]}}
 * replayed text by text (the key is the bare model and the text), so a run that batches its texts differently
 * from the recording still finds each one.
 *
 * Matching key: a SHA-256 of the bare model name (the part after `provider:`, so a cassette recorded through
 * `ollama:` also answers `openai:` or `replay:` with the same model), the messages (role and content) and the
 * format (key order ignored). Temperature, timeouts and retries are not part of the key.
 */

import { parseJson } from '../core/json.ts'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { basename } from 'node:path'
import { TeaError, errorMessage } from '../core/errors.ts'
import { isPlainObject } from '../core/util.ts'
import { parseModelSpec } from './model-spec.ts'
import type { ChatMessage, JsonSchema, LlmUsage, ToolCall } from './types.ts'

export interface CassetteEntry {
  /** `tools`: the names of the tools offered (native tool calling). */
  request: { model: string; messages: ChatMessage[]; format?: 'json' | JsonSchema; temperature?: number; tools?: string[] }
  response: { content: string; usage: LlmUsage; tool_calls?: ToolCall[] }
  tokens?: string[]
}

/** One recorded embeddings call: a vector per input text. */
export interface EmbedEntry {
  model: string
  input: string[]
  embeddings: number[][]
}

export interface LoadedEntry {
  entry: CassetteEntry
  key: string
  /** 1-based line in the file, for messages. */
  line: number
}

export function cassetteKey(
  model: string,
  messages: ChatMessage[],
  format: 'json' | JsonSchema | undefined,
  tools?: readonly string[],
): string {
  // The tools offered are part of the key only when there are some, so cassettes recorded before keep their keys.
  const parts: unknown[] = [bareModel(model), messages.map((m) => [m.role, m.content]), format ?? null]
  if (tools?.length) parts.push([...tools])
  const canonical = canonicalJson(parts)
  return createHash('sha256').update(canonical).digest('hex')
}

/**
 * `ollama:qwen2.5:1.5b` → `qwen2.5:1.5b`; a hand-written name without a known provider stays as it is. A GGUF
 * model is its file's name (`gguf:/home/pi/agents/m.gguf` → `m.gguf`): the folder differs between the board
 * that recorded and the machine that replays.
 */
export function bareModel(model: string): string {
  let bare: string
  try {
    bare = parseModelSpec(model).model
  } catch {
    bare = model
  }
  return /\.gguf$/i.test(bare) ? basename(bare) : bare
}

export function readCassette(path: string): LoadedEntry[] {
  return readCassetteLines(path).entries
}

/** The vector of each recorded (bare model, text), from a cassette's embed lines. */
export function readCassetteEmbeddings(path: string): Map<string, number[]> {
  const vectors = new Map<string, number[]>()
  for (const e of readCassetteLines(path).embeds) e.input.forEach((text, i) => vectors.set(embedKey(e.model, text), e.embeddings[i]!))
  return vectors
}

export function embedKey(model: string, text: string): string {
  return createHash('sha256')
    .update(canonicalJson([bareModel(model), text]))
    .digest('hex')
}

export function formatEmbedEntry(entry: EmbedEntry): string {
  return `${JSON.stringify({ embed: entry })}\n`
}

function readCassetteLines(path: string): { entries: LoadedEntry[]; embeds: EmbedEntry[] } {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (e) {
    throw new TeaError('CASSETTE_INVALID', `cannot read cassette ${path}: ${errorMessage(e)}`, {
      details: { path },
      hint: 'record one with --record FILE first',
    })
  }
  const entries: LoadedEntry[] = []
  const embeds: EmbedEntry[] = []
  text.split('\n').forEach((raw, i) => {
    if (raw.trim() === '') return
    if (raw.startsWith('{"embed":')) {
      embeds.push(parseEmbed(raw, `${path}:${i + 1}`))
      return
    }
    const entry = parseEntry(raw, `${path}:${i + 1}`)
    entries.push({
      entry,
      line: i + 1,
      key: cassetteKey(entry.request.model, entry.request.messages, entry.request.format, entry.request.tools),
    })
  })
  return { entries, embeds }
}

function parseEmbed(raw: string, where: string): EmbedEntry {
  let value: unknown
  try {
    value = parseJson(raw, 'the line')
  } catch (e) {
    throw invalid(where, errorMessage(e))
  }
  const embed = isPlainObject(value) ? value.embed : undefined
  const ok =
    isPlainObject(embed) &&
    typeof embed.model === 'string' &&
    Array.isArray(embed.input) &&
    embed.input.every((t) => typeof t === 'string') &&
    Array.isArray(embed.embeddings) &&
    embed.embeddings.length === embed.input.length &&
    embed.embeddings.every((v) => Array.isArray(v) && v.every((x) => typeof x === 'number' && Number.isFinite(x)))
  if (!ok) throw invalid(where, 'expected {"embed": {"model", "input": [texts], "embeddings": [one list of numbers per text]}}')
  return { model: embed.model as string, input: embed.input as string[], embeddings: embed.embeddings as number[][] }
}

export function parseEntry(raw: string, where: string): CassetteEntry {
  let value: unknown
  try {
    value = parseJson(raw, 'the line')
  } catch (e) {
    throw invalid(where, errorMessage(e))
  }
  if (!isPlainObject(value)) throw invalid(where, 'expected an object {"request": …, "response": …}')
  const { request, response, tokens } = value
  if (!isPlainObject(request) || typeof request['model'] !== 'string') throw invalid(where, 'expected request.model to be a string')
  const messages = request['messages']
  if (!Array.isArray(messages) || !messages.every(isMessage)) {
    throw invalid(where, 'expected request.messages to be a list of {"role", "content"} with string values')
  }
  const format = request['format']
  if (format !== undefined && format !== 'json' && !isPlainObject(format))
    throw invalid(where, 'expected request.format to be "json" or a JSON Schema object')
  if (!isPlainObject(response) || typeof response['content'] !== 'string') throw invalid(where, 'expected response.content to be a string')
  if (tokens !== undefined && !(Array.isArray(tokens) && tokens.every((t) => typeof t === 'string'))) {
    throw invalid(where, 'expected tokens to be a list of strings')
  }
  const tools = request['tools']
  if (tools !== undefined && !(Array.isArray(tools) && tools.every((t) => typeof t === 'string')))
    throw invalid(where, 'expected request.tools to be a list of tool names')
  const calls = response['tool_calls']
  if (
    calls !== undefined &&
    !(Array.isArray(calls) && calls.every((c) => isPlainObject(c) && typeof c.name === 'string' && isPlainObject(c.arguments)))
  )
    throw invalid(where, 'expected response.tool_calls to be a list of {"name", "arguments": {…}}')
  const usage = isPlainObject(response['usage']) ? response['usage'] : {}
  const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0)
  return {
    request: {
      model: request['model'],
      messages: messages.map((m: ChatMessage) => ({ role: m.role, content: m.content })),
      ...(format === undefined ? {} : { format: format as 'json' | JsonSchema }),
      ...(typeof request['temperature'] === 'number' ? { temperature: request['temperature'] } : {}),
      ...(tools === undefined ? {} : { tools: tools as string[] }),
    },
    response: {
      content: response['content'],
      usage: { prompt_tokens: count(usage['prompt_tokens']), completion_tokens: count(usage['completion_tokens']) },
      ...(calls === undefined ? {} : { tool_calls: calls as ToolCall[] }),
    },
    ...(tokens === undefined ? {} : { tokens: tokens as string[] }),
  }
}

export function formatEntry(entry: CassetteEntry): string {
  return `${JSON.stringify(entry)}\n`
}

function isMessage(m: unknown): m is ChatMessage {
  return isPlainObject(m) && typeof m['role'] === 'string' && typeof m['content'] === 'string'
}

function invalid(where: string, what: string): TeaError {
  return new TeaError('CASSETTE_INVALID', `${where}: invalid cassette line: ${what}`, { details: { where } })
}

/** JSON with object keys sorted at every depth, so equal values give equal text. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    isPlainObject(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, v[k]]),
        )
      : v,
  )
}
