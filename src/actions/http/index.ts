import type { Action } from '../types.ts'
import { httpGet } from './get.ts'
import { httpPost } from './post.ts'

/** `http.get`, `http.post`: http(s) only, with a timeout (default 30 s) and a response size cap (default 10 MiB). */
export const httpActions: Action[] = [httpGet, httpPost]
