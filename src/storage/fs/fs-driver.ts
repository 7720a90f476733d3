import { randomBytes } from 'node:crypto';
import { promises as fsp, lstatSync, statSync, type Dirent, type Stats } from 'node:fs';
import path from 'node:path';
import { coalescing, mapLimit } from '../../shared/concurrency.js';
import { LiveMemError } from '../../shared/errors.js';
import { normalizeKey, normalizePrefix, RESERVED_SUFFIXES } from '../../shared/keys.js';
import { MACHINE_TAG, processGone } from '../../shared/process.js';
import { compareKeys, sortKeys } from '../key-order.js';
import { paginate } from '../list.js';
import type { DebrisFile, ListOptions, ObjectInfo, PutOptions, StorageDriver, StoredObject, WriteBatch } from '../types.js';
import { createFileCreator } from './create-file.js';
import { isCode, storageError } from './errors.js';
import { withKeyLock } from './key-lock.js';
import { FOLDER_TRIES, makeFolder } from './make-folder.js';
import { createFileReader } from './read-file.js';
import { syncWritten } from './sync.js';

/**
 * The local filesystem driver (the default). A key is a file below `root`.
 *
 * Durability: every body goes to a temp file in the target folder first. A replacing body is
 * fsynced, renamed over the old one, then its folder is fsynced: a crash leaves the old version or
 * the new one, never a torn file. A new body is linked to its name, then fsynced with that name. A
 * delete fsyncs the folder. Concurrent writers share folder fsyncs. Once `put` or `delete`
 * resolves, the change survives a power cut.
 *
 * Create-only relies on link(2) failing with EEXIST, which is atomic across processes;
 * compare-and-swap, replace and delete of one key are serialised across processes by a lock file
 * beside it (see key-lock.ts). A write batch skips the temp file and the fsync per object and syncs
 * them all at `flush` (see sync.ts). `removeFolder` renames a folder aside in one step, then erases it.
 *
 * Reads (read-file.ts) take only what a writer here could have made: a regular file inside the store,
 * never one reached through a link out of it, and none larger than MAX_OBJECT_BYTES.
 */
/** A temp or lock file this old belongs to no running write: listings remove it. */
const DEBRIS_AFTER_MS = 60 * 60 * 1000;
/**
 * A folder's mtime is trusted as a version only once it is this old: the kernel stamps mtimes from
 * a coarse clock (a few ms), so two changes within one tick can share a stamp. A stamp older than
 * this cannot be shared with a change still to come.
 */
const VERSION_SETTLE_MS = 2_000;
export interface FsDriverOptions {
  /**
   * Test hook: called with `before-rename:{file name}` once a replacing write's temp file holds the
   * whole body, before it is renamed over the file (the CLI kills itself there for LIVE_MEM_TEST_KILL_AT,
   * so tests can see what a writer killed mid-write leaves).
   */
  fault?: (point: string) => void;
}

export function createFsDriver(rootDir: string, options: FsDriverOptions = {}): StorageDriver {
  const root = path.resolve(rootDir);
  const { fault } = options;

  const pathOf = (key: string): string => {
    const file = path.join(root, ...normalizeKey(key).split('/'));
    if (!file.startsWith(root + path.sep)) throw new LiveMemError('invalid_input', `key escapes the store: ${key}`);
    return file;
  };

  /**
   * Temp names: unique to this driver (a random tag) and to each write (a counter), without a random
   * draw per write; on Linux they name their writer too (isDebris), so a temp file a killed writer
   * left is known for debris at once, not only after an hour.
   */
  const tempTag = MACHINE_TAG ? `${MACHINE_TAG}${process.pid.toString(36)}-${randomBytes(3).toString('hex')}` : randomBytes(6).toString('hex');
  let tempCount = 0;
  const tempFor = (file: string): string => `${file}.${tempTag}${(tempCount++).toString(36)}${RESERVED_SUFFIXES[0]}`;
  const creator = createFileCreator(tempFor);
  const readFile = createFileReader(root);

  /**
   * inode, mtime to the microsecond, size. Every write lands in a new file (a temp renamed over the
   * name, or a created one), but not always on a new inode: a replaced version's inode is freed and
   * ext4 hands it out again (298 of 300 replacements of one key reused one, measured). What sets two versions
   * apart is the three together, the mtime above all; only two writes of one size within one timestamp
   * tick (a coarse-clock kernel: a few ms) on a reused inode could share an etag. No caller relies on
   * the inode alone: compare-and-swap (put's ifMatch, under the key's lock) compares the whole etag.
   */
  const etagOf = (stats: Stats): string => `${stats.ino.toString(36)}-${Math.round(stats.mtimeMs * 1000).toString(36)}-${stats.size.toString(36)}`;

  const infoOf = (key: string, stats: Stats): ObjectInfo & { etag: string; size: number; lastModified: Date } => ({
    key,
    size: stats.size,
    lastModified: stats.mtime,
    etag: etagOf(stats),
  });

  /** A file's stats, from its name alone (lstat): a link at the name is no object, as `get` says. */
  const statFile = async (file: string): Promise<Stats | null> => {
    try {
      const stats = lstatSync(file, { throwIfNoEntry: false });
      return stats?.isFile() ? stats : null;
    } catch (error) {
      if (isCode(error, 'ENOENT', 'ENOTDIR')) return null;
      throw storageError('stat', file, error);
    }
  };

  /**
   * Writes `body` to a fresh temp file beside `file`, creating folders as needed, and returns it
   * open: the caller decides when to fsync it (before or after it gets its name) and closes it.
   */
  const openTemp = async (file: string, body: Buffer | string): Promise<{ temp: string; handle: fsp.FileHandle }> => {
    const temp = tempFor(file);
    for (let attempt = 0; ; attempt++) {
      let handle: fsp.FileHandle | undefined;
      try {
        handle = await fsp.open(temp, 'wx', 0o600);
        await handle.writeFile(body);
        return { temp, handle };
      } catch (error) {
        await handle?.close().catch(() => undefined);
        // A folder may be missing, or pruned by a concurrent delete: create it and try again.
        const failure =
          isCode(error, 'ENOENT') && attempt < FOLDER_TRIES
            ? await makeFolder(path.dirname(file)).then(
                () => null,
                (cause: unknown) => cause,
              )
            : error;
        if (failure === null) continue;
        await fsp.unlink(temp).catch(() => undefined);
        throw storageError('write', file, failure);
      }
    }
  };

  /** fsyncs folders whose entries changed, so a new, replaced or removed name survives a power cut. */
  const syncFolder = coalescing(async (dir) => {
    const handle = await fsp.open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  });

  /** Removes now-empty folders from `dir` up to (not including) the root. */
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

  const removeFile = async (key: string): Promise<void> => {
    const file = pathOf(key);
    await withKeyLock(file, async () => {
      try {
        await fsp.unlink(file);
      } catch (error) {
        if (isCode(error, 'ENOENT', 'ENOTDIR')) return;
        throw storageError('delete', file, error);
      }
    });
    await syncFolder(path.dirname(file)).catch((error: unknown) => {
      if (!isCode(error, 'ENOENT')) throw storageError('delete', file, error); // pruned by another delete: nothing to sync
    });
    await pruneEmptyDirs(path.dirname(file));
  };

  /**
   * Every file key below `dir` (recursively unless `shallow`), plus sub-folder names when shallow.
   * Temp and lock files are no keys; their paths go to `debris`.
   */
  const walk = async (dir: string, keyPrefix: string, shallow: boolean, keys: string[], debris: string[]): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await fsp.readdir(dir, { withFileTypes: true });
    } catch (error) {
      if (isCode(error, 'ENOENT', 'ENOTDIR')) return;
      throw storageError('list', dir, error);
    }
    for (const entry of entries) {
      const key = `${keyPrefix}${entry.name}`;
      if (isReserved(entry.name)) {
        if (entry.isFile() || entry.isDirectory()) debris.push(path.join(dir, entry.name));
      } else if (entry.isDirectory()) {
        if (shallow) keys.push(`${key}/`);
        else await walk(path.join(dir, entry.name), `${key}/`, false, keys, debris);
      } else if (entry.isFile()) keys.push(key);
    }
  };

  /**
   * Removes temp and lock files that writers killed mid-write left behind (a write takes
   * milliseconds), and folders a `removeFolder` cut short left renamed aside.
   */
  const sweep = async (debris: readonly string[]): Promise<void> => {
    await mapLimit(debris, 16, async (file) => {
      const stats = await fsp.stat(file).catch(() => null);
      if (stats && isDebris(file, stats)) await fsp.rm(file, { recursive: true, force: true }).catch(() => undefined);
    });
  };

  return {
    name: 'fs',
    location: root,
    parallelism: 16,

    async get(key, options = {}): Promise<StoredObject | null> {
      const read = await readFile(key, pathOf(key), options.maxBytes);
      return read && { ...infoOf(key, read.stats), body: read.body };
    },

    async version(prefix) {
      const folderKey = normalizePrefix(prefix);
      if (!folderKey.endsWith('/')) return null;
      const dir = path.join(root, ...folderKey.slice(0, -1).split('/'));
      try {
        // Every write goes through a temp file in the same folder, so any change moves its mtime.
        const stats = statSync(dir, { bigint: true, throwIfNoEntry: false });
        if (!stats) return 'absent';
        if (Date.now() - Number(stats.mtimeMs) < VERSION_SETTLE_MS) return null;
        return `${stats.ino.toString(36)}-${stats.mtimeNs.toString(36)}`;
      } catch (error) {
        if (isCode(error, 'ENOENT', 'ENOTDIR')) return 'absent';
        throw storageError('stat', dir, error);
      }
    },

    async stat(key) {
      const stats = await statFile(pathOf(key));
      return stats ? infoOf(key, stats) : null;
    },

    async put(key, body, options: PutOptions = {}) {
      const file = pathOf(key);
      if (options.ifNoneMatch === '*') return { etag: etagOf(await creator.create(key, file, body, options.inExistingFolder === true)) };
      const { temp, handle } = await openTemp(file, body);
      try {
        // A replaced body is fsynced before the rename: the name never points at a torn file.
        await handle.datasync();
        fault?.(`before-rename:${path.basename(file)}`);
        await withKeyLock(file, async () => {
          if (options.ifMatch !== undefined) {
            const current = await statFile(file);
            if (!current || etagOf(current) !== options.ifMatch) {
              throw new LiveMemError('precondition_failed', `${key} changed since it was read`, { key });
            }
          }
          await fsp.rename(temp, file);
        });
        await syncFolder(path.dirname(file));
        // Rename keeps the inode and mtime: the temp file's etag is the final file's.
        return { etag: etagOf(await handle.stat()) };
      } catch (error) {
        throw storageError('write', file, error);
      } finally {
        await handle.close().catch(() => undefined);
        await fsp.unlink(temp).catch(() => undefined); // after a rename it is already gone
      }
    },

    async list(prefix, options: ListOptions = {}) {
      const normalized = normalizePrefix(prefix);
      // The folder that holds every match: the prefix itself when it ends in '/', else its parent.
      const cut = normalized.lastIndexOf('/') + 1;
      const folderKey = normalized.slice(0, cut);
      const dir = folderKey === '' ? root : path.join(root, ...folderKey.slice(0, -1).split('/'));
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
    },

    async delete(key) {
      await removeFile(key);
    },

    async debris(prefix, options = {}) {
      const folderKey = normalizePrefix(prefix).replace(/\/$/, '');
      const found: DebrisFile[] = [];
      const visit = async (dir: string): Promise<void> => {
        let entries: Dirent[];
        try {
          entries = await fsp.readdir(dir, { withFileTypes: true });
        } catch (error) {
          if (isCode(error, 'ENOENT', 'ENOTDIR')) return;
          throw storageError('list', dir, error);
        }
        for (const entry of entries) {
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
      await visit(folderKey === '' ? root : path.join(root, ...folderKey.split('/')));
      return found.sort((a, b) => compareKeys(a.path, b.path));
    },

    async deleteMany(keys) {
      keys.forEach((key) => pathOf(key)); // every key checked before any is deleted
      await mapLimit(keys, 16, removeFile);
    },

    async removeFolder(prefix) {
      const folderKey = normalizePrefix(prefix);
      if (!folderKey.endsWith('/') || folderKey === '/') throw new LiveMemError('invalid_input', `not a folder: ${prefix}`);
      const dir = pathOf(folderKey.slice(0, -1));
      // One rename takes the whole folder away: from then on, no path into it resolves.
      const aside = tempFor(dir);
      try {
        await fsp.rename(dir, aside);
      } catch (error) {
        if (isCode(error, 'ENOENT')) return 0;
        throw storageError('delete', dir, error);
      }
      await syncFolder(path.dirname(dir)); // the removal is durable here, whatever happens to the erasing below
      const keys: string[] = [];
      await walk(aside, '', false, keys, []);
      await fsp.rm(aside, { recursive: true, force: true }).catch((error: unknown) => {
        throw storageError('delete', aside, error); // left for `debris` and listings to sweep
      });
      await pruneEmptyDirs(path.dirname(dir));
      return keys.length;
    },

    close: () => creator.close(),

    batch(): WriteBatch {
      const files: string[] = [];
      const dirs = new Set<string>();
      return {
        async put(key, body) {
          const file = pathOf(key);
          const dir = path.dirname(file);
          try {
            if (!dirs.has(dir)) {
              await makeFolder(dir);
              dirs.add(dir);
            }
            await fsp.writeFile(file, body, { mode: 0o600 });
          } catch (error) {
            throw storageError('write', file, error);
          }
          files.push(file);
        },
        async flush() {
          try {
            await syncWritten(root, files, dirs);
          } catch (error) {
            throw storageError('sync', root, error);
          }
        },
      };
    },
  };
}

/** A temp name's writer, as tempFor writes it on Linux: `.{machine tag}{pid in base 36}-{6 hex}{counter}.lmtmp`. */
const TEMP_WRITER = /\.([0-9a-f]{8})([0-9a-z]{1,8})-[0-9a-f]{6}[0-9a-z]+\.lmtmp$/;

/**
 * Whether a temp or lock file (or a folder set aside) belongs to no running write: older than any
 * write takes, or written by a process of this machine that has exited (a writer killed mid-write:
 * its temp file may hold a whole body, a forgotten note's text, that nothing will ever rename).
 */
function isDebris(file: string, stats: Stats): boolean {
  if (Date.now() - stats.mtimeMs > DEBRIS_AFTER_MS) return true;
  const writer = TEMP_WRITER.exec(file);
  return writer !== null && processGone(writer[1] as string, Number.parseInt(writer[2] as string, 36));
}

/** Asked of every name a listing reads: a loop, not a callback per name. */
const isReserved = (name: string): boolean => {
  for (const suffix of RESERVED_SUFFIXES) if (name.endsWith(suffix)) return true;
  return false;
};
