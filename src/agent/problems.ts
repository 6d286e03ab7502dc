import { TeaError, type ErrorCode } from '../core/errors.ts'
import { formatIssue, type Issue, type Where } from '../core/issues.ts'

/**
 * One thing wrong with an agent file: an issue with its code, at a line and column, and at the node and field it
 * concerns when there is one. The file is not in it: `formatProblem` and `invalidAgent` add the path as the user
 * gave it, where the loader knows only the resolved one.
 */
export type Problem = Issue & { code: ErrorCode; where: Where & { line: number; col: number } }

/** `file:line:col: CODE message`, as `tea validate` prints it. */
export function formatProblem(file: string, p: Problem): string {
  return formatIssue(inFile(file, p))
}

/** The error `tea run` raises for an invalid agent: at the file, with every problem as an issue. */
export function invalidAgent(file: string, problems: Problem[]): TeaError {
  const n = problems.length
  return new TeaError('AGENT_INVALID', `${n} problem${n === 1 ? '' : 's'}`, {
    where: { file },
    issues: problems.map((p) => inFile(file, p)),
  })
}

function inFile(file: string, p: Problem): Problem {
  return { ...p, where: { file, ...p.where } }
}
