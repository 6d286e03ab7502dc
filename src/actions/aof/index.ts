import type { Action } from '../types.ts'
import { aofHandoff } from './handoff.ts'
import { aofReport } from './report.ts'
import { aofStatus } from './status.ts'

/** `aof.report`, `aof.status`, `aof.handoff`: YAML agents speaking AOF/1 to the task store of the run's data dir. */
export const aofActions: Action[] = [aofReport, aofStatus, aofHandoff]
