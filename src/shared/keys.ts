import { invalid } from './errors.js';

/**
 * Storage keys are '/'-separated relative paths. Every driver passes each key through
 * `normalizeKey` before any I/O, so no key can name something outside the store's root.
 */

/** Suffixes the fs driver uses for its own files; no key may end with them. */
export const RESERVED_SUFFIXES = ['.lmtmp', '.lmlock'] as const;

/**
 * Room a driver needs after a file's name for its own files beside it: the fs driver's temp names
 * (`{name}.{8 hex}{pid}-{6 hex}{counter}.lmtmp`, at most 38 bytes added) and a stale lock set aside
 * (`{name}.lmlock.{pid}.{ms}.lmtmp`, at most 35). A name longer than 255 bytes less this is written
 * once, perhaps, then fails with ENAMETOOLONG on every later write.
 */
export const DRIVER_SUFFIX_BYTES = 40;
/** The longest file name, in UTF-8 bytes, every driver can write and rewrite (255 is the filesystems' limit). */
export const MAX_NAME_BYTES = 255 - DRIVER_SUFFIX_BYTES;
/** The longest key, in UTF-8 bytes (S3's limit). */
export const MAX_KEY_BYTES = 1024;

// C0/C1 controls, and invisible or direction-changing code points a reader would not see.
const FORBIDDEN_CHARS = /[\u0000-\u001f\u007f-\u009f\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/u;

export function normalizeKey(key: string): string {
  if (typeof key !== 'string' || key.length === 0) throw invalid('storage key is empty');
  // A UTF-16 unit is at most 3 bytes in UTF-8: only a longer key is encoded to be measured (every write passes here).
  if (key.length > MAX_KEY_BYTES / 3 && utf8Bytes(key) > MAX_KEY_BYTES) throw invalid(`storage key is longer than ${MAX_KEY_BYTES} bytes`);
  if (key.includes('\\')) throw invalid(`storage key contains a backslash: ${JSON.stringify(key)}`);
  if (FORBIDDEN_CHARS.test(key)) throw invalid(`storage key contains a control or invisible character: ${JSON.stringify(key)}`);
  if (key.startsWith('/') || /^[a-zA-Z]:/.test(key)) throw invalid(`storage key is absolute: ${JSON.stringify(key)}`);
  const parts = key.split('/');
  for (const part of parts) {
    if (part === '' || part === '.' || part === '..') {
      throw invalid(`storage key has an empty, '.' or '..' segment: ${JSON.stringify(key)}`);
    }
  }
  if (RESERVED_SUFFIXES.some((suffix) => key.endsWith(suffix))) {
    throw invalid(`storage key ends with a reserved suffix: ${JSON.stringify(key)}`);
  }
  return key;
}

/** A list prefix is either empty (the whole store) or a key-shaped string, optionally ending in '/'. */
export function normalizePrefix(prefix: string): string {
  if (prefix === '') return '';
  const trailing = prefix.endsWith('/');
  const body = normalizeKey(trailing ? prefix.slice(0, -1) : prefix);
  return trailing ? `${body}/` : body;
}

/** A plain file name: one segment, no separators, no invisible characters. */
export function isPlainFileName(name: string): boolean {
  if (name.length === 0 || name.length > 255) return false;
  if (name === '.' || name === '..' || name.includes('/') || name.includes('\\')) return false;
  if (name.includes('..')) return false;
  return !FORBIDDEN_CHARS.test(name) && !/[^\S ]/u.test(name);
}

const encoder = new TextEncoder();
/** A string's length in UTF-8 bytes, the unit of file systems' and S3's limits (pure: the viewer uses it too). */
export const utf8Bytes = (text: string): number => encoder.encode(text).length;
