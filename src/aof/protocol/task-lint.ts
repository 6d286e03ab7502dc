/**
 * What `tea aof lint` finds in one task that could be read, wherever it is stored: a frontmatter `status` that
 * disagrees with where the task is, keys the reference would refuse (`reference_rejects`, schemas/reference-keys.ts),
 * a lease outside in-progress, and timestamps with an offset (the reference rejects them). The folder layout's own
 * findings are the filesystem store's (store/fs/lint.ts).
 */

import type { Issue } from '../../core/issues.ts'
import { referenceKeyIssues } from './schemas/reference-keys.ts'
import type { Lease } from './schemas/task.ts'
import type { TaskStatus } from './status.ts'
import type { Task } from './task-file.ts'

/** One finding: an issue with lint's own `code` (`status_mismatch`, …), in the file or folder `where.file`. */
export type LintProblem = Issue & { code: string; where: { file: string } }

const TIMESTAMP_FIELDS = ['createdAt', 'updatedAt', 'lastTransitionAt'] as const

/** What lint finds in a task that could be read, wherever it is stored (`path` names it in the problems). */
export function lintTaskContent(task: Task, status: TaskStatus, path: string): LintProblem[] {
  const problems: LintProblem[] = []
  if (task.data.status !== status) {
    problems.push({
      code: 'status_mismatch',
      message: `frontmatter status is ${JSON.stringify(task.data.status)} but the file is in ${status}/`,
      where: { file: path },
    })
  }
  for (const issue of referenceKeyIssues(task.data))
    problems.push({
      code: 'reference_rejects',
      message: `${issue.path}: ${issue.message}; the reference implementation refuses this task and skips it`,
      where: { file: path },
    })
  if (task.data.lease && status !== 'in-progress') {
    problems.push({ code: 'lease_not_in_progress', message: `has a lease but status is ${status}`, where: { file: path } })
  }
  const stamps: Array<[string, unknown]> = TIMESTAMP_FIELDS.map((f) => [f, task.data[f]])
  const lease = task.data.lease as Lease | null | undefined
  if (lease) stamps.push(['lease.acquiredAt', lease.acquiredAt], ['lease.expiresAt', lease.expiresAt])
  for (const [f, v] of stamps) {
    if (typeof v === 'string' && !v.endsWith('Z'))
      problems.push({
        code: 'timestamp_offset',
        message: `${f} ${v} is not in UTC (Z); the reference implementation rejects offsets`,
        where: { file: path },
      })
  }
  return problems
}
