import path from 'node:path';
import { normalizePrefix } from '../../shared/keys.js';
import { compareKeys, sortKeys } from '../key-order.js';
import { paginate } from '../list.js';
import type { ListOptions, ListPage } from '../types.js';
import { isReserved, sweep } from './debris.js';
import { type FsStore, folderPath, readFolder } from './fs-store.js';

/**
 * `list` on fs: the folder that holds every match is read whole (recursively, or one level with a
 * delimiter), its keys sorted in the contract's order and paged (list.ts). The writers' debris met
 * on the way is no key; the stale part of it is swept.
 */
export async function listFiles(store: FsStore, prefix: string, options: ListOptions = {}): Promise<ListPage> {
  const normalized = normalizePrefix(prefix);
  // The folder that holds every match: the prefix itself when it ends in '/', else its parent.
  const cut = normalized.lastIndexOf('/') + 1;
  const folderKey = normalized.slice(0, cut);
  const dir = folderPath(store.root, folderKey);
  const shallow = options.delimiter === '/' && folderKey === normalized;
  const found: string[] = [];
  const debris: string[] = [];
  await walk(dir, folderKey, shallow, found, debris);
  await sweep(debris);
  // A shallow walk already yields sub-folders as 'name/'; a deep one yields only files.
  // Only what is after `startAfter` is sorted: a listing of the newest notes sorts those alone.
  const after = options.startAfter;
  // A folder's listing from its start keeps every key found (the common case: no copy).
  const every = folderKey === normalized && after === undefined;
  const keys = sortKeys(every ? found : found.filter((key) => key.startsWith(normalized) && (after === undefined || compareKeys(key, after) > 0)));
  return paginate(keys, normalized, options, (key) => ({ key }));
}

/**
 * Every file key below `dir` (recursively unless `shallow`), plus sub-folder names when shallow.
 * Temp and lock files are no keys; their paths go to `debris`.
 */
export async function walk(dir: string, keyPrefix: string, shallow: boolean, keys: string[], debris: string[]): Promise<void> {
  for (const entry of await readFolder(dir)) {
    const key = `${keyPrefix}${entry.name}`;
    if (isReserved(entry.name)) {
      if (entry.isFile() || entry.isDirectory()) debris.push(path.join(dir, entry.name));
    } else if (entry.isDirectory()) {
      if (shallow) keys.push(`${key}/`);
      else await walk(path.join(dir, entry.name), `${key}/`, false, keys, debris);
    } else if (entry.isFile()) keys.push(key);
  }
}
