/**
 * `tea aof export` / `import`: everything of a project copied from one task store to another — every task, its run
 * files, its companion files, and every event (ids and times kept). Idempotent: a task whose `updatedAt` equals the
 * target's is left as it is, a newer one on the target is kept (and reported), an older one is replaced; run and
 * companion files are written only when they differ; events the target already holds (by id) are skipped. So a copy
 * can be run again after an interruption, and a second run writes nothing. A task the source cannot read is not
 * copied and is reported with its problem.
 */

import { errorIssue } from '../../core/errors.ts'
import type { Issue } from '../../core/issues.ts'
import { RUN_FILES, type TaskStore } from '../store/port.ts'
import type { Task } from '../protocol/task-file.ts'

export interface CopyReport {
  from: string
  to: string
  tasks: { created: number; replaced: number; same: number; kept: number }
  /** Tasks left as they were on the target because its copy is newer. */
  keptNewer: string[]
  runFiles: number
  files: number
  events: number
  /** Entries the source could not read, not copied (each at `where.file`). */
  notCopied: Issue[]
}

export async function copyProject(from: TaskStore, to: TaskStore): Promise<CopyReport> {
  const report: CopyReport = {
    from: from.where,
    to: to.where,
    tasks: { created: 0, replaced: 0, same: 0, kept: 0 },
    keptNewer: [],
    runFiles: 0,
    files: 0,
    events: 0,
    notCopied: [],
  }
  const { tasks, problems } = await from.list()
  report.notCopied.push(...problems)
  for (const task of tasks) {
    try {
      await copyTask(from, to, task, report)
    } catch (e) {
      // One task the target refuses (an unreadable copy there, a file in the way) does not stop the others.
      const issue = errorIssue(e)
      report.notCopied.push({ ...issue, where: { ...issue.where, file: issue.where?.file ?? task.path } })
    }
  }
  report.events = await to.importEvents(await from.readEvents())
  return report
}

async function copyTask(from: TaskStore, to: TaskStore, task: Task, report: CopyReport): Promise<void> {
  const verdict = await to.putTask(task)
  report.tasks[verdict]++
  if (verdict === 'kept') {
    report.keptNewer.push(task.id)
    return
  }
  for (const name of RUN_FILES) {
    const text = await from.readRunFile(task.id, name)
    if (text === undefined || text === (await to.readRunFile(task.id, name))) continue
    await to.writeRunFile(task.id, name, text)
    report.runFiles++
  }
  for (const path of await from.listFiles(task.id)) {
    const bytes = await from.readFile(task.id, path)
    if (!bytes) continue
    const there = await to.readFile(task.id, path)
    if (there && Buffer.from(there).equals(Buffer.from(bytes))) continue
    await to.writeFile(task.id, path, bytes)
    report.files++
  }
}
