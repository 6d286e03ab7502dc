/**
 * A built-in module, loaded when first asked for instead of when the module that uses it loads. Every built-in
 * that Node's own start has not loaded costs a start time to compile: `node:module` and `node:os` together took
 * ~1.5 ms of a 3-node `tea run` from the executable (issue 14), though a run needs neither. So code on the path
 * of every start (the loader, the store, the pool) asks for such rare ones here, at the call that needs them.
 *
 * `process.getBuiltinModule` is Node 20.16+; a bundle on an older Node (the armv7 executable's 20.11) has the
 * CommonJS `require`, which loads built-ins everywhere.
 */
interface Builtins {
  'node:os': typeof import('node:os')
  'node:module': typeof import('node:module')
  'node:sea': unknown
}

export function builtin<K extends keyof Builtins>(id: K): Builtins[K] {
  const get = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule
  return (get ? get(id) : require(id)) as Builtins[K]
}
