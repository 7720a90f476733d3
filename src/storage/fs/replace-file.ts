import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { LiveMemError } from '../../shared/errors.js';
import { isCode, storageError } from './errors.js';
import type { FsStore } from './fs-store.js';
import { withKeyLock } from './key-lock.js';
import { FOLDER_TRIES, makeFolder } from './make-folder.js';
import { etagOf, statFile } from './object-info.js';

/**
 * `put` that replaces (or creates, without `ifNoneMatch`), optionally only the version `ifMatch`
 * names: the body goes to a temp file beside the key's, is fsynced, then renamed over the name under
 * the key's lock (key-lock.ts), and the folder is fsynced. A crash leaves the old version or the new
 * one, never a torn file. Create-only writes are create-file.ts's.
 */
export async function replaceFile(
  store: FsStore,
  key: string,
  body: Buffer | string,
  ifMatch: string | undefined,
  fault: ((point: string) => void) | undefined,
): Promise<{ etag: string }> {
  const file = store.pathOf(key);
  const { temp, handle } = await openTemp(store, file, body);
  try {
    // A replaced body is fsynced before the rename: the name never points at a torn file.
    await handle.datasync();
    fault?.(`before-rename:${path.basename(file)}`);
    await withKeyLock(file, async () => {
      if (ifMatch !== undefined) {
        const current = await statFile(file);
        if (!current || etagOf(current) !== ifMatch) {
          throw new LiveMemError('precondition_failed', `${key} changed since it was read`, { key });
        }
      }
      await fsp.rename(temp, file);
    });
    await store.syncFolder(path.dirname(file));
    // Rename keeps the inode and mtime: the temp file's etag is the final file's.
    return { etag: etagOf(await handle.stat()) };
  } catch (error) {
    throw storageError('write', file, error);
  } finally {
    await handle.close().catch(() => undefined);
    await fsp.unlink(temp).catch(() => undefined); // after a rename it is already gone
  }
}

/**
 * Writes `body` to a fresh temp file beside `file`, creating folders as needed, and returns it
 * open: the caller decides when to fsync it (before or after it gets its name) and closes it.
 */
async function openTemp(store: FsStore, file: string, body: Buffer | string): Promise<{ temp: string; handle: fsp.FileHandle }> {
  const temp = store.tempFor(file);
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
}
