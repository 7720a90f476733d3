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
  return new LiveMemError('storage_error', `fs ${operation} failed for ${file}${hint}: ${String((cause as Error).message ?? cause)}`, { code }, { cause });
}
