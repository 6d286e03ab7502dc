/**
 * The one way tests make temporary directories: `tempDir('tea-x-')` is a fresh directory under the system's temp
 * dir (mkdtemp: a name no other test file running at the same time can have), removed when the test process exits,
 * whatever the outcome. A test may remove it earlier; a directory that cannot be removed at exit (still mounted) is
 * left, never turned into a failure.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const made: string[] = []

/** `parent` is where the directory goes when the OS temp dir will not do (a bundle that must find node_modules). */
export function tempDir(prefix = 'tea-test-', parent = tmpdir()): string {
  if (made.length === 0) process.once('exit', removeAll)
  const dir = mkdtempSync(join(parent, prefix))
  made.push(dir)
  return dir
}

function removeAll(): void {
  for (const dir of made.splice(0)) {
    try {
      rmSync(dir, { recursive: true, force: true })
    } catch {
      // A mount left behind by a failed test: the test has said so.
    }
  }
}
