import type { Action } from '../types.ts'
import { memoryDelete } from './delete.ts'
import { memoryGet, memoryRetrieve } from './get.ts'
import { memoryGrep } from './grep.ts'
import { memoryList } from './list.ts'
import { memoryStore } from './store.ts'

/** `memory.store`, `memory.get` (and TEA's `memory.retrieve`), `memory.delete`, `memory.list`: key/value memory through `ctx.store`; TEA's `memory.grep` over a collection's documents. */
export const memoryActions: Action[] = [memoryStore, memoryGet, memoryRetrieve, memoryDelete, memoryList, memoryGrep]
