/**
 * One `tea serve` per data dir. Two daemons over one data dir would both resume the runs a power cut left
 * `running` and both fire every schedule. The lock is a file, `<data-dir>/serve.lock`, holding the owner's pid,
 * its start time (core/process.ts: a reused pid after a reboot is not taken for the owner) and where it listens,
 * so the refusal can say which process to stop. A lock left by a process that is gone is taken over.
 */

import { openSync, readFileSync, rmSync, writeSync, closeSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { TeaError } from '../../core/errors.ts'
import { processAlive, selfIdentity } from '../../core/process.ts'

interface LockRecord {
  pid: number
  pidStart?: number
  listen: string
}

export interface ServeLock {
  release(): void
}

export function takeServeLock(dataDir: string, listen: string): ServeLock {
  mkdirSync(dataDir, { recursive: true })
  const file = join(dataDir, 'serve.lock')
  const me = selfIdentity()
  const record: LockRecord = { pid: me.pid, ...(me.startTicks !== undefined && { pidStart: me.startTicks }), listen }
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx')
      writeSync(fd, JSON.stringify(record))
      closeSync(fd)
      return { release: () => rmSync(file, { force: true }) }
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e
    }
    const owner = readLock(file)
    if (owner && processAlive(owner.pid, owner.pidStart)) {
      throw new TeaError('SERVE_RUNNING', `tea serve is already running for ${dataDir} (pid ${owner.pid}, listening on ${owner.listen})`, {
        hint: `stop it first (kill ${owner.pid}), or give this one another --data-dir`,
        details: { pid: owner.pid, listen: owner.listen },
      })
    }
    rmSync(file, { force: true }) // its owner is gone: a crash or a power cut
  }
  throw new TeaError('SERVE_RUNNING', `another tea serve took ${file} while this one started`)
}

function readLock(file: string): LockRecord | undefined {
  try {
    const r = JSON.parse(readFileSync(file, 'utf8')) as LockRecord
    return typeof r.pid === 'number' ? r : undefined
  } catch {
    return undefined // half-written by a process killed between open and write: stale
  }
}
