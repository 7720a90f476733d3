import { LiveMemError } from '../../shared/errors.js';

/** Whether `error` is a Node system error with one of these codes (ENOENT, EEXIST…). */
export function isCode(error: unknown, ...codes: string[]): boolean {
  return typeof error === 'object' && error !== null && codes.includes((error as { code?: string }).code ?? '');
}

/** A failed file operation as a `storage_error`, with a hint for a full disk or a permission; LiveMemErrors pass through. */
export function storageError(operation: string, file: string, cause: unknown): LiveMemError {
  if (cause instanceof LiveMemError) return cause;
  const code = (cause as { code?: string }).code;
  const hint = code === 'ENOSPC' ? ' (the disk is full)' : code === 'EACCES' || code === 'EPERM' ? ' (permission denied)' : '';
  // A system error ends with the paths it was about ("…, open '/x/a.md.1f2e….lmtmp'"): a temp file's
  // name means nothing to the reader and `file` is already named, so the paths are left out.
  const detail = String((cause as Error).message ?? cause).replace(/,? ?'[^']*'(?: -> '[^']*')?$/, '');
  return new LiveMemError('storage_error', `fs ${operation} failed for ${file}${hint}: ${detail}`, { code }, { cause });
}
