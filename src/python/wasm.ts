/**
 * The WebAssembly API the Python feature uses. The project's type library has no DOM, where WebAssembly is
 * declared, so the few parts used are declared here, and the global is read through them.
 */

export interface WasmMemory {
  readonly buffer: ArrayBuffer
  grow(pages: number): number
}

/** A compiled module; opaque here. */
export interface WasmModule {
  readonly compiled: unique symbol
}

interface WasmInstance {
  readonly exports: Record<string, unknown>
}

interface WasmApi {
  compile(bytes: Uint8Array): Promise<WasmModule>
  instantiate(source: unknown, imports?: unknown): Promise<unknown>
  Instance: new (module: WasmModule, imports: unknown) => WasmInstance
}

export const wasm = (): WasmApi => (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly
