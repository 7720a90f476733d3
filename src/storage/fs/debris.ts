import { promises as fsp, type Stats } from 'node:fs';
import path from 'node:path';
import { mapLimit } from '../../shared/concurrency.js';
import { normalizePrefix, RESERVED_SUFFIXES } from '../../shared/keys.js';
import { compareKeys } from '../key-order.js';
import type { DebrisFile } from '../types.js';
import { isCode, storageError } from './errors.js';
import { folderPath, readFolder } from './fs-store.js';
import { tempWriterGone } from './temp-name.js';

/**
 * What writers leave beside the objects: temp and lock files (names with a reserved suffix), and
 * folders a `removeFolder` cut short left set aside. Which of them are stale, the sweep listings do
 * of the stale ones, and `StorageDriver.debris`, which reports them all.
 */

/** A temp or lock file this old belongs to no running write: listings remove it. */
const DEBRIS_AFTER_MS = 60 * 60 * 1000;

/** Whether a name is a writer's own, no key's. Asked of every name a listing reads: a loop, not a callback per name. */
export const isReserved = (name: string): boolean => {
  for (const suffix of RESERVED_SUFFIXES) if (name.endsWith(suffix)) return true;
  return false;
};

/**
 * Whether a temp or lock file (or a folder set aside) belongs to no running write: older than any
 * write takes, or written by a process of this machine that has exited (a writer killed mid-write:
 * its temp file may hold a whole body, a forgotten note's text, that nothing will ever rename).
 */
function isDebris(file: string, stats: Stats): boolean {
  if (Date.now() - stats.mtimeMs > DEBRIS_AFTER_MS) return true;
  return tempWriterGone(file);
}

/**
 * Removes temp and lock files that writers killed mid-write left behind (a write takes
 * milliseconds), and folders a `removeFolder` cut short left renamed aside.
 */
export async function sweep(debris: readonly string[]): Promise<void> {
  await mapLimit(debris, 16, async (file) => {
    const stats = await fsp.stat(file).catch(() => null);
    if (stats && isDebris(file, stats)) await fsp.rm(file, { recursive: true, force: true }).catch(() => undefined);
  });
}

/** StorageDriver.debris: every writer's file below `prefix`, in key order; with `remove`, the stale ones deleted. */
export async function findDebris(root: string, prefix: string, options: { remove?: boolean } = {}): Promise<DebrisFile[]> {
  const folderKey = normalizePrefix(prefix).replace(/\/$/, '');
  const found: DebrisFile[] = [];
  const visit = async (dir: string): Promise<void> => {
    for (const entry of await readFolder(dir)) {
      const file = path.join(dir, entry.name);
      if (!isReserved(entry.name)) {
        if (entry.isDirectory()) await visit(file);
        continue;
      }
      if (!entry.isFile() && !entry.isDirectory()) continue;
      const stats = await fsp.stat(file).catch(() => null);
      if (!stats) continue; // its write finished meanwhile
      const ageMs = Math.max(0, Date.now() - stats.mtimeMs);
      const stale = isDebris(file, stats);
      let removed = false;
      if (stale && options.remove) {
        try {
          await fsp.rm(file, { recursive: true });
          removed = true;
        } catch (error) {
          if (!isCode(error, 'ENOENT')) throw storageError('delete', file, error);
        }
      }
      found.push({ path: path.relative(root, file).split(path.sep).join('/'), ageMs, stale, removed });
    }
  };
  await visit(folderPath(root, folderKey));
  return found.sort((a, b) => compareKeys(a.path, b.path));
}
