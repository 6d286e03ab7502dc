/**
 * `tea aof lint`: every problem in the data dir, each with the path of the file at fault — unreadable or invalid
 * task files, frontmatter `status` that disagrees with the folder, the same task in two folders, a lease on a task
 * that is not in progress, timestamps with an offset (the reference rejects them), stray files and folders, symlinks
 * and other non-regular files (never opened: a FIFO would block), keys tea passes through that the reference would
 * refuse (`reference_rejects`, see schemas/reference-keys.ts), unreadable run artifacts and event logs. Reading
 * only: lint never repairs (the reference's lint created folders as a side effect).
 */

import { parseJsonOrUndefined } from '../../../core/json.ts'
import { existsSync, lstatSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { errorIssue } from '../../../core/errors.ts'
import type { Issue } from '../../../core/issues.ts'
import { type AofContext, eventsDir, legacyRunDirPath, runDirPath, statusDir, tasksDir } from './context.ts'
import { errno, readError, readRegular } from './fs-atomic.ts'
import { TASK_STATUSES, type TaskStatus, isTaskStatus } from '../../protocol/status.ts'
import { readTaskFile } from './read-task.ts'
import { isTaskId } from '../../protocol/task-id.ts'
import { type LintProblem, lintTaskContent } from '../../protocol/task-lint.ts'

export function lintDataDir(ctx: AofContext): LintProblem[] {
  const problems: LintProblem[] = []
  const seen = new Map<string, string[]>()
  for (const entry of safeReaddir(tasksDir(ctx))) {
    if (entry.startsWith('.')) continue
    const full = join(tasksDir(ctx), entry)
    if (!isTaskStatus(entry))
      problems.push({
        code: 'unknown_status_dir',
        message: `not a status folder (expected one of ${TASK_STATUSES.join(', ')})`,
        where: { file: full },
      })
  }
  for (const status of TASK_STATUSES) {
    for (const name of safeReaddir(statusDir(ctx, status))) {
      if (name.startsWith('.')) continue
      const path = join(statusDir(ctx, status), name)
      if (isSymlink(path)) {
        // Never followed: a task file or companion folder that is a link may lead anywhere (D6 probe notes).
        problems.push({ code: 'symlink', message: 'is a symbolic link; AOF never follows links in status folders', where: { file: path } })
        continue
      }
      if (!name.endsWith('.md')) {
        if (isTaskId(name) && isDir(path)) {
          if (!existsSync(`${path}.md`))
            problems.push({ code: 'orphan_task_dir', message: `companion folder without ${name}.md`, where: { file: path } })
        } else
          problems.push({ code: 'unexpected_file', message: 'not a task file (TASK-….md) or its companion folder', where: { file: path } })
        continue
      }
      const id = name.slice(0, -3)
      if (!isTaskId(id)) {
        problems.push({
          code: 'invalid_task_id',
          message: `file name is not a task id (TASK-YYYY-MM-DD-NNN or TASK-YYYY-MM-DD-XXXXXXXX)`,
          where: { file: path },
        })
        continue
      }
      seen.set(id, [...(seen.get(id) ?? []), path])
      lintTask(path, status, id, problems)
    }
  }
  for (const [id, paths] of seen) {
    if (paths.length > 1)
      for (const path of paths)
        problems.push({ code: 'duplicate_task', message: `${id} exists in ${paths.length} status folders`, where: { file: path } })
    lintRun(ctx, id, problems)
  }
  lintEvents(ctx, problems)
  return problems
}

function lintTask(path: string, status: TaskStatus, id: string, problems: LintProblem[]): void {
  let task
  try {
    task = readTaskFile(path, status, id)
  } catch (e) {
    // The error is placed in the file already (at its line, for a YAML error); lint's code replaces its own.
    const issue = errorIssue(e)
    problems.push({ ...issue, code: 'unreadable_task', where: { ...issue.where, file: path } })
    return
  }
  problems.push(...lintTaskContent(task, status, path))
}

function lintRun(ctx: AofContext, id: string, problems: LintProblem[]): void {
  const legacy = legacyRunDirPath(ctx, id)
  if (existsSync(legacy))
    problems.push({
      code: 'legacy_run_dir',
      message: `run artifacts in tea's old runs/ folder, which the reference implementation does not read; 'tea aof init' moves them to state/runs/`,
      where: { file: legacy },
    })
  for (const dir of [runDirPath(ctx, id), legacy]) lintRunDir(dir, problems)
}

function lintRunDir(dir: string, problems: LintProblem[]): void {
  for (const file of ['run.json', 'run_heartbeat.json', 'run_result.json']) {
    const path = join(dir, file)
    let raw: string
    try {
      raw = readRegular(path)
    } catch (e) {
      if (errno(e) === 'ENOENT') continue
      problems.push({ ...errorIssue(readError(e, path, 'run artifact')), code: 'unreadable_run_artifact', where: { file: path } })
      continue
    }
    // Not the parser's message: it quotes the text, and the text is no business of a report.
    if (parseJsonOrUndefined(raw) === undefined) {
      problems.push({ code: 'unreadable_run_artifact', message: 'is not valid JSON', where: { file: path } })
    }
  }
}

/** Event logs (`events/YYYY-MM-DD.jsonl`) that are not regular files: readers skip them, lint names them. */
function lintEvents(ctx: AofContext, problems: LintProblem[]): void {
  for (const name of safeReaddir(eventsDir(ctx))) {
    if (!/^\d{4}-\d{2}-\d{2}\.jsonl$/.test(name)) continue
    const path = join(eventsDir(ctx), name)
    let stat
    try {
      stat = lstatSync(path)
    } catch {
      continue
    }
    if (!stat.isFile()) {
      const why = stat.isSymbolicLink() ? 'is a symbolic link' : 'is not a regular file'
      problems.push({ code: 'unreadable_event_log', message: `${why}; event readers skip it and writers refuse it`, where: { file: path } })
    }
  }
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir).sort()
  } catch (e) {
    if (errno(e) === 'ENOENT') return []
    throw e
  }
}

function isDir(path: string): boolean {
  try {
    return lstatSync(path).isDirectory()
  } catch {
    return false
  }
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink()
  } catch {
    return false
  }
}
