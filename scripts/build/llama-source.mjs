// llama.cpp for armv7, compiled from the source node-llama-cpp ships, because its `@node-llama-cpp/linux-armv7l`
// package carries AArch64 files (x86-64 up to 3.18) that no 32-bit ARM board loads. node-llama-cpp's npm package
// holds all it takes, offline: llama.cpp's release as a git bundle (llama/gitRelease.bundle, named by
// llama/llama.cpp.info.json) and its patches, the addon's C++ (llama/addon/) and CMakeLists.txt, and Node-API's
// headers come from node-api-headers and node-addon-api (Node-API is ABI-stable: no Node headers to fetch). The
// compiler is Debian's cross g++ (g++-arm-linux-gnueabihf, .ci/install-sea-deps.sh).
//
// It is configured as node-llama-cpp's own build does (dist/bindings/utils/compileLLamaCpp.js, its CI mode): the
// cmake-js variables set by hand, CPU only (no Metal/CUDA/Vulkan), no OpenMP (libgomp is not on every board),
// no curl/httplib/openssl, none of llama.cpp's tests, examples, tools or server. Only the addon's targets are
// built (llama-addon, llama, llama-common, ggml, ggml-base, ggml-cpu), Release (-O3, llama.cpp's default), and
// the results are stripped. On 2 busy cores that is tens of minutes, so the files are kept in the build cache
// ($TEA_BUILD_CACHE, as the Node binaries are), keyed by node-llama-cpp's version, the llama.cpp release, the
// compiler's version and the options below: a second build reuses them.
//
//   node scripts/build/llama-source.mjs      builds (or finds) armv7's files and prints their folder
import { spawn, execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  cpSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { createRequire } from 'node:module'
import { availableParallelism } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildCache } from '../fetch-runtimes.mjs'
import { commandExists } from './qemu.mjs'

/**
 * The arches whose llama.cpp is compiled here, with their compiler and flags. armv7-a with NEON and VFPv4 (the
 * Cortex-A7 of a Raspberry Pi 2, and the A53/A72 of a Pi 3/4 running a 32-bit OS): the Pi 1 and Zero (ARMv6) are
 * out, as they are for Node 20's armv7l build. VFPv4 brings fused multiply-add, which ggml's NEON code uses.
 */
const FROM_SOURCE = {
  arm: {
    name: 'linux-armv7l',
    triple: 'arm-linux-gnueabihf',
    debianPackage: 'g++-arm-linux-gnueabihf',
    toolchain: 'linux.host-x64.target-arm7l.cmake',
    march: 'armv7-a+neon-vfpv4',
  },
}

/** Whether `arch`'s llama.cpp comes from here rather than from its `@node-llama-cpp/*` package. */
export function builtFromSource(arch) {
  return arch in FROM_SOURCE
}

/** The cmake options, as compileLLamaCpp.js sets them for a CPU-only CI build, plus what tea leaves out. */
function cmakeOptions(spec, root, variant) {
  const flags = `-march=${spec.march} -mfloat-abi=hard -Wno-psabi`
  const req = createRequire(join(root, 'package.json'))
  return {
    CMAKE_BUILD_TYPE: 'Release',
    CMAKE_C_FLAGS: flags,
    CMAKE_CXX_FLAGS: flags,
    // What cmake-js would pass: Node-API's headers; on Linux there is no node.lib to link.
    CMAKE_JS_INC: req('node-api-headers').include_dir,
    CMAKE_JS_SRC: '',
    CMAKE_JS_LIB: '',
    NLC_CURRENT_PLATFORM: `linux-${process.arch}`,
    NLC_TARGET_PLATFORM: spec.name,
    NLC_VARIANT: variant,
    GGML_BUILD_NUMBER: '1',
    GGML_NATIVE: 'OFF',
    GGML_CPU_ARM_ARCH: spec.march,
    GGML_BACKEND_DL: 'OFF',
    GGML_OPENMP: 'OFF',
    GGML_METAL: 'OFF',
    GGML_CUDA: 'OFF',
    GGML_VULKAN: 'OFF',
    GGML_CCACHE: 'OFF',
    LLAMA_CURL: 'OFF',
    LLAMA_HTTPLIB: 'OFF',
    LLAMA_OPENSSL: 'OFF',
    LLAMA_BUILD_BORINGSSL: 'OFF',
    LLAMA_BUILD_TESTS: 'OFF',
    LLAMA_BUILD_EXAMPLES: 'OFF',
    LLAMA_BUILD_TOOLS: 'OFF',
    LLAMA_BUILD_SERVER: 'OFF',
    LLAMA_BUILD_APP: 'OFF',
    LLAMA_SUBPROCESS: 'OFF',
  }
}

/** node-llama-cpp's folder, version and the llama.cpp release its bundle holds. */
function nodeLlamaCpp(root) {
  const dir = join(dirname(createRequire(join(root, 'package.json')).resolve('node-llama-cpp')), '..')
  const { version } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  const info = JSON.parse(readFileSync(join(dir, 'llama', 'llama.cpp.info.json'), 'utf8'))
  return { dir, version, tag: info.tag, repo: info.llamaCppGithubRepo }
}

/** What is missing to compile for `spec`, as problems naming the Debian package that brings each. */
function missing(spec, which = commandExists) {
  const need = [
    [`${spec.triple}-g++`, spec.debianPackage],
    [`${spec.triple}-gcc`, spec.debianPackage.replace(/^g\+\+/, 'gcc')],
    [`${spec.triple}-strip`, `binutils-${spec.triple}`],
    ['cmake', 'cmake'],
    ['git', 'git'],
  ]
  return need.filter(([cmd]) => !which(cmd)).map(([cmd, pkg]) => `${cmd} (Debian package ${pkg})`)
}

/**
 * The folder of `arch`'s llama.cpp files (llama-addon.node, its libraries, _nlcBuildMetadata.json) compiled from
 * node-llama-cpp's source, building them first when the cache has none for this version, compiler and options.
 */
export async function llamaFromSource(root, arch, { log = (line) => console.error(line) } = {}) {
  const { spec, nlc, options, out } = sourceBuild(root, arch)
  if (existsSync(join(out, '_nlcBuildMetadata.json'))) return out
  return compile(root, arch, spec, nlc, options, out, log)
}

/**
 * Whether `arch`'s llama.cpp compiled from source is in the build cache already (false when the compiler it needs is
 * missing): `npm run build` of every target leaves a board whose compile has not been done yet to an explicit build.
 */
export function llamaSourceReady(root, arch) {
  try {
    return existsSync(join(sourceBuild(root, arch).out, '_nlcBuildMetadata.json'))
  } catch {
    return false
  }
}

/** What a source build of `arch` is: its spec, node-llama-cpp's, the cmake options and the cache folder it goes to. */
function sourceBuild(root, arch) {
  const spec = FROM_SOURCE[arch]
  if (!spec) throw new Error(`llama: no source build is set up for arch ${arch}`)
  const nlc = nodeLlamaCpp(root)
  const lacking = missing(spec)
  if (lacking.length)
    throw new Error(
      `llama: armv7's llama.cpp is compiled from node-llama-cpp's source (its @node-llama-cpp/${spec.name} package carries AArch64 files), and this machine lacks ${lacking.join(', ')}: apt-get install ${[...new Set(lacking.map((l) => /package (\S+)\)/.exec(l)[1]))].join(' ')} (or bash .ci/install-sea-deps.sh), or turn the llama flag off for this target`,
    )
  const options = cmakeOptions(spec, root, nlc.tag)
  const compiler = execFileSync(`${spec.triple}-g++`, ['--version'], { encoding: 'utf8' }).split('\n')[0]
  const toolchain = readFileSync(join(nlc.dir, 'llama', 'toolchains', spec.toolchain), 'utf8')
  const key = createHash('sha256')
    .update(JSON.stringify({ nlc: nlc.version, tag: nlc.tag, compiler, toolchain, options: { ...options, CMAKE_JS_INC: '' } }))
    .digest('hex')
    .slice(0, 12)
  return { spec, nlc, options, out: join(buildCache(), 'llama-source', `${spec.name}-${nlc.version}-${key}`) }
}

async function compile(root, arch, spec, nlc, options, out, log) {
  const cacheRoot = dirname(out)
  mkdirSync(cacheRoot, { recursive: true })
  const work = mkdtempSync(join(cacheRoot, '.build-'))
  const started = Date.now()
  const logFile = join(work, 'build.log')
  try {
    log(
      `llama: compiling llama.cpp ${nlc.tag} for ${spec.name} from node-llama-cpp ${nlc.version}'s source (once; it takes minutes; log: ${logFile})`,
    )
    const src = join(work, 'src')
    mkdirSync(src)
    for (const part of ['CMakeLists.txt', 'addon', 'cmake', 'profiles', 'toolchains'])
      cpSync(join(nlc.dir, 'llama', part), join(src, part), { recursive: true })
    await run(
      'git',
      ['-c', 'advice.detachedHead=false', 'clone', '--quiet', join(nlc.dir, 'llama', 'gitRelease.bundle'), join(src, 'llama.cpp')],
      { logFile },
    )
    applyPatches(join(nlc.dir, 'llama', 'patches'), join(src, 'llama.cpp'), logFile)
    const generator = commandExists('ninja') ? ['-G', 'Ninja'] : []
    const build = join(work, 'build')
    await run(
      'cmake',
      [
        '-S',
        src,
        '-B',
        build,
        ...generator,
        `-DCMAKE_TOOLCHAIN_FILE=${join(src, 'toolchains', spec.toolchain)}`,
        ...Object.entries(options).map(([k, v]) => `-D${k}=${v}`),
      ],
      // CMakeLists.txt finds node-addon-api with `node -p "require('node-addon-api')"` from its own folder.
      { logFile, env: { ...process.env, NODE_PATH: join(root, 'node_modules') } },
    )
    let shown = 0
    await run('cmake', ['--build', build, '--target', 'llama-addon', '--parallel', String(availableParallelism())], {
      logFile,
      onLine(line) {
        // Ninja says [12/272], make says [ 4%].
        const m = /^\[(\d+)\/(\d+)\]/.exec(line) ?? /^\[\s*(\d+)%\]/.exec(line)
        if (!m) return
        const pct = m[2] ? Math.floor((100 * Number(m[1])) / Number(m[2])) : Number(m[1])
        if (pct < shown + 10) return
        shown = pct - (pct % 10)
        log(`llama: ${spec.name} ${pct}% compiled (${Math.round((Date.now() - started) / 1000)} s)`)
      },
    })
    const dest = join(work, 'out')
    mkdirSync(dest)
    const bin = join(build, 'bin')
    const files = [
      ['llama-addon.node', join(build, 'llama-addon.node')],
      ...readdirSync(bin)
        .filter((f) => f.endsWith('.so'))
        .map((f) => [f, join(bin, f)]),
    ]
    for (const [name, from] of files) {
      cpSync(from, join(dest, name))
      execFileSync(`${spec.triple}-strip`, ['--strip-unneeded', join(dest, name)])
    }
    writeFileSync(
      join(dest, '_nlcBuildMetadata.json'),
      JSON.stringify({
        buildOptions: {
          customCmakeOptions: {},
          progressLogs: false,
          platform: 'linux',
          platformInfo: { name: 'Debian', version: '12' },
          arch,
          gpu: false,
          llamaCpp: { repo: nlc.repo, release: nlc.tag },
        },
      }),
    )
    // Another build may have finished the same folder meanwhile: theirs is as good.
    if (!existsSync(out)) renameSync(dest, out)
    log(`llama: ${spec.name} llama.cpp compiled in ${Math.round((Date.now() - started) / 1000)} s, cached in ${out}`)
    rmSync(work, { recursive: true, force: true })
    return out
  } catch (e) {
    const tail = existsSync(logFile) ? readFileSync(logFile, 'utf8').split('\n').slice(-30).join('\n') : ''
    throw new Error(
      `llama: compiling llama.cpp for ${spec.name} failed: ${e.message}\n${tail}\n(the whole log and the sources are in ${work})`,
    )
  }
}

/** node-llama-cpp's patches to llama.cpp, as its clone applies them; one already in the release is skipped. */
function applyPatches(dir, repo, logFile) {
  if (!existsSync(dir)) return
  for (const patch of readdirSync(dir)
    .filter((f) => f.endsWith('.diff'))
    .sort()) {
    const args = ['apply', '--ignore-whitespace', join(dir, patch)]
    const quiet = { cwd: repo, stdio: 'ignore' }
    try {
      execFileSync('git', [...args.slice(0, 2), '--check', args[2]], quiet)
    } catch {
      try {
        execFileSync('git', [...args.slice(0, 2), '--reverse', '--check', args[2]], quiet)
        continue
      } catch {
        throw new Error(`node-llama-cpp's patch ${patch} applies neither forwards nor backwards to its llama.cpp`)
      }
    }
    execFileSync('git', args, { cwd: repo, stdio: ['ignore', 'ignore', 'pipe'] })
    writeFileSync(logFile, `applied ${patch}\n`, { flag: 'a' })
  }
}

/** Runs `cmd`, its output appended to `logFile` (and each line to `onLine`); rejects on a non-zero exit. */
function run(cmd, args, { logFile, env = process.env, onLine } = {}) {
  return new Promise((resolvePromise, reject) => {
    const file = createWriteStream(logFile, { flags: 'a' })
    file.write(`$ ${cmd} ${args.join(' ')}\n`)
    const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
    let rest = ''
    const take = (chunk) => {
      file.write(chunk)
      if (!onLine) return
      const lines = (rest + chunk.toString('utf8')).split('\n')
      rest = lines.pop() ?? ''
      for (const line of lines) onLine(line)
    }
    child.stdout.on('data', take)
    child.stderr.on('data', take)
    child.on('error', (e) => file.end(() => reject(e)))
    child.on('close', (code, signal) =>
      file.end(() => (code === 0 ? resolvePromise() : reject(new Error(`${cmd} ${args[0]} … exited ${signal ?? code}`)))),
    )
  })
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')
  llamaFromSource(root, 'arm').then(
    (dir) => console.log(dir),
    (e) => {
      console.error(e.message)
      process.exit(1)
    },
  )
}
