/** SWI-Prolog's three files: the Emscripten loader, the engine, and its library (src/sea/runtime-files.ts). */

import { runtimeFiles } from '../sea/runtime-files.ts'

export interface PrologFiles {
  glue: string
  wasm: string
  data: string
}

export function prologFiles(): PrologFiles {
  const [glue, wasm, data] = runtimeFiles(
    'prolog',
    ['swipl-web.js', 'swipl-web.wasm', 'swipl-web.data'],
    'swipl-wasm/dist/swipl/swipl-web.js',
  )
  return { glue: glue!, wasm: wasm!, data: data! }
}
