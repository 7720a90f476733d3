import { execFile } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { mapLimit } from '../../shared/concurrency.js';

/**
 * Makes files written without fsync durable, together. On Linux: one syncfs(2) of the filesystem
 * holding `root`, through `sync -f` (Node has no binding for it): one writeback for thousands of
 * files, where an fsync each costs a disk flush each. Elsewhere, or if that fails: an fsync of
 * every file, then of every folder that gained entries, up to `root`.
 */
export async function syncWritten(root: string, files: readonly string[], dirs: Iterable<string>): Promise<void> {
  if (files.length === 0) return;
  if (process.platform === 'linux' && (await syncfs(root))) return;
  await mapLimit(files, 16, (file) => fsyncPath(file));
  const folders = new Set<string>();
  for (let dir of dirs) {
    for (; dir.startsWith(root) && !folders.has(dir); dir = path.dirname(dir)) folders.add(dir);
  }
  await mapLimit([...folders], 16, (dir) => fsyncPath(dir).catch(ignoreFolderSyncUnsupported));
}

/** Whether `sync -f` synced the filesystem (false when the command is missing or failed). */
function syncfs(root: string): Promise<boolean> {
  return new Promise((resolve) => execFile('sync', ['-f', root], { timeout: 120_000 }, (error) => resolve(!error)));
}

async function fsyncPath(target: string): Promise<void> {
  const handle = await fsp.open(target, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Some platforms (Windows) cannot open or fsync a folder; the files themselves are synced. */
function ignoreFolderSyncUnsupported(error: unknown): void {
  const code = (error as { code?: string }).code;
  if (code !== 'EISDIR' && code !== 'EPERM' && code !== 'EINVAL' && code !== 'EBADF') throw error;
}
