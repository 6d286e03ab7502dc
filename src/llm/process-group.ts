/**
 * A command-line model runs as the leader of its own process group, so that stopping it stops everything it
 * started. Model CLIs are often wrappers (a shell script, `npx`, a Node launcher) whose children hold the pipe tea
 * reads the reply from: killing only the direct child left a `bash -c 'sleep 20'` grandchild holding stdout, and a
 * 3 s timeout took 61 s (security probe 2, G3). Here the child is spawned `detached` (setsid: a new session and
 * group, led by its pid) and every stop signals the group (`kill(-pid)`).
 *
 * A group of its own no longer receives the terminal's Ctrl-C along with tea, and outlives tea unless tea ends it,
 * so the groups still running when tea's process exits are killed then (a SIGKILL of tea itself cannot be caught:
 * under systemd the unit's cgroup is ended with it).
 */

import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process'

/** Leaders of the groups started and not yet closed; process ids are per process, so one set serves every call. */
const running = new Set<number>()
let exitHooked = false

/** `spawn` with the child leading a new process group, which tea ends at its own exit if the call has not. */
export function spawnGroup(command: string, args: readonly string[], options: SpawnOptions): ChildProcess {
  const child = spawn(command, args, { ...options, detached: process.platform !== 'win32' })
  const pid = child.pid
  if (pid !== undefined) {
    running.add(pid)
    hookExit()
    child.once('close', () => running.delete(pid))
  }
  return child
}

/**
 * Sends `signal` to the child's whole group. A group that has already ended is not an error. Where there are no
 * process groups (Windows) only the child is signalled.
 */
export function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return
  if (process.platform === 'win32') {
    child.kill(signal)
    return
  }
  try {
    process.kill(-child.pid, signal)
  } catch {
    // ESRCH: every member has exited already.
  }
}

function hookExit(): void {
  if (exitHooked) return
  exitHooked = true
  // 'exit' handlers run on process.exit(), the end of the event loop and an uncaught exception alike; only
  // synchronous work is possible there, which a kill is.
  process.on('exit', () => {
    for (const pid of running) {
      try {
        process.kill(process.platform === 'win32' ? pid : -pid, 'SIGKILL')
      } catch {
        // already gone
      }
    }
  })
}
