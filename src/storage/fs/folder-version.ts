import { statSync } from 'node:fs';
import path from 'node:path';
import { normalizePrefix } from '../../shared/keys.js';
import { isCode, storageError } from './errors.js';

/**
 * A folder's version (StorageDriver.version): its inode and mtime. Every write goes through a temp
 * file in the same folder, so any change to its entries moves its mtime.
 */

/**
 * A folder's mtime is trusted as a version only once it is this old: the kernel stamps mtimes from
 * a coarse clock (a few ms), so two changes within one tick can share a stamp. A stamp older than
 * this cannot be shared with a change still to come.
 */
const VERSION_SETTLE_MS = 2_000;

export async function folderVersion(root: string, prefix: string): Promise<string | null> {
  const folderKey = normalizePrefix(prefix);
  if (!folderKey.endsWith('/')) return null;
  const dir = path.join(root, ...folderKey.slice(0, -1).split('/'));
  try {
    const stats = statSync(dir, { bigint: true, throwIfNoEntry: false });
    if (!stats) return 'absent';
    if (Date.now() - Number(stats.mtimeMs) < VERSION_SETTLE_MS) return null;
    return `${stats.ino.toString(36)}-${stats.mtimeNs.toString(36)}`;
  } catch (error) {
    if (isCode(error, 'ENOENT', 'ENOTDIR')) return 'absent';
    throw storageError('stat', dir, error);
  }
}
