import { promises as fsp, type Dirent } from 'node:fs';
import path from 'node:path';
import { coalescing } from '../../shared/concurrency.js';
import { LiveMemError } from '../../shared/errors.js';
import { normalizeKey } from '../../shared/keys.js';
import { isCode, storageError } from './errors.js';
import { createTempNamer } from './temp-name.js';

/**
 * An fs driver's own state, which its operations share: the root, how a key becomes a file confined
 * below it, the names of its temp files, and the folder fsyncs and prunes that follow a change of names.
 */
export interface FsStore {
  /** Absolute. */
  readonly root: string;
  /** The file of a key: normalised, and refused if it escapes the root, before any I/O. */
  pathOf(key: string): string;
  /** A fresh temp name beside `file` (temp-name.ts). */
  tempFor(file: string): string;
  /** fsyncs a folder whose entries changed, so a new, replaced or removed name survives a power cut. Concurrent callers share fsyncs. */
  syncFolder(dir: string): Promise<void>;
  /** Removes now-empty folders from `dir` up to (not including) the root. */
  pruneEmptyDirs(dir: string): Promise<void>;
}

/** The folder of a folder key below `root` ('' is the root; with or without its trailing '/'). */
export function folderPath(root: string, folderKey: string): string {
  return path.join(root, ...folderKey.replace(/\/$/, '').split('/'));
}

/** A folder's entries, none when it does not exist (or is a file): what a listing walks. */
export async function readFolder(dir: string): Promise<Dirent[]> {
  try {
    return await fsp.readdir(dir, { withFileTypes: true });
  } catch (error) {
    if (isCode(error, 'ENOENT', 'ENOTDIR')) return [];
    throw storageError('list', dir, error);
  }
}

export function createFsStore(rootDir: string): FsStore {
  const root = path.resolve(rootDir);

  // A normalised key has no empty, '.' or '..' segment and no backslash, and the root is resolved: joining
  // them needs no normalising pass over the path (path.join's, a loop over every character of every note's path).
  const base = root.endsWith(path.sep) ? root : root + path.sep;
  const toNative = path.sep === '/' ? (key: string) => key : (key: string) => key.replaceAll('/', path.sep);
  const pathOf = (key: string): string => {
    const file = base + toNative(normalizeKey(key));
    if (!file.startsWith(root + path.sep)) throw new LiveMemError('invalid_input', `key escapes the store: ${key}`);
    return file;
  };

  const syncFolder = coalescing(async (dir) => {
    const handle = await fsp.open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  });

  const pruneEmptyDirs = async (dir: string): Promise<void> => {
    while (dir.startsWith(root + path.sep)) {
      try {
        await fsp.rmdir(dir);
      } catch {
        return; // not empty, already gone, or busy: all fine
      }
      dir = path.dirname(dir);
    }
  };

  return { root, pathOf, tempFor: createTempNamer(), syncFolder, pruneEmptyDirs };
}
