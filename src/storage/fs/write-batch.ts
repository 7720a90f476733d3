import { promises as fsp } from 'node:fs';
import path from 'node:path';
import type { WriteBatch } from '../types.js';
import { storageError } from './errors.js';
import type { FsStore } from './fs-store.js';
import { makeFolder } from './make-folder.js';
import { syncWritten } from './sync.js';

/**
 * StorageDriver.batch on fs: each body written straight to its name, no temp file and no fsync per
 * object; `flush` makes them all durable at once (sync.ts).
 */
export function createWriteBatch(store: FsStore): WriteBatch {
  const files: string[] = [];
  const dirs = new Set<string>();
  return {
    async put(key, body) {
      const file = store.pathOf(key);
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
        await syncWritten(store.root, files, dirs);
      } catch (error) {
        throw storageError('sync', store.root, error);
      }
    },
  };
}
