/**
 * `tea aof lint` on any task store (lint.ts is the filesystem's, which also checks the folder layout): entries that
 * are not valid tasks, what lint finds in each task (`lintTaskContent`), and run files that are not JSON. On NATS
 * every problem names the entry, `nats://host:port/<project>/tasks/<ID>` or `…/runs/<ID>/<file>`.
 */

import type { LintProblem } from './lint.ts'
import { lintTaskContent } from './lint.ts'
import { RUN_FILES, type TaskStore } from './store-port.ts'

export async function lintStore(store: TaskStore): Promise<LintProblem[]> {
  const { tasks, problems } = await store.list()
  const out: LintProblem[] = problems.map((p) => ({ ...p, code: 'unreadable_task' }))
  for (const task of tasks) {
    out.push(...lintTaskContent(task, task.status, task.path))
    for (const name of RUN_FILES) {
      const text = await store.readRunFile(task.id, name)
      if (text === undefined) continue
      try {
        JSON.parse(text)
      } catch {
        out.push({
          code: 'unreadable_run_artifact',
          message: 'is not valid JSON',
          where: { file: `${store.where}/runs/${task.id}/${name}` },
        })
      }
    }
  }
  return out
}
