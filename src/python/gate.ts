/**
 * The one door between Python and the host: every JavaScript function the interpreter's WebAssembly may call (its
 * imports) passes through here, wrapped in place before the module is instantiated. Python cannot be fenced in from
 * inside: `_imp`, `gc`, `__subclasses__`, ctypes or one memory-corruption bug reach anything a Python-level block
 * hides, and whoever controls the WebAssembly instance can call every import with arguments of its choosing (through
 * the function table too: Emscripten resolves its GOT entries from the same import object, so they are wrapped as
 * well). So the boundary is drawn at the imports:
 *
 * - Once `lock()` is called (just before `run:` code starts; the interpreter is never used again afterwards), only
 *   the imports pure Python needs still answer: the file system's syscalls (which lead to MEMFS or to the confined
 *   workspace, workspace-fs.ts), clocks, entropy, stdout. Every other one — the whole JavaScript FFI behind `js`,
 *   `pyodide.ffi`, `to_js`, `run_js`, `pyodide_js`, dlopen, timers, console, `exit` — throws `GateRefusal`, which
 *   unwinds out of the interpreter; the run fails and the interpreter is dropped.
 * - Always: `system()` reports failure without starting anything (Emscripten runs it with child_process), and
 *   sockets fail with EPERM (Emscripten's SOCKFS opens WebSockets to any address).
 * - The memory: `memory.grow` refuses to pass `limitBytes`, so CPython's malloc fails and raises MemoryError.
 */

import type { WasmMemory } from './wasm.ts'

/** Errno values as Emscripten numbers them (WASI's), negated as syscalls return them. */
const EPERM = 63

/** The imports a locked interpreter may still call: pure Python's needs, none of which reaches JavaScript values. */
const PURE = new Set([
  '_PyEM_TrampolineCall_JS', // calls a function of the table: wasm, or a wrapped import
  '_Py_CheckEmscriptenSignals_Helper',
  '_Py_emscripten_runtime',
  '__call_sighandler',
  '__assert_fail',
  '_abort_js',
  'can_run_sync_js',
  'JsvError_Check',
  'Jsv_GetError_import',
  'emscripten_resize_heap',
  'emscripten_get_heap_max',
  'emscripten_get_now',
  'emscripten_date_now',
  'emscripten_runtime_keepalive_push',
  'emscripten_runtime_keepalive_pop',
  '_emscripten_get_progname',
  '_emscripten_lookup_name',
  '_tzset_js',
  '_localtime_js',
  '_gmtime_js',
  '_mktime_js',
  '_timegm_js',
  '_mmap_js',
  '_munmap_js',
  '_msync_js',
  '_try_fcntl64',
  'getaddrinfo',
  'getnameinfo',
  'getprotobyname',
  'clock_time_get',
  'clock_res_get',
  'random_get',
  'environ_get',
  'environ_sizes_get',
  'fd_close',
  'fd_read',
  'fd_write',
  'fd_seek',
  'fd_sync',
  'fd_fdstat_get',
  'fd_pread',
  'fd_pwrite',
])

/** Socket syscalls: refused outright, locked or not. Every other syscall is the file system's (MEMFS, workspace-fs.ts). */
const SOCKETS =
  /^__syscall_(socket|connect|bind|listen|accept4|sendto|recvfrom|sendmsg|recvmsg|getsockname|getpeername|getsockopt|setsockopt|shutdown|socketpair)$/

/** What a refused import throws. Its name is not ErrnoError, so no Emscripten syscall wrapper swallows it. */
export class GateRefusal extends Error {
  override readonly name = 'GateRefusal'
}

type Fn = ((...args: unknown[]) => unknown) & { sig?: string }

export class Gate {
  private locked = false
  /** The first import refused after `lock()`, for the error. */
  refused: string | undefined
  /** Set when a growth past the limit was refused. */
  overLimit = false
  /** The most the interpreter's memory and its temporary files may take, bytes. */
  limitBytes = Number.POSITIVE_INFINITY
  /** Bytes held by MEMFS files (temporary files live in JavaScript arrays, outside the interpreter's memory). */
  fileBytes = 0
  private memory: WasmMemory | undefined

  /** From here on only `PURE` imports answer. There is no unlock: a locked interpreter is dropped after its run. */
  lock(limitBytes: number): void {
    this.limitBytes = limitBytes
    this.locked = true
  }

  /** The interpreter's memory now, bytes. */
  memoryBytes(): number {
    return this.memory?.buffer.byteLength ?? 0
  }

  /** Whether `more` bytes of temporary files still fit under the limit (else it is remembered as over). */
  fits(more: number): boolean {
    if (this.memoryBytes() + this.fileBytes + more <= this.limitBytes) return true
    this.overLimit = true
    return false
  }

  /** Wraps every function of the import objects in place (env and wasi may be one object: wrapped once). */
  wrapImports(imports: Record<string, unknown>): void {
    const seen = new Set<object>()
    for (const ns of ['env', 'wasi_snapshot_preview1']) {
      const table = imports[ns] as Record<string, unknown> | undefined
      if (!table || seen.has(table)) continue
      seen.add(table)
      for (const name of Object.keys(table)) {
        const f = table[name]
        if (typeof f === 'function') table[name] = this.wrap(name, f as Fn)
      }
    }
  }

  /** Caps `memory` (exported by the instance): a growth past the limit fails as a full heap does. */
  capMemory(memory: WasmMemory): void {
    this.memory = memory
    const grow = memory.grow.bind(memory)
    Object.defineProperty(memory, 'grow', {
      value: (pages: number): number => {
        if (memory.buffer.byteLength + pages * 65536 + this.fileBytes > this.limitBytes) {
          this.overLimit = true
          throw new RangeError('the run: code memory limit')
        }
        return grow(pages)
      },
    })
  }

  private wrap(name: string, f: Fn): Fn {
    let wrapped: Fn
    if (name === '_emscripten_system') wrapped = () => -1
    else if (SOCKETS.test(name)) wrapped = () => -EPERM
    else if (PURE.has(name) || name.startsWith('__syscall_')) return f
    else {
      wrapped = (...args: unknown[]) => {
        if (this.locked) {
          this.refused ??= name
          throw new GateRefusal(`'${name}' is closed to run: code`)
        }
        return f(...args)
      }
    }
    // Emscripten reads a function's signature from `sig` when it puts it in the table.
    if (f.sig !== undefined) wrapped.sig = f.sig
    return wrapped
  }
}
