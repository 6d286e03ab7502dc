/**
 * `gguf:` models: a GGUF file run by llama.cpp inside the tea process (node-llama-cpp's addon, loaded at the first
 * call: addon.ts), one more provider behind the same client as Ollama's and OpenAI's, so the same timeouts, reply
 * bounds, cassettes and call scheduler apply. The model stays in memory between calls (resident.ts).
 *
 * A call: the chat template from the file (or `chat_format`), the prompt counted against the context first (a
 * prompt that does not fit is LLM_CONTEXT_OVERFLOW, never silently cut), `format` enforced while sampling by a
 * grammar made from the JSON Schema and the reply checked against the schema afterwards (a reply cut off by
 * `max_tokens`, or one that does not match, is LLM_BAD_RESPONSE saying which), tokens passed to `onToken` as they
 * come, tools offered through node-llama-cpp's function calling in the template's own syntax. The attempt's
 * signal (timeout, Ctrl-C) stops the generation at the next token.
 */

import type {
  ChatHistoryItem,
  ChatModelFunctions,
  ChatWrapper,
  LLamaChatGenerateResponseOptions,
  Llama,
  LlamaGrammar,
  LlamaModel,
} from 'node-llama-cpp'
import { TeaError, errorMessage, isTeaError } from '../../core/errors.ts'
import { cancelled, isControlSignal } from '../../core/signals.ts'
import { isPlainObject } from '../../core/util.ts'
import { attemptSignal, type AttemptSignal } from '../attempt-signal.ts'
import { replyTooLarge, timedOut, type ReplyMeter, type ServerRef } from '../failure.ts'
import { createReplyMeter } from '../reply-meter.ts'
import { RAW_REPLY_LIMIT } from '../structured.ts'
import type {
  ChatMessage,
  GgufOptions,
  JsonSchema,
  LlmProvider,
  ProviderEmbedRequest,
  ProviderReply,
  ProviderRequest,
  ToolCall,
} from '../types.ts'
import { chatWrapperType } from './chat-format.ts'
import { leaseChat, leaseEmbedding, type ChatLease } from './resident.ts'

/** Ollama's sampling defaults, so an agent behaves alike on either. */
const DEFAULT_TEMPERATURE = 0.8
const DEFAULT_TOP_K = 40
const DEFAULT_TOP_P = 0.9

const ONE_AT_A_TIME: GgufOptions = { slots: 1, maxLoaded: 1 }

export function createGgufProvider(): LlmProvider {
  return { name: 'gguf', chat, embed }
}

async function chat(request: ProviderRequest): Promise<ProviderReply> {
  const server = serverOf(request.model, request.timeoutMs)
  const attempt = attemptSignal(request.timeoutMs, request.signal)
  const meter = createReplyMeter(request.maxReplyBytes, request.onToken !== undefined)
  let lease: ChatLease | undefined
  try {
    lease = await leaseChat(request.model, request.gguf ?? ONE_AT_A_TIME, attempt.signal)
    return await generate(lease, request, attempt, meter, server)
  } catch (e) {
    throw classify(e, attempt, server, meter)
  } finally {
    lease?.release(request.keep_alive)
    attempt.dispose()
  }
}

async function generate(
  lease: ChatLease,
  request: ProviderRequest,
  attempt: AttemptSignal,
  meter: ReplyMeter,
  server: ServerRef,
): Promise<ProviderReply> {
  const { LlamaChat } = await import('node-llama-cpp')
  const wrapper = await chatWrapperFor(lease.model, request.gguf?.chatFormat)
  const history: ChatHistoryItem[] = [...request.messages.map(toHistoryItem), { type: 'model', response: [] }]
  const functions = request.tools?.length ? toFunctions(request.tools) : undefined
  const promptTokens = wrapper
    .generateContextState({ chatHistory: history, ...(functions && { availableFunctions: functions, documentFunctionParams: true }) })
    .contextText.tokenize(lease.model.tokenizer).length
  const room = lease.contextSize - promptTokens - 1
  if (room < 1) throw overflow(request.model, promptTokens, lease.contextSize)
  const format = functions ? undefined : request.format
  const grammar = format === undefined ? undefined : await grammarFor(lease.llama, format)
  const options = request.options ?? {}
  // Our own stop: the attempt's signal, or a reply past max_reply_bytes (throwing inside node-llama-cpp's callback
  // would not stop it cleanly).
  const stop = new AbortController()
  const onAbort = (): void => stop.abort(attempt.signal.reason)
  attempt.signal.addEventListener('abort', onAbort, { once: true })
  let tooLarge: TeaError | undefined
  const outputBefore = lease.sequence.tokenMeter.usedOutputTokens
  const llamaChat = new LlamaChat({ contextSequence: lease.sequence, chatWrapper: wrapper, autoDisposeSequence: false })
  try {
    const seed = request.seed ?? numberOption(options, 'seed')
    // One options type for both branches (a grammar, or functions): node-llama-cpp's types allow either, not a union.
    const generateOptions: LLamaChatGenerateResponseOptions<ChatModelFunctions> = {
      signal: stop.signal,
      stopOnAbortSignal: false,
      maxTokens: Math.min(request.maxTokens ?? room, room),
      temperature: request.temperature ?? numberOption(options, 'temperature') ?? DEFAULT_TEMPERATURE,
      topK: numberOption(options, 'top_k') ?? DEFAULT_TOP_K,
      topP: numberOption(options, 'top_p') ?? DEFAULT_TOP_P,
      ...(numberOption(options, 'min_p') !== undefined && { minP: numberOption(options, 'min_p')! }),
      ...(numberOption(options, 'repeat_penalty') !== undefined && {
        repeatPenalty: { penalty: numberOption(options, 'repeat_penalty')! },
      }),
      ...(seed !== undefined && { seed }),
      ...(request.stop?.length && { customStopTriggers: request.stop }),
      ...(grammar && { grammar }),
      ...(functions && { functions, documentFunctionParams: true }),
      // The prompt was counted to fit: a shift would drop the start of the conversation without a word.
      contextShift: {
        strategy: () => {
          throw overflow(request.model, promptTokens, lease.contextSize)
        },
      },
      onTextChunk: (chunk: string) => {
        if (tooLarge) return
        meter.bytes += Buffer.byteLength(chunk)
        meter.textBytes += Buffer.byteLength(chunk)
        if (meter.textBytes > meter.cap) {
          tooLarge = replyTooLarge(server, meter)
          stop.abort(tooLarge)
          return
        }
        meter.tokens++
        request.onToken?.(chunk)
      },
    } as LLamaChatGenerateResponseOptions<ChatModelFunctions>
    // Cancelled while the model was loading: the listener above came too late to hear it.
    if (attempt.signal.aborted) throw attempt.signal.reason
    const res = await llamaChat.generateResponse(history, generateOptions)
    const usage = { prompt_tokens: promptTokens, completion_tokens: lease.sequence.tokenMeter.usedOutputTokens - outputBefore }
    const calls = res.functionCalls?.map((c): ToolCall => ({ name: c.functionName, arguments: isPlainObject(c.params) ? c.params : {} }))
    const content = res.response
    if (calls?.length) return { content, usage, toolCalls: calls }
    if (format !== undefined) await checkStructured(content, format, res.metadata.stopReason, request.model, usage.completion_tokens)
    return { content, usage }
  } catch (e) {
    if (tooLarge) throw tooLarge
    throw e
  } finally {
    attempt.signal.removeEventListener('abort', onAbort)
    llamaChat.dispose({ disposeSequence: false })
  }
}

async function embed(request: ProviderEmbedRequest): Promise<number[][]> {
  const server = serverOf(request.model, request.timeoutMs)
  const attempt = attemptSignal(request.timeoutMs, request.signal)
  const meter = createReplyMeter(Number.POSITIVE_INFINITY, false)
  let release: ((keepAlive: string | number | undefined) => void) | undefined
  try {
    const lease = await leaseEmbedding(request.model, request.gguf ?? ONE_AT_A_TIME, attempt.signal)
    release = lease.release
    const vectors: number[][] = []
    for (const text of request.input) {
      const tokens = lease.model.tokenize(text).length
      if (tokens > lease.contextSize) throw overflow(request.model, tokens, lease.contextSize)
      if (attempt.signal.aborted) throw attempt.signal.reason
      vectors.push([...(await lease.context.getEmbeddingFor(text)).vector])
    }
    return vectors
  } catch (e) {
    throw classify(e, attempt, server, meter)
  } finally {
    release?.(undefined)
    attempt.dispose()
  }
}

// --- internal ---

function serverOf(path: string, timeoutMs: number): ServerRef {
  return { kind: 'GGUF model', url: path, timeoutMs }
}

/** What an attempt's failure means: cancelled, timed out, one of ours, or llama.cpp's own (a reply tea cannot use). */
function classify(e: unknown, attempt: AttemptSignal, server: ServerRef, meter: ReplyMeter): unknown {
  if (attempt.aborted() || isControlSignal(e)) return isControlSignal(e) ? e : cancelled('LLM call cancelled')
  if (attempt.timedOut()) return timedOut(server, meter)
  if (isTeaError(e)) return e
  return new TeaError('LLM_BAD_RESPONSE', `llama.cpp failed while running the GGUF model ${server.url}: ${errorMessage(e)}`, {
    cause: e,
    details: { model: `gguf:${server.url}` },
  })
}

function toHistoryItem(m: ChatMessage): ChatHistoryItem {
  if (m.role === 'system') return { type: 'system', text: m.content }
  if (m.role === 'assistant') return { type: 'model', response: [m.content] }
  // A tool's result goes back as a user turn, as llm.tools sends it to every provider.
  return { type: 'user', text: m.content }
}

function toFunctions(tools: NonNullable<ProviderRequest['tools']>): ChatModelFunctions {
  const functions: Record<string, ChatModelFunctions[string]> = {}
  for (const t of tools)
    functions[t.function.name] = {
      description: t.function.description,
      params: t.function.parameters as ChatModelFunctions[string]['params'],
    }
  return functions
}

/** The model's chat wrapper, resolved once per model and format (a Jinja template is parsed once). */
const wrappers = new WeakMap<LlamaModel, Map<string, ChatWrapper>>()

async function chatWrapperFor(model: LlamaModel, chatFormat: string | undefined): Promise<ChatWrapper> {
  const type = chatWrapperType(chatFormat)
  let byType = wrappers.get(model)
  if (!byType) wrappers.set(model, (byType = new Map()))
  const known = byType.get(type ?? 'auto')
  if (known) return known
  const { resolveChatWrapper } = await import('node-llama-cpp')
  const wrapper = resolveChatWrapper(model, { ...(type && { type: type as 'chatML' }), warningLogs: false })
  byType.set(type ?? 'auto', wrapper)
  return wrapper
}

async function grammarFor(llama: Llama, format: 'json' | JsonSchema): Promise<LlamaGrammar> {
  try {
    if (format === 'json') return await llama.getGrammarFor('json')
    return await llama.createGrammarForJsonSchema(format as Parameters<Llama['createGrammarForJsonSchema']>[0])
  } catch (e) {
    throw new TeaError('INVALID_PARAMS', `the format schema cannot be enforced on a GGUF model: ${errorMessage(e)}`, {
      hint: 'use the JSON Schema keywords llama.cpp grammars support (type, properties, required, enum, const, items, anyOf, minLength/maxLength…), or format: json',
    })
  }
}

/**
 * The grammar kept the reply JSON-shaped; whether it is whole and matches the schema is checked here, with a full
 * JSON Schema validator (@cfworker/json-schema, loaded at the first structured GGUF reply): a grammar cannot hold
 * every keyword (`pattern`, `minimum`…), and a string's length in characters is not its length in tokens.
 */
async function checkStructured(
  content: string,
  format: 'json' | JsonSchema,
  stopReason: string,
  path: string,
  tokens: number,
): Promise<void> {
  const model = `gguf:${path}`
  const raw = content.length > RAW_REPLY_LIMIT ? `${content.slice(0, RAW_REPLY_LIMIT)}…` : content
  const details = { model, attempts: 1, content }
  let value: unknown
  try {
    value = JSON.parse(content)
  } catch {
    const why =
      stopReason === 'maxTokens'
        ? `was cut off by max_tokens after ${tokens} tokens, before its JSON reply was complete`
        : 'replied with JSON that does not parse'
    throw new TeaError('LLM_BAD_RESPONSE', `${model} ${why}: ${JSON.stringify(raw)}`, {
      details,
      hint: 'raise max_tokens, or give the schema shorter fields (enums, booleans, maxLength on strings)',
    })
  }
  if (format === 'json') return
  const problems = await schemaProblems(format, value)
  if (problems.length === 0) return
  throw new TeaError(
    'LLM_BAD_RESPONSE',
    `${model} replied with JSON that does not match the requested schema (${problems.join('; ')}): ${JSON.stringify(raw)}`,
    {
      details,
      hint: 'lower the temperature, raise max_tokens, or constrain the schema further (enums, maxLength)',
    },
  )
}

/** What is wrong with `value` under `schema`, at most three leaf errors with their paths; [] when it matches (or the schema cannot be used). */
async function schemaProblems(schema: JsonSchema, value: unknown): Promise<string[]> {
  const { Validator } = await import('@cfworker/json-schema')
  let result: ReturnType<InstanceType<typeof Validator>['validate']>
  try {
    result = new Validator(schema as ConstructorParameters<typeof Validator>[0], '2020-12', false).validate(value)
  } catch {
    return [] // a schema the validator cannot read was still enforced by the grammar as far as it goes
  }
  if (result.valid) return []
  const containers = ['properties', 'items', 'allOf', 'anyOf', '$ref', 'prefixItems']
  const leaves = result.errors.filter((e) => !containers.includes(e.keyword))
  return (leaves.length ? leaves : result.errors).slice(0, 3).map((e) => {
    const at = e.instanceLocation.replace(/^#\/?/, '').split('/').filter(Boolean).join('.')
    return `${at || 'the reply'}: ${e.error}`
  })
}

function overflow(path: string, tokens: number, contextSize: number): TeaError {
  return new TeaError(
    'LLM_CONTEXT_OVERFLOW',
    `the prompt is ${tokens} tokens, and the context of the GGUF model ${path} holds ${contextSize} (with room for at least one token of reply)`,
    {
      details: { model: `gguf:${path}`, prompt_tokens: tokens, context: contextSize },
      hint: "raise settings.llm.n_ctx (the model's trained context is the most that works well), or send less: a shorter prompt, fewer messages",
    },
  )
}

function numberOption(options: Record<string, unknown>, key: string): number | undefined {
  const v = options[key]
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined
}
