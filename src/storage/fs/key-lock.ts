import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { LiveMemError } from '../../shared/errors.js';
import { RESERVED_SUFFIXES } from '../../shared/keys.js';
import { makeFolder } from './make-folder.js';

/** A lock older than this was left by a crashed process: it is broken. Holders keep it for milliseconds. */
const STALE_AFTER_MS = 10_000;
const GIVE_UP_AFTER_MS = 15_000;

/**
 * Runs `fn` while holding `${file}.lmlock`, created with O_EXCL so that one process at a time holds
 * it. Serialises compare-and-swap, replace and delete of one key across processes.
 */
export async function withKeyLock<T>(file: string, fn: () => Promise<T>): Promise<T> {
  const lock = `${file}${RESERVED_SUFFIXES[1]}`;
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    try {
      const handle = await fsp.open(lock, 'wx', 0o600);
      await handle.close();
      break;
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === 'ENOENT') {
        // The folder does not exist yet: nothing to serialise against, create it and retry.
        await makeFolder(path.dirname(file));
        continue;
      }
      if (code !== 'EEXIST') throw error;
      await breakIfStale(lock);
      if (Date.now() - started > GIVE_UP_AFTER_MS) {
        throw new LiveMemError('conflict', `timed out waiting for the lock on ${file}`, { lock });
      }
      await sleep(Math.min(50, 1 + attempt * 2) * (0.5 + Math.random()));
    }
  }
  try {
    return await fn();
  } finally {
    await fsp.rm(lock, { force: true });
  }
}

async function breakIfStale(lock: string): Promise<void> {
  try {
    const stats = await fsp.stat(lock);
    if (Date.now() - stats.mtimeMs > STALE_AFTER_MS) {
      // rename is atomic: of two processes breaking the same stale lock, one wins, the other sees ENOENT.
      const aside = `${lock}.${process.pid}.${Date.now()}${RESERVED_SUFFIXES[0]}`;
      await fsp.rename(lock, aside);
      await fsp.rm(aside, { force: true });
    }
  } catch {
    // gone already: the next attempt will take it
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
