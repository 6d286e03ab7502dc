import type { Action } from '../types.ts'
import { embeddingCreate } from './embedding-create.ts'
import { vectorIndexFiles } from './index-files.ts'
import { vectorDelete, vectorQuery } from './query.ts'
import { vectorStore } from './store.ts'

/** TEA's `embedding.create`, `vector.store`, `vector.query`, `vector.index_files`, and tea's `vector.delete`: collections in tea's store. */
export const vectorActions: Action[] = [embeddingCreate, vectorStore, vectorQuery, vectorDelete, vectorIndexFiles]
