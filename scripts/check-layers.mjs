// The layer check (docs/architecture.md): every import in src/ points down the layer order, no two folders import
// each other through any chain (no cycle between folders), no file imports itself back through other files (no
// cycle between files, type-only imports included), inside src/aof/ every import keeps to the rooms' rules
// (`AOF_ROOMS`), and an optional feature is named in one place: its entry in src/feature-list.ts, the only module
// that imports a feature's folder from outside it or writes a `__FEATURE_*__` flag (`featureRules`). Part of
// `npm test`; `node scripts/check-layers.mjs` alone prints every violation and exits 1 when there is one.
//
// Imports are read with a small scanner rather than a full parser: static `import … from`, `export … from`,
// `import('…')` and `import type`, which is every form src/ uses. Comments and strings that merely look like
// imports are skipped because the scanner only matches at the start of a statement or at `import(`.
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The layers, lowest first. A module may import its own layer's folder and anything listed in its `uses`. The
 * root modules (src/*.ts: the feature list, the registries, the pool's worker entry and the public API) sit above
 * every feature and below the CLI. A feature whose entry is a folder of its own at the top of src/ (src/lua/) is a
 * layer of `FEATURE_USES`, from the feature list; it needs no line here.
 */
export const LAYERS = {
  core: [],
  template: ['core'],
  store: ['core'],
  llm: ['core'],
  pool: ['core'],
  aof: ['core'],
  code: ['core', 'pool'],
  sea: ['core', 'pool'],
  actions: ['core', 'template', 'code', 'llm', 'store', 'pool', 'aof'],
  agent: ['core', 'template', 'code', 'actions', 'llm'],
  engine: ['core', 'template', 'code', 'actions', 'agent', 'llm', 'store'],
  '(root)': ['core', 'template', 'store', 'llm', 'pool', 'aof', 'code', 'sea', 'actions', 'agent', 'engine'],
  cli: ['core', 'template', 'store', 'llm', 'pool', 'aof', 'code', 'sea', 'actions', 'agent', 'engine', '(root)'],
}

/** What a feature's own folder may import: the layers an action and a pool task handler are written over. */
export const FEATURE_USES = ['core', 'template', 'code', 'actions', 'llm', 'store', 'pool', 'sea']

/** The one module that names the optional features (src/feature-list.ts). */
export const FEATURE_LIST = 'src/feature-list.ts'

/**
 * The features of src/feature-list.ts: each entry's `name` and the folder of the module its `load` imports
 * (`planning` for `import('./planning/index.ts')`, `aof/store/nats` for the fleet's store), relative to src/.
 */
export function readFeatures(root) {
  let text
  try {
    text = stripComments(readFileSync(join(root, FEATURE_LIST), 'utf8'))
  } catch {
    return []
  }
  const features = []
  for (const m of text.matchAll(/\bname:\s*'([^']+)'[\s\S]*?\bimport\(\s*'\.\/([^']+)'\s*\)/g))
    features.push({ name: m[1], folder: dirname(m[2]), entry: m[2] })
  return features
}

/**
 * The rooms of `src/aof/` (docs/architecture.md, AOF): the protocol's rules import nothing else of aof; the store
 * port names the protocol's types; the two backends share only the port and `store/shared.ts`, and never import
 * each other; the roles are written over the protocol and the port, and are handed a backend. `src/aof/index.ts`
 * puts them together for a data dir.
 */
export const AOF_ROOMS = {
  protocol: [],
  port: ['protocol'],
  shared: ['protocol', 'port'],
  fs: ['protocol', 'port', 'shared'],
  nats: ['protocol', 'port', 'shared'],
  roles: ['protocol', 'port'],
  '(aof)': ['protocol', 'port', 'shared', 'fs', 'nats', 'roles'],
}

/** The room of a file under src/aof/ (`relPath` relative to src/aof/), or undefined when it is in none. */
function aofRoom(relPath) {
  if (relPath === 'index.ts') return '(aof)'
  if (relPath === 'store/port.ts') return 'port'
  if (relPath === 'store/shared.ts') return 'shared'
  const [top, sub] = relPath.split('/')
  if (top === 'protocol' || top === 'roles') return top
  if (top === 'store' && (sub === 'fs' || sub === 'nats')) return sub
  return undefined
}

const IMPORT = /(?:^|[;\n}])\s*(?:import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g

export function scan(srcDir) {
  const files = walk(srcDir)
  const edges = []
  for (const file of files) {
    const text = stripComments(readFileSync(file, 'utf8'))
    for (const m of text.matchAll(IMPORT)) {
      const spec = m[2] ?? m[3]
      if (!spec.startsWith('.')) continue
      edges.push({ from: file, to: resolve(dirname(file), spec), typeOnly: Boolean(m[1]), dynamic: m[3] !== undefined })
    }
  }
  return { files, edges }
}

export function check(root) {
  const srcDir = join(root, 'src')
  const { files, edges } = scan(srcDir)
  const rel = (f) => relative(root, f)
  const layerOf = (f) => {
    const parts = relative(srcDir, f).split('/')
    return parts.length === 1 ? '(root)' : parts[0]
  }
  const features = readFeatures(root)
  const layers = { ...LAYERS }
  for (const { folder } of features)
    if (!folder.includes('/') && !(folder in LAYERS)) {
      layers[folder] = FEATURE_USES
      layers['(root)'] = [...layers['(root)'], folder]
    }
  const problems = []
  for (const f of files)
    if (!(layerOf(f) in layers))
      problems.push(`${rel(f)}: folder '${layerOf(f)}' is in no layer (add it to scripts/check-layers.mjs and docs/architecture.md)`)
  for (const e of edges) {
    const from = layerOf(e.from)
    const to = layerOf(e.to)
    if (from === to || !(from in layers)) continue
    if (!layers[from].includes(to)) problems.push(`${rel(e.from)} imports ${rel(e.to)}: ${from} may not import ${to}`)
  }
  problems.push(...featureRules(root, files, edges, features))
  const aofDir = join(srcDir, 'aof')
  const roomOf = (f) => aofRoom(relative(aofDir, f))
  for (const f of files)
    if (layerOf(f) === 'aof' && roomOf(f) === undefined)
      problems.push(`${rel(f)}: in no room of src/aof/ (protocol/, store/port.ts, store/shared.ts, store/fs/, store/nats/, roles/)`)
  for (const e of edges) {
    if (layerOf(e.from) !== 'aof' || layerOf(e.to) !== 'aof') continue
    const from = roomOf(e.from)
    const to = roomOf(e.to)
    if (from === undefined || to === undefined || from === to) continue
    if (!AOF_ROOMS[from].includes(to)) problems.push(`${rel(e.from)} imports ${rel(e.to)}: aof ${from} may not import aof ${to}`)
  }
  for (const cycle of cycles(edges.map((e) => [layerOf(e.from), layerOf(e.to)]).filter(([a, b]) => a !== b)))
    problems.push(`folder cycle: ${cycle.join(' → ')}`)
  for (const cycle of cycles(edges.map((e) => [rel(e.from), rel(e.to)]))) problems.push(`file cycle: ${cycle.join(' → ')}`)
  return { problems, files: files.length, imports: edges.length }
}

/**
 * A feature is named once (issue 34): no module but the feature list imports a feature's folder from outside it
 * (type-only imports included: a type names the feature too), and no module but the list writes a build flag
 * (`__FEATURE_<NAME>__`), so that the flag's literal stands where esbuild can drop the feature whole.
 */
function featureRules(root, files, edges, features) {
  const rel = (f) => relative(root, f)
  const folderOf = (f) => {
    const r = relative(join(root, 'src'), f)
    return features.find(({ folder }) => r.startsWith(`${folder}/`))
  }
  const problems = []
  for (const e of edges) {
    const to = folderOf(e.to)
    if (!to || rel(e.from) === FEATURE_LIST || folderOf(e.from) === to) continue
    problems.push(
      `${rel(e.from)} imports ${rel(e.to)} of the optional feature ${to.name}: only ${FEATURE_LIST} may (add what it needs to the feature's entry there)`,
    )
  }
  for (const f of files) {
    if (rel(f) === FEATURE_LIST) continue
    const flag = /\b__FEATURE_[A-Z0-9_]+__/.exec(stripComments(readFileSync(f, 'utf8')))
    if (flag) problems.push(`${rel(f)} reads the build flag ${flag[0]}: only ${FEATURE_LIST} may (give the feature's entry what it needs)`)
  }
  return problems
}

/** Every strongly connected component with more than one member, as a cycle path (Tarjan). */
function cycles(pairs) {
  const out = new Map()
  for (const [a, b] of pairs) {
    if (!out.has(a)) out.set(a, new Set())
    if (!out.has(b)) out.set(b, new Set())
    out.get(a).add(b)
  }
  let index = 0
  const idx = new Map()
  const low = new Map()
  const stack = []
  const on = new Set()
  const found = []
  const visit = (v) => {
    idx.set(v, index)
    low.set(v, index++)
    stack.push(v)
    on.add(v)
    for (const w of out.get(v)) {
      if (!idx.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v), low.get(w)))
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)))
    }
    if (low.get(v) !== idx.get(v)) return
    const scc = []
    let w
    do {
      w = stack.pop()
      on.delete(w)
      scc.push(w)
    } while (w !== v)
    if (scc.length > 1) found.push(pathWithin(new Set(scc), out))
  }
  for (const v of [...out.keys()].sort()) if (!idx.has(v)) visit(v)
  return found
}

/** One concrete cycle through the component, for the message: start at its first member and walk back to it. */
function pathWithin(members, out) {
  const start = [...members].sort()[0]
  const prev = new Map([[start, null]])
  const queue = [start]
  while (queue.length) {
    const v = queue.shift()
    for (const w of out.get(v)) {
      if (!members.has(w)) continue
      if (w === start) {
        const path = [start]
        for (let x = v; x !== start; x = prev.get(x)) path.splice(1, 0, x)
        return [...path, start]
      }
      if (!prev.has(w)) {
        prev.set(w, v)
        queue.push(w)
      }
    }
  }
  return [...members, start]
}

function walk(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e) =>
      e.isDirectory() ? walk(join(dir, e.name)) : /\.(ts|mjs)$/.test(e.name) && !e.name.endsWith('.d.ts') ? [join(dir, e.name)] : [],
    )
}

function stripComments(text) {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1')
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..')
  const { problems, files, imports } = check(root)
  for (const p of problems) console.error(p)
  console.error(
    problems.length
      ? `layer check: ${problems.length} problem${problems.length === 1 ? '' : 's'}`
      : `layer check: ${files} files, ${imports} imports, every one down the layer order, no cycles`,
  )
  process.exitCode = problems.length ? 1 : 0
}
