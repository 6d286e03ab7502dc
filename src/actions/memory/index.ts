import type { Action } from '../types.ts'
import { memoryDelete } from './delete.ts'
import { memoryGet } from './get.ts'
import { memoryList } from './list.ts'
import { memoryStore } from './store.ts'

/** `memory.store`, `memory.get`, `memory.delete`, `memory.list`: key/value memory through `ctx.store`. */
export const memoryActions: Action[] = [memoryStore, memoryGet, memoryDelete, memoryList]
