import { resolve } from 'node:path'
import type { Io } from './io.ts'

/** The data dir: `--data-dir`, else `$TEA_DATA_DIR`, else `./.tea`, relative to the current directory. */
export function dataDirOf(flag: string | undefined, io: Io): string {
  return resolve(io.cwd, flag ?? io.env.TEA_DATA_DIR ?? '.tea')
}
