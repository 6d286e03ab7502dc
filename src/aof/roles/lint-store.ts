/**
 * `tea aof lint` on any task store (store/fs/lint.ts is the filesystem's, which also checks the folder layout): entries that
 * are not valid tasks, what lint finds in each task (`lintTaskContent`), run files that are not JSON, and a task
 * whose status is not where its history leaves it (`history_gap`: on NATS the compare-and-set is the commit point
 * and the event follows it, so a board that died in between moved the task without saying so; docs/fleet.md). On
 * NATS every problem names the entry, `nats://host:port/<project>/tasks/<ID>` or `…/runs/<ID>/<file>`.
 */

import { errorIssue } from '../../core/errors.ts'
import { parseJsonOrUndefined } from '../../core/json.ts'
import { isPlainObject } from '../../core/util.ts'
import { type LintProblem, lintTaskContent } from '../protocol/task-lint.ts'
import { RUN_FILES, type TaskStore } from '../store/port.ts'

export async function lintStore(store: TaskStore): Promise<LintProblem[]> {
  const { tasks, problems } = await store.list()
  const out: LintProblem[] = problems.map((p) => ({ ...p, code: 'unreadable_task' }))
  const history = await lastStatuses(store)
  for (const task of tasks) {
    out.push(...lintTaskContent(task, task.status, task.path))
    const logged = history.get(task.id)
    if (logged !== undefined && logged !== task.status) {
      out.push({
        code: 'history_gap',
        message: `is ${task.status} but its events leave it ${logged}: a move was not logged (the board died between the two)`,
        where: { file: task.path },
      })
    }
    for (const name of RUN_FILES) {
      const where = { file: `${store.where}/runs/${task.id}/${name}` }
      let text: string | undefined
      try {
        text = await store.readRunFile(task.id, name)
      } catch (e) {
        // A file that cannot be read (on NATS: a `$ref` to an object that is missing or fails its digest) is one
        // problem of the report, not the end of it.
        out.push({ ...errorIssue(e), code: 'unreadable_run_artifact', where })
        continue
      }
      if (text === undefined) continue
      if (parseJsonOrUndefined(text) === undefined) out.push({ code: 'unreadable_run_artifact', message: 'is not valid JSON', where })
    }
  }
  return out
}

/**
 * Each task's status as its events tell it: the latest move's `to`, else the status it was created in. Latest by
 * timestamp, not by position: an import appends another store's events after this one's.
 */
async function lastStatuses(store: TaskStore): Promise<Map<string, string>> {
  const out = new Map<string, { to: string; at: string }>()
  for (const e of await store.readEvents()) {
    if (e.taskId === undefined) continue
    // An event is what its writer made it: a payload may be missing or not an object.
    const payload = (isPlainObject(e.payload) ? e.payload : {}) as { to?: unknown; status?: unknown }
    const to = e.type === 'task.transitioned' ? payload.to : e.type === 'task.created' ? payload.status : undefined
    const seen = out.get(e.taskId)
    if (typeof to === 'string' && (!seen || e.timestamp >= seen.at)) out.set(e.taskId, { to, at: e.timestamp })
  }
  return new Map([...out].map(([id, v]) => [id, v.to]))
}
