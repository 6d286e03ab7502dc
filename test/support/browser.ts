/**
 * Debian's Chromium for the page tests (test/e2e/serve-*.test.ts), driven by playwright-core: where it is, why a
 * test skips without it, and one browser per test file (a launch costs seconds on a loaded machine), closed after
 * the file's last test.
 */
import { existsSync } from 'node:fs'
import type { Browser } from 'playwright-core'

export const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p))
export const NO_BROWSER = CHROMIUM ? false : 'no chromium at /usr/bin/chromium (bash .ci/install-browser.sh installs it)'

/** The file's browser, launched at the first call; `after` (the suite's hook) closes it. */
export function sharedBrowser(after: (hook: () => Promise<void>) => void): () => Promise<Browser> {
  let launched: Promise<Browser> | undefined
  after(async () => {
    if (launched) await (await launched).close()
  })
  return () =>
    (launched ??= import('playwright-core').then(({ chromium }) => chromium.launch({ executablePath: CHROMIUM!, args: ['--no-sandbox'] })))
}
