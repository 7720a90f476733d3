import type { PutOptions, StorageDriver, StoredObject } from '../types.js';
import { createFileCreator } from './create-file.js';
import { findDebris } from './debris.js';
import { deleteFile, deleteFiles, removeFolder } from './delete-file.js';
import { createFolderVersions } from './folder-version.js';
import { createFsStore } from './fs-store.js';
import { listFiles } from './list-files.js';
import { etagOf, infoOf, statFile } from './object-info.js';
import { createFileReader } from './read-file.js';
import { replaceFile } from './replace-file.js';
import { createWriteBatch } from './write-batch.js';

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
 *
 * This factory composes the operations of its sibling modules over one FsStore (fs-store.ts): reads
 * (read-file.ts, object-info.ts, folder-version.ts), writes (create-file.ts, replace-file.ts,
 * write-batch.ts), listings (list-files.ts), deletes (delete-file.ts) and writers' debris (debris.ts).
 */

/** createFsDriver's options: test hooks only. */
export interface FsDriverOptions {
  /**
   * Test hook: called with `before-rename:{file name}` once a replacing write's temp file holds the
   * whole body, before it is renamed over the file (the CLI kills itself there for LIVE_MEM_TEST_KILL_AT,
   * so tests can see what a writer killed mid-write leaves).
   */
  fault?: (point: string) => void;
}

export function createFsDriver(rootDir: string, options: FsDriverOptions = {}): StorageDriver {
  const store = createFsStore(rootDir);
  const { root, pathOf } = store;
  const { fault } = options;
  const creator = createFileCreator(store.tempFor);
  const readFile = createFileReader(root);

  return {
    name: 'fs',
    location: root,
    parallelism: 16,

    async get(key, options = {}): Promise<StoredObject | null> {
      const read = await readFile(key, pathOf(key), options.maxBytes);
      return read && { ...infoOf(key, read.stats), body: read.body };
    },

    version: createFolderVersions(root),

    async stat(key) {
      const stats = await statFile(pathOf(key));
      return stats ? infoOf(key, stats) : null;
    },

    async put(key, body, options: PutOptions = {}) {
      if (options.ifNoneMatch !== '*') return replaceFile(store, key, body, options.ifMatch, fault);
      return { etag: etagOf(await creator.create(key, pathOf(key), body, options.inExistingFolder === true)) };
    },

    list: (prefix, options) => listFiles(store, prefix, options),
    delete: (key) => deleteFile(store, key),
    deleteMany: (keys) => deleteFiles(store, keys),
    removeFolder: (prefix) => removeFolder(store, prefix),
    debris: (prefix, options) => findDebris(root, prefix, options),
    batch: () => createWriteBatch(store),
    close: () => creator.close(),
  };
}
