import { promises as fsp } from 'node:fs';
import { isCode } from './errors.js';

/**
 * How often a write makes its folder again when a concurrent delete keeps pruning it: each prune
 * needs a delete that left the folder empty, and the write's own file stops the next one.
 */
export const FOLDER_TRIES = 8;

/**
 * `mkdir -p dir`, tried again while a concurrent delete prunes what it has just made: a delete removes
 * the folders it leaves empty (the fs driver's `pruneEmptyDirs`), so between two of mkdir's steps a
 * parent it created can be gone again (ENOENT). Four processes racing to create one space met it.
 */
export async function makeFolder(dir: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await fsp.mkdir(dir, { recursive: true, mode: 0o700 });
      return;
    } catch (error) {
      if (!isCode(error, 'ENOENT') || attempt >= FOLDER_TRIES) throw error;
    }
  }
}
