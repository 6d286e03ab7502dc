import { TeaError, errorMessage, isTeaError } from '../../core/errors.ts'

const REASONS: Record<string, string> = {
  ENOENT: 'does not exist',
  ENOTDIR: 'has a file where a directory was expected',
  EISDIR: 'is a directory',
  // Not an errno: ours, for sockets, fifos and devices that file.read will not touch.
  ENOTREG: 'is not a regular file',
  ENXIO: 'is not a regular file (a socket, a FIFO without a reader, or a device)',
  EACCES: 'is not accessible (permission denied)',
  EPERM: 'is not accessible (operation not permitted)',
  EEXIST: 'already exists',
  ELOOP: 'leads through a loop of symbolic links',
  ENOSPC: 'cannot be written: the device is full',
  EROFS: 'cannot be written: the file system is read-only',
}

/** What went wrong with a path, as the end of a sentence that starts with the path ("does not exist"). */
export function fileErrorReason(e: unknown): string {
  const code = (e as { code?: unknown }).code
  return typeof code === 'string' && REASONS[code] ? REASONS[code] : `failed: ${errorMessage(e)}`
}

/** A FILE_ERROR naming the action, the path as the agent gave it and the workspace; TeaErrors pass through. */
export function fileError(action: string, given: string, workspace: string, e: unknown): TeaError {
  if (isTeaError(e)) return e
  const code = (e as { code?: unknown }).code
  const reason = fileErrorReason(e)
  return new TeaError('FILE_ERROR', `${action}: '${given}' ${reason} (workspace ${workspace})`, {
    cause: e,
    details: { path: given, workspace, ...(typeof code === 'string' ? { errno: code } : {}) },
  })
}
