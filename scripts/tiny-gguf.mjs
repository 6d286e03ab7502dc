// `node scripts/tiny-gguf.mjs OUT.gguf [--embedding]`: writes a tiny llama-architecture GGUF that llama.cpp loads
// and runs, for tests and benchmarks (no model weights can be downloaded on the machines that run them). Its weights
// are random (a fixed seed: the file is byte-identical every time), so its replies are nonsense, but the whole path
// runs for real: tokenizer, chat template, sampling, grammars, embeddings.
//
// The file (GGUF v3, little-endian): "GGUF", version, tensor count, metadata count; the metadata (key, type, value);
// the tensor infos (name, dims, type, offset into the data); then the tensor data, each tensor 32-byte aligned.
// The model: 64-dim embeddings, 2 layers, 4 heads, a 128-wide feed-forward, float32 (~0.5 MB). Its vocabulary
// (356 tokens, sentencepiece style) is <unk> <s> </s>, the 256 byte tokens <0x00>…<0xFF>, printable ASCII (space as
// ▁), and ChatML's <|im_start|> <|im_end|>; tokenizer.chat_template is ChatML. With --embedding it is the same model
// marked for mean pooling, as an embedding model is.
import { writeFileSync } from 'node:fs'

const args = process.argv.slice(2)
const out = args.find((a) => !a.startsWith('--'))
if (!out) {
  console.error('usage: node scripts/tiny-gguf.mjs OUT.gguf [--embedding]')
  process.exit(2)
}
const embedding = args.includes('--embedding')

const N_EMBD = 64
const N_LAYER = 2
const N_HEAD = 4
const N_FF = 128
const CONTEXT = 2048
const ALIGN = 32

const tokens = ['<unk>', '<s>', '</s>']
const types = [2, 3, 3] // UNKNOWN, CONTROL, CONTROL
for (let b = 0; b < 256; b++) {
  tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`)
  types.push(6) // BYTE
}
for (let c = 32; c < 127; c++) {
  tokens.push(c === 32 ? '\u2581' : String.fromCharCode(c))
  types.push(1) // NORMAL
}
const IM_START = tokens.push('<|im_start|>') - 1
const IM_END = tokens.push('<|im_end|>') - 1
types.push(3, 3)
const N_VOCAB = tokens.length

const CHATML =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"

// GGUF value types
const U32 = 4
const I32 = 5
const F32 = 6
const BOOL = 7
const STR = 8
const ARR = 9

const metadata = [
  ['general.architecture', STR, 'llama'],
  ['general.name', STR, embedding ? 'tea-tiny-embed' : 'tea-tiny'],
  ['general.alignment', U32, ALIGN],
  ['llama.context_length', U32, CONTEXT],
  ['llama.embedding_length', U32, N_EMBD],
  ['llama.block_count', U32, N_LAYER],
  ['llama.feed_forward_length', U32, N_FF],
  ['llama.attention.head_count', U32, N_HEAD],
  ['llama.attention.head_count_kv', U32, N_HEAD],
  ['llama.attention.layer_norm_rms_epsilon', F32, 1e-5],
  ['llama.rope.dimension_count', U32, N_EMBD / N_HEAD],
  ['llama.vocab_size', U32, N_VOCAB],
  ...(embedding ? [['llama.pooling_type', U32, 1]] : []),
  ['tokenizer.ggml.model', STR, 'llama'],
  ['tokenizer.ggml.tokens', ARR, [STR, tokens]],
  ['tokenizer.ggml.scores', ARR, [F32, tokens.map(() => 0)]],
  ['tokenizer.ggml.token_type', ARR, [I32, types]],
  ['tokenizer.ggml.bos_token_id', U32, 1],
  ['tokenizer.ggml.eos_token_id', U32, IM_END],
  ['tokenizer.ggml.unknown_token_id', U32, 0],
  ['tokenizer.ggml.add_bos_token', BOOL, true],
  ['tokenizer.ggml.add_eos_token', BOOL, false],
  ['tokenizer.chat_template', STR, CHATML],
]
void IM_START

// Tensors: name and ggml dims (ne0 is the contiguous row length); `norm` tensors are ones, the rest random.
const tensors = [['token_embd.weight', [N_EMBD, N_VOCAB]]]
for (let i = 0; i < N_LAYER; i++) {
  tensors.push(
    [`blk.${i}.attn_norm.weight`, [N_EMBD], 'norm'],
    [`blk.${i}.attn_q.weight`, [N_EMBD, N_EMBD]],
    [`blk.${i}.attn_k.weight`, [N_EMBD, N_EMBD]],
    [`blk.${i}.attn_v.weight`, [N_EMBD, N_EMBD]],
    [`blk.${i}.attn_output.weight`, [N_EMBD, N_EMBD]],
    [`blk.${i}.ffn_norm.weight`, [N_EMBD], 'norm'],
    [`blk.${i}.ffn_gate.weight`, [N_EMBD, N_FF]],
    [`blk.${i}.ffn_down.weight`, [N_FF, N_EMBD]],
    [`blk.${i}.ffn_up.weight`, [N_EMBD, N_FF]],
  )
}
tensors.push(['output_norm.weight', [N_EMBD], 'norm'], ['output.weight', [N_EMBD, N_VOCAB]])

// mulberry32: a small seeded generator, so the weights (and the file) are the same every time.
let seed = 0x7ea
function random() {
  seed = (seed + 0x6d2b79f5) | 0
  let t = seed
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const parts = []
const u32 = (n) => {
  const b = Buffer.alloc(4)
  b.writeUInt32LE(n)
  parts.push(b)
}
const i32 = (n) => {
  const b = Buffer.alloc(4)
  b.writeInt32LE(n)
  parts.push(b)
}
const u64 = (n) => {
  const b = Buffer.alloc(8)
  b.writeBigUInt64LE(BigInt(n))
  parts.push(b)
}
const f32 = (n) => {
  const b = Buffer.alloc(4)
  b.writeFloatLE(n)
  parts.push(b)
}
const str = (s) => {
  const b = Buffer.from(s, 'utf8')
  u64(b.length)
  parts.push(b)
}
const value = (type, v) => {
  if (type === U32) u32(v)
  else if (type === I32) i32(v)
  else if (type === F32) f32(v)
  else if (type === BOOL) parts.push(Buffer.from([v ? 1 : 0]))
  else if (type === STR) str(v)
  else if (type === ARR) {
    const [itemType, items] = v
    u32(itemType)
    u64(items.length)
    for (const item of items) value(itemType, item)
  }
}

parts.push(Buffer.from('GGUF'))
u32(3)
u64(tensors.length)
u64(metadata.length)
for (const [key, type, v] of metadata) {
  str(key)
  u32(type)
  value(type, v)
}
const pad = (n) => (ALIGN - (n % ALIGN)) % ALIGN
let offset = 0
const data = []
for (const [name, dims, kind] of tensors) {
  str(name)
  u32(dims.length)
  for (const d of dims) u64(d)
  u32(0) // GGML_TYPE_F32
  u64(offset)
  const count = dims.reduce((a, b) => a * b, 1)
  const weights = Buffer.alloc(count * 4 + pad(count * 4))
  // Uniform in ±√(3/fan-in): unit variance through each layer, so the activations neither vanish nor blow up.
  const scale = Math.sqrt(3 / dims[0])
  for (let i = 0; i < count; i++) weights.writeFloatLE(kind === 'norm' ? 1 : (random() * 2 - 1) * scale, i * 4)
  data.push(weights)
  offset += weights.length
}
const head = Buffer.concat(parts)
writeFileSync(out, Buffer.concat([head, Buffer.alloc(pad(head.length)), ...data]))
