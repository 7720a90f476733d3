import { closeSync, constants, fstatSync, open, openSync, read, readlinkSync, readSync, realpathSync, type Stats } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { objectTooLarge, readLimit } from '../object-size.js';
import { isCode, storageError } from './errors.js';

/**
 * Reads run on the calling thread: a stat, a folder's version, an open, and a file of at most this
 * many bytes (a note, a record, a space's meta); a bigger file (a snapshot, a large bundle of notes) is
 * read through libuv's thread pool, so a long read never holds up the event loop. On a local disk,
 * where what a search reads is in the page cache, that is the cheap way: measured on a 2-core machine,
 * a note read inline costs 10–20 µs of CPU, the same read through the pool (open, fstat, read, close:
 * four round trips, each waking two threads) 150–200 µs; a stat 3 µs inline, 40 µs through the pool. A
 * warm search reads a few notes and asks a few folders' versions: through the pool that was about half
 * of its CPU. The price: a read the disk must serve (a cold cache, a network mount) holds up every call
 * the process is answering while it lasts — a store shared over a network belongs on S3.
 */
export const INLINE_READ_BYTES = 256 * 1024;
const readAt = promisify(read);
const openAt = promisify(open);

/**
 * Opened to read: non-blocking, so a FIFO put in the store answers at once (as no object) instead of
 * waiting for a writer, and never through a symbolic link at the name (O_NOFOLLOW: ELOOP). A file under
 * a lease (Samba, knfsd) refuses that open until the lease is broken: the wait is then taken through the pool.
 */
const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW;

async function openToRead(file: string): Promise<number> {
  try {
    return openSync(file, READ_FLAGS);
  } catch (error) {
    if (isCode(error, 'EAGAIN', 'EWOULDBLOCK')) return openAt(file, READ_FLAGS & ~constants.O_NONBLOCK);
    throw error;
  }
}

/** Fills `body` from the file open as `fd`, from its start; the bytes read (fewer at a shorter file). */
async function readInto(fd: number, body: Buffer): Promise<number> {
  let done = 0;
  while (done < body.length) {
    const bytesRead =
      body.length <= INLINE_READ_BYTES
        ? readSync(fd, body, done, body.length - done, done)
        : (await readAt(fd, body, done, body.length - done, done)).bytesRead;
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return done;
}

/**
 * The reader of one store's files. O_NOFOLLOW guards the last part of a path only: a folder on the
 * way may be a link out of the store (`{space}/bank` → `/etc`). So once open, the file's real path —
 * what the kernel says it opened (/proc/self/fd on Linux; elsewhere the path resolved again) — must
 * lie under the store's real root, itself free to be a link (a home on another disk). A file outside
 * is no object. A link that stays inside the store is followed (a folder moved by hand, a bind mount).
 */
export function createFileReader(root: string) {
  let realRoot: string | undefined;
  const under = (real: string): boolean => {
    for (let attempt = 0; attempt < 2; attempt++) {
      realRoot ??= realpathSync.native(root);
      if (real.startsWith(realRoot + path.sep)) return true;
      realRoot = undefined; // the root may have been re-pointed since: asked once more
    }
    return false;
  };
  const realPathOf = (fd: number, file: string): string => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      return realpathSync.native(file); // no /proc (macOS, Windows)
    }
  };

  /** A file's stats and bytes; null for no object (missing, a folder, a FIFO, a link, outside the store). */
  return async function readFile(key: string, file: string, maxBytes?: number): Promise<{ stats: Stats; body: Buffer } | null> {
    let fd: number;
    try {
      fd = await openToRead(file);
    } catch (error) {
      // ELOOP: a link at the name (EMLINK on FreeBSD, EFTYPE on NetBSD).
      if (isCode(error, 'ENOENT', 'ENOTDIR', 'EISDIR', 'ELOOP', 'EMLINK', 'EFTYPE')) return null;
      throw storageError('read', file, error);
    }
    try {
      const stats = fstatSync(fd);
      if (!stats.isFile() || !under(realPathOf(fd, file))) return null;
      const limit = readLimit(maxBytes);
      if (stats.size > limit) throw objectTooLarge(key, stats.size, limit);
      // Files are never changed in place (a write renames a new file over), so the size is final.
      const body = Buffer.allocUnsafe(stats.size);
      const length = await readInto(fd, body);
      return { stats, body: length === body.length ? body : body.subarray(0, length) };
    } catch (error) {
      if (isCode(error, 'EISDIR')) return null;
      throw storageError('read', file, error);
    } finally {
      closeSync(fd);
    }
  };
}
