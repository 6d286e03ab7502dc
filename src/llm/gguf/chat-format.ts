/**
 * TEA's `chat_format` (llama-cpp-python's names) as node-llama-cpp's chat wrapper types. Without it the template
 * comes from the GGUF file (`tokenizer.chat_template`), recognised as a known wrapper or run as Jinja.
 */

import { TeaError } from '../../core/errors.ts'

const FORMATS: Readonly<Record<string, string>> = {
  chatml: 'chatML',
  'llama-2': 'llama2Chat',
  llama2: 'llama2Chat',
  'llama-3': 'llama3',
  llama3: 'llama3',
  gemma: 'gemma',
  mistral: 'mistral',
  'mistral-instruct': 'mistral',
  alpaca: 'alpacaChat',
  falcon: 'falconChat',
  functionary: 'functionary',
  qwen: 'qwen',
  deepseek: 'deepSeek',
  general: 'general',
}

/** The wrapper type for a `chat_format`, or undefined for the file's own template. */
export function chatWrapperType(format: string | undefined): string | undefined {
  if (format === undefined || format === '' || format === 'auto') return undefined
  const type = FORMATS[format.toLowerCase()]
  if (type) return type
  throw new TeaError('INVALID_PARAMS', `chat_format '${format.slice(0, 40)}' is not one tea knows`, {
    hint: `leave chat_format out (the template in the GGUF file is used), or give one of ${Object.keys(FORMATS).join(', ')}`,
  })
}
