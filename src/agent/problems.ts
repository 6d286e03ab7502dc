import { TeaError, type ErrorCode } from '../core/errors.ts'
import type { Position } from './parse.ts'

/** One thing wrong with an agent file, at a place in it. */
export interface Problem extends Position {
  code: ErrorCode
  message: string
}

export function formatProblem(file: string, p: Problem): string {
  return `${file}:${p.line}:${p.col}: ${p.code} ${p.message}`
}

/** The error `tea run` raises for an invalid agent: every problem, one per line. */
export function invalidAgent(file: string, problems: Problem[]): TeaError {
  const n = problems.length
  return new TeaError('AGENT_INVALID', `${file}: ${n} problem${n === 1 ? '' : 's'}:\n${problems.map((p) => formatProblem(file, p)).join('\n')}`, {
    details: { file, problems },
  })
}
