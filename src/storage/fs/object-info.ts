import { lstatSync, type Stats } from 'node:fs';
import type { ObjectInfo } from '../types.js';
import { isCode, storageError } from './errors.js';

/**
 * An object's description from its file's stats, and its etag: what `get`, `stat` and the writes
 * (put's compare-and-swap, the etag a put returns) say about one version of a key.
 */

/**
 * inode, mtime to the microsecond, size. Every write lands in a new file (a temp renamed over the
 * name, or a created one), but not always on a new inode: a replaced version's inode is freed and
 * ext4 hands it out again (298 of 300 replacements of one key reused one, measured). What sets two versions
 * apart is the three together, the mtime above all; only two writes of one size within one timestamp
 * tick (a coarse-clock kernel: a few ms) on a reused inode could share an etag. No caller relies on
 * the inode alone: compare-and-swap (put's ifMatch, under the key's lock) compares the whole etag.
 */
export const etagOf = (stats: Stats): string => `${stats.ino.toString(36)}-${Math.round(stats.mtimeMs * 1000).toString(36)}-${stats.size.toString(36)}`;

export const infoOf = (key: string, stats: Stats): ObjectInfo & { etag: string; size: number; lastModified: Date } => ({
  key,
  size: stats.size,
  lastModified: stats.mtime,
  etag: etagOf(stats),
});

/** A file's stats, from its name alone (lstat): a link at the name is no object, as `get` says. */
export const statFile = async (file: string): Promise<Stats | null> => {
  try {
    const stats = lstatSync(file, { throwIfNoEntry: false });
    return stats?.isFile() ? stats : null;
  } catch (error) {
    if (isCode(error, 'ENOENT', 'ENOTDIR')) return null;
    throw storageError('stat', file, error);
  }
};
