import { closeSync, fstatSync, fsync, fsyncSync, linkSync, openSync, unlinkSync, writeSync, type Stats } from 'node:fs';
import path from 'node:path';
import { LiveMemError } from '../../shared/errors.js';
import { isCode, storageError } from './errors.js';
import { FOLDER_TRIES, makeFolder } from './make-folder.js';

/** A spare temp file unused this long is removed: an idle process leaves nothing beside the notes. */
const SPARE_IDLE_MS = 30_000;

export interface FileCreator {
  /**
   * Creates `file` with `body`, never replacing one, durable when it resolves. With
   * `inExistingFolder`, a missing folder is `not_found` instead of being created.
   */
  create(key: string, file: string, body: Buffer | string, inExistingFolder: boolean): Promise<Stats>;
  /** Removes the spare temp file, if any. */
  close(): Promise<void>;
}

/**
 * Every note's path: create-only writes of the fs driver. `tempFor(file)` names a temp file beside
 * `file`, unique to the driver and to each call, with a reserved suffix.
 *
 * The body goes to a temp file, which is linked to the name (link(2) fails with EEXIST atomically
 * across processes), then fsynced. Named first, then fsynced: the fsync makes the data and the new
 * name durable together (ext4, XFS and btrfs sync a new file's folder entry with it), and until it
 * returns nobody was told. Readers never see a partial body: the name appears with the whole of it.
 *
 * It costs one wait, the fsync. The calls around it (write, link, unlink, fstat, close) are made
 * synchronously: each takes microseconds on a local disk, less than a hop to a pool thread and back.
 * The one that can take longer, open(2) of a new file (it allocates an inode; on ext4 after many
 * deletions that scans the inode table, hundreds of µs), is taken off the path: once a process has
 * created two files in a folder, it keeps a spare temp file open there, opened after each create
 * once its answer is out, and the next create in that folder writes into it.
 */
export function createFileCreator(tempFor: (file: string) => string, { spareIdleMs = SPARE_IDLE_MS } = {}): FileCreator {
  /** The spare: one temp file, opened ahead, in the folder of the latest creates. */
  let spare: { dir: string; temp: string; fd: number } | undefined;
  let closed = false;
  const createdIn = new Map<string, number>();

  const dropSpare = (): void => {
    if (!spare) return;
    const { temp, fd } = spare;
    spare = undefined;
    unlinkQuietly(temp);
    closeSync(fd);
  };
  const idle = setTimeout(dropSpare, spareIdleMs);
  idle.unref();

  /**
   * Opens the next spare in `dir`. Called once the answer is out, while the caller reads it and
   * sends its next request: the event loop has nothing else to do then, and the open runs on its
   * own thread, where handing it to a pool thread would wake a third one (on a small virtual
   * machine, a thread woken on another CPU is an interrupt, and it takes the CPU the caller needs).
   */
  const prepareSpare = (dir: string): void => {
    if (closed || spare?.dir === dir) return;
    // Not for a process that writes one file here (a CLI `note`): only from the second on.
    const count = (createdIn.get(dir) ?? 0) + 1;
    createdIn.clear(); // only the latest folder counts: a spare follows the writes
    createdIn.set(dir, count);
    if (count < 2) return;
    dropSpare();
    const temp = tempFor(path.join(dir, 'spare'));
    try {
      spare = { dir, temp, fd: openSync(temp, 'wx', 0o600) };
      idle.refresh();
    } catch {
      // The folder went away (or the disk is full): the next create opens its own.
    }
  };

  /** The spare if it is in `dir`, handed over (the caller owns it from here). */
  const takeSpare = (dir: string): { temp: string; fd: number } | undefined => {
    if (spare?.dir !== dir) return undefined;
    const taken = spare;
    spare = undefined;
    return taken;
  };

  /**
   * fsyncs a new file. Alone, the fsync runs on the event loop, which would only wait for it
   * anyway: a trip to a pool thread and back costs a good part of a fast disk's fsync. Whether it
   * is alone is asked after one turn of the loop, so that requests already read (a client with
   * many calls in flight) have started their own creates: then each fsync runs on a pool thread,
   * and the disk takes their flushes together.
   */
  let syncing = 0;
  const syncNew = async (fd: number): Promise<void> => {
    syncing++;
    try {
      await new Promise((resolve) => setImmediate(resolve));
      if (syncing === 1) fsyncSync(fd);
      else await new Promise<void>((resolve, reject) => fsync(fd, (error) => (error ? reject(error) : resolve())));
    } finally {
      syncing--;
    }
  };

  /** A fresh temp file beside `file`, open for writing; makes the folder unless `inExistingFolder`. */
  const openTemp = async ({ key, file, inExistingFolder }: Write): Promise<{ temp: string; fd: number }> => {
    const temp = tempFor(file);
    for (let attempt = 0; ; attempt++) {
      try {
        return { temp, fd: openSync(temp, 'wx', 0o600) };
      } catch (error) {
        if (!isCode(error, 'ENOENT') || attempt >= FOLDER_TRIES) throw storageError('create', file, error);
        if (inExistingFolder) throw folderGone(key);
        await makeFolder(path.dirname(file)).catch((cause: unknown) => {
          throw storageError('create', file, cause);
        });
      }
    }
  };

  /**
   * Writes the body into an open temp file, links it to its name and fsyncs it; returns its stats,
   * or null when a spare's name was gone (swept meanwhile: the caller starts afresh).
   */
  const writeAndLink = async (write: Write, temp: string, fd: number, isSpare: boolean): Promise<Stats | null> => {
    const { key, file, body } = write;
    try {
      const bytes = typeof body === 'string' ? Buffer.from(body) : body;
      for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written, bytes.length - written, written);
      try {
        linkSync(temp, file);
      } catch (error) {
        if (isCode(error, 'EEXIST')) throw new LiveMemError('precondition_failed', `${key} already exists`, { key });
        if (isCode(error, 'ENOENT') && isSpare) return null;
        // The folder went away between open and link (removeFolder renamed it): the temp went with it.
        if (isCode(error, 'ENOENT') && write.inExistingFolder) throw folderGone(key);
        throw error;
      } finally {
        unlinkQuietly(temp); // after a link, a second name of the file
      }
      await syncNew(fd);
      setImmediate(prepareSpare, path.dirname(file)); // the next turn of the loop: after the answer
      // Link keeps the inode and mtime: the etag is the final file's.
      return fstatSync(fd);
    } catch (error) {
      unlinkQuietly(temp); // a write that failed (a full disk) leaves nothing
      throw storageError('write', file, error);
    } finally {
      closeSync(fd);
    }
  };

  const create = async (key: string, file: string, body: Buffer | string, inExistingFolder: boolean): Promise<Stats> => {
    const write: Write = { key, file, body, inExistingFolder };
    const spareHere = takeSpare(path.dirname(file));
    const stats = spareHere && (await writeAndLink(write, spareHere.temp, spareHere.fd, true));
    if (stats) return stats;
    const { temp, fd } = await openTemp(write);
    return (await writeAndLink(write, temp, fd, false)) as Stats;
  };

  return {
    create,
    async close() {
      closed = true;
      clearTimeout(idle);
      dropSpare();
    },
  };
}

interface Write {
  key: string;
  file: string;
  body: Buffer | string;
  inExistingFolder: boolean;
}

const folderGone = (key: string) => new LiveMemError('not_found', `the folder of ${key} does not exist`, { key });

/** Removes a file whose removal may fail harmlessly (already gone, or gone with its folder). */
export function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // nothing to remove
  }
}
