import type { Action } from '../types.ts'
import { ratelimitWrap } from './wrap.ts'

/** `ratelimit.wrap`: TEA's named rate limiters around any action (a model call, most often). */
export const ratelimitActions: Action[] = [ratelimitWrap]
