#!/usr/bin/env node
// Development entry for `npm link` / `npx tea`: runs the linux-x64 bundle (build it with `npm run build`).
const { existsSync } = require('node:fs')
const { join } = require('node:path')
const bundle = join(__dirname, '..', 'dist', 'linux-x64', 'tea.cjs')
if (!existsSync(bundle)) {
  console.error('tea: no bundle at dist/linux-x64/tea.cjs; run `npm run build` first')
  process.exit(2)
}
require(bundle)
