import type { Action } from '../types.ts'
import { textChunk } from './chunk.ts'

/** `text.chunk`: splitting texts for embedding. */
export const textActions: Action[] = [textChunk]
