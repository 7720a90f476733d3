import { invalid } from './errors.js';

/**
 * Storage keys are '/'-separated relative paths. Every driver passes each key through
 * `normalizeKey` before any I/O, so no key can name something outside the store's root.
 */

/** Suffixes the fs driver uses for its own files; no key may end with them. */
export const RESERVED_SUFFIXES = ['.lmtmp', '.lmlock'] as const;

// C0/C1 controls, and invisible or direction-changing code points a reader would not see.
const FORBIDDEN_CHARS = /[\u0000-\u001f\u007f-\u009f\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/u;

export function normalizeKey(key: string): string {
  if (typeof key !== 'string' || key.length === 0) throw invalid('storage key is empty');
  if (key.length > 1024) throw invalid('storage key is longer than 1024 characters');
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
