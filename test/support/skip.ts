/**
 * Tests that cannot run on this machine are reported, never counted as passes. `skipIf` registers the test with
 * uvu's `skip` (counted in its "Skipped" total) and prints one `SKIP <reason>` line that `scripts/test.mjs`
 * collects, repeats at the end of the run, and turns into a failure under CI (`CI=true`), where everything a test
 * needs is installed (.ci/run).
 */
import { execFileSync } from 'node:child_process'
import type { Test } from 'uvu'

/** Registers `name` on `t`: as a skipped test naming `reason` when `reason` is a string, else as the test itself. */
export function skipIf<T>(t: Test<T>, reason: string | false | undefined, name: string, body: () => unknown): void {
  if (!reason) {
    t(name, body as () => void | Promise<void>)
    return
  }
  reportSkip(`${name}: ${reason}`)
  t.skip(name, () => {})
}

/** Prints the line `scripts/test.mjs` reads as a skip (stdout, so it lands in the same stream as uvu's summary). */
export function reportSkip(reason: string): void {
  process.stdout.write(`\nSKIP ${reason}\n`)
}

/**
 * Why `command` cannot run here (`install` says how to get it), or undefined when `command ...versionArgs` runs:
 * for a test that needs a program from the machine (nats-server, openssl).
 */
export function commandMissing(command: string, versionArgs: string[], install: string): string | undefined {
  try {
    execFileSync(command, versionArgs, { stdio: 'ignore' })
    return undefined
  } catch {
    return `${command} is not installed (${install})`
  }
}
