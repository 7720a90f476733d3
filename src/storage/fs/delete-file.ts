import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { mapLimit } from '../../shared/concurrency.js';
import { LiveMemError } from '../../shared/errors.js';
import { normalizePrefix } from '../../shared/keys.js';
import { isCode, storageError } from './errors.js';
import type { FsStore } from './fs-store.js';
import { withKeyLock } from './key-lock.js';
import { walk } from './list-files.js';

/**
 * Deletes on fs: `delete` and `deleteMany` unlink a key's file under its lock (key-lock.ts), fsync
 * its folder and prune the folders left empty; `removeFolder` renames a folder aside in one step,
 * then erases it.
 */

/** StorageDriver.delete: idempotent, durable when it resolves. */
export async function deleteFile(store: FsStore, key: string): Promise<void> {
  const file = store.pathOf(key);
  await withKeyLock(file, async () => {
    try {
      await fsp.unlink(file);
    } catch (error) {
      if (isCode(error, 'ENOENT', 'ENOTDIR')) return;
      throw storageError('delete', file, error);
    }
  });
  await store.syncFolder(path.dirname(file)).catch((error: unknown) => {
    if (!isCode(error, 'ENOENT')) throw storageError('delete', file, error); // pruned by another delete: nothing to sync
  });
  await store.pruneEmptyDirs(path.dirname(file));
}

/** StorageDriver.deleteMany: every key checked before any is deleted. */
export async function deleteFiles(store: FsStore, keys: readonly string[]): Promise<void> {
  keys.forEach((key) => store.pathOf(key));
  await mapLimit(keys, 16, (key) => deleteFile(store, key));
}

/** StorageDriver.removeFolder: the number of objects removed. */
export async function removeFolder(store: FsStore, prefix: string): Promise<number> {
  const folderKey = normalizePrefix(prefix);
  if (!folderKey.endsWith('/') || folderKey === '/') throw new LiveMemError('invalid_input', `not a folder: ${prefix}`);
  const dir = store.pathOf(folderKey.slice(0, -1));
  // One rename takes the whole folder away: from then on, no path into it resolves.
  const aside = store.tempFor(dir);
  try {
    await fsp.rename(dir, aside);
  } catch (error) {
    if (isCode(error, 'ENOENT')) return 0;
    throw storageError('delete', dir, error);
  }
  await store.syncFolder(path.dirname(dir)); // the removal is durable here, whatever happens to the erasing below
  const keys: string[] = [];
  await walk(aside, '', false, keys, []);
  await fsp.rm(aside, { recursive: true, force: true }).catch((error: unknown) => {
    throw storageError('delete', aside, error); // left for `debris` and listings to sweep
  });
  await store.pruneEmptyDirs(path.dirname(dir));
  return keys.length;
}
