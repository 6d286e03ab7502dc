import type { Action } from '../types.ts'
import { traceEnd, traceLog, traceStart } from './actions.ts'

/** `trace.start`, `trace.log`, `trace.end`: TEA's spans, written into the run's events and trace. */
export const traceActions: Action[] = [traceStart, traceLog, traceEnd]
