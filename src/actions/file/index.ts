import type { Action } from '../types.ts'
import { fileList } from './list.ts'
import { fileRead } from './read.ts'
import { fileWrite } from './write.ts'

/** `file.read`, `file.write`, `file.list`: file access confined to `settings.workspace`. */
export const fileActions: Action[] = [fileRead, fileWrite, fileList]
