/**
 * The filesystem store's side of what the NATS store also keeps: raw run files, companion files, tasks and events
 * written as they are (an import), and one task's unit of work under its lock. Paths inside a task's companion
 * folder are relative and may not leave it; only regular files are listed or read (a symlink is never followed).
 */

import { lstatSync, readdirSync, renameSync } from 'node:fs'
import { join } from 'node:path'
import { TeaError } from '../../../core/errors.ts'
import { readRegularFile } from '../../../core/regular-file.ts'
import { type AofContext, eventsDir, runDirPath, taskDirPath, taskFilePath } from './context.ts'
import type { AofEvent } from '../../protocol/events.ts'
import { compareStamps, relativePath } from '../shared.ts'
import { readEvents } from './event-log.ts'
import { appendLine, errno, mkdirs, readError, readRegular, remove, writeError, writeFileAtomic } from './fs-atomic.ts'
import { migrateRunDir, readableRunDir } from './run-artifacts.ts'
import type { RunFileName, TaskStore, TaskUnit } from '../port.ts'
import { type Task, renderTask } from '../../protocol/task-file.ts'
import { getTask, peekTask, readTaskLocked, withTaskLock } from './task-store.ts'
import { moveTaskLocked, updateTaskLocked } from './task-transition.ts'

type FsFiles = Pick<
  TaskStore,
  | 'withTask'
  | 'readRunFile'
  | 'writeRunFile'
  | 'listFiles'
  | 'readFile'
  | 'writeFile'
  | 'putTask'
  | 'importEvents'
  | 'recordMessage'
  | 'markRouted'
  | 'wasRouted'
>

export function fsFiles(ctx: AofContext): FsFiles {
  /** The task's companion folder, or undefined when there is no such task (it has no files, as on NATS). */
  const companion = async (id: string): Promise<string | undefined> => {
    const task = await getTask(ctx, id)
    return task ? taskDirPath(ctx, task.status, id) : undefined
  }
  return {
    withTask: (id, fn) =>
      withTaskLock(ctx, id, async () => {
        const found = readTaskLocked(ctx, id)
        if (!found) return fn(undefined)
        let task = found
        const unit: TaskUnit = {
          get task() {
            return task
          },
          move: async (to, options) => (task = moveTaskLocked(ctx, task, to, options)),
          // Under the lock no one sees the task between two moves: one after the other is one write here.
          moves: async (path) => {
            for (const { to, options } of path) task = moveTaskLocked(ctx, task, to, options)
            return task
          },
          update: async (mutate) => (task = updateTaskLocked(ctx, task, mutate)),
          peek: async (other) => peekTask(ctx, other),
        }
        return fn(unit)
      }),
    async readRunFile(id, name) {
      const path = join(readableRunDir(ctx, id), name)
      try {
        return readRegular(path)
      } catch (e) {
        if (errno(e) === 'ENOENT') return undefined
        throw readError(e, path, 'run artifact')
      }
    },
    async writeRunFile(id, name: RunFileName, text) {
      migrateRunDir(ctx, id)
      const path = join(runDirPath(ctx, id), name)
      if (text === undefined) remove(path)
      else writeFileAtomic(path, text)
    },
    async listFiles(id) {
      const dir = await companion(id)
      return dir === undefined ? [] : walk(dir, '')
    },
    async readFile(id, path) {
      const rel = relativePath(path)
      const dir = await companion(id)
      if (dir === undefined) return undefined
      const full = join(dir, rel)
      try {
        return readRegularFile(full)
      } catch (e) {
        if (errno(e) === 'ENOENT') return undefined
        throw readError(e, full, 'companion file')
      }
    },
    async writeFile(id, path, bytes) {
      const rel = relativePath(path)
      const dir = await companion(id)
      if (dir === undefined) throw new TeaError('AOF_NOT_FOUND', `task ${id} not found in ${ctx.dataDir}/tasks`)
      writeFileAtomic(join(dir, rel), bytes)
    },
    putTask: (task) =>
      withTaskLock(ctx, task.id, () => {
        const existing = readTaskLocked(ctx, task.id)
        const verdict = compareStamps(existing, task)
        if (verdict === 'same' || verdict === 'kept') return verdict
        const path = taskFilePath(ctx, task.status, task.id)
        writeFileAtomic(path, renderTask({ ...task, path }))
        if (existing && existing.status !== task.status) {
          moveFolder(taskDirPath(ctx, existing.status, task.id), taskDirPath(ctx, task.status, task.id))
          remove(existing.path)
        }
        return verdict
      }),
    async importEvents(events) {
      const known = new Set(readEvents(ctx).map((e) => e.eventId))
      const byDay = new Map<string, AofEvent[]>()
      for (const e of events) {
        if (known.has(e.eventId)) continue
        known.add(e.eventId)
        const day = /^\d{4}-\d{2}-\d{2}/.test(e.timestamp) ? e.timestamp.slice(0, 10) : new Date().toISOString().slice(0, 10)
        byDay.set(day, [...(byDay.get(day) ?? []), e])
      }
      let added = 0
      for (const [day, list] of [...byDay].sort(([a], [b]) => a.localeCompare(b))) {
        appendLine(join(eventsDir(ctx), `${day}.jsonl`), list.map((e) => JSON.stringify(e)).join('\n'))
        added += list.length
      }
      return added
    },
    recordMessage: async () => 'unrecorded',
    markRouted: async () => {},
    wasRouted: async () => false,
  }
}

// --- internal ---

function walk(dir: string, prefix: string): string[] {
  let names: string[]
  try {
    names = readdirSync(dir).sort()
  } catch (e) {
    if (errno(e) === 'ENOENT') return []
    throw e
  }
  const out: string[] = []
  for (const name of names) {
    if (name.startsWith('.')) continue
    const full = join(dir, name)
    const rel = prefix ? `${prefix}/${name}` : name
    const st = lstatSync(full)
    if (st.isDirectory()) out.push(...walk(full, rel))
    else if (st.isFile()) out.push(rel)
  }
  return out
}

function moveFolder(from: string, to: string): void {
  try {
    mkdirs(join(to, '..'))
    renameSync(from, to)
  } catch (e) {
    if (errno(e) === 'ENOENT') return
    throw writeError(e, to)
  }
}
