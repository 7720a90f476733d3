import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { tempDir } from './tmp.js';

/** Runs `fn` on a fresh 256 KB tmpfs (a disk that fills up for real), unmounted after. Needs root (CI runs as root). */
export async function onTinyDisk(t: TestContext, fn: (mountPoint: string) => Promise<void>): Promise<void> {
  const mountPoint = (await tempDir('live-mem-tinyfs')).dir;
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', mountPoint], { stdio: 'ignore' });
  } catch {
    await rm(mountPoint, { recursive: true, force: true });
    if (process.env.CI) assert.fail('CI must be able to mount a tmpfs (root) for the full-disk tests');
    t.skip('cannot mount a tmpfs here (needs root)');
    return;
  }
  try {
    await fn(mountPoint);
  } finally {
    execFileSync('umount', ['--lazy', mountPoint]); // lazy: a handle a failed test left open must not hide its failure
    await rm(mountPoint, { recursive: true, force: true });
  }
}

/**
 * Fills the disk under `dir` with one-page files until a write fails with ENOSPC, then frees
 * `freePages` of them: with one page free, a small write still lands and the next one does not.
 */
export async function fillDisk(dir: string, freePages = 0): Promise<void> {
  const fillers: string[] = [];
  for (;;) {
    const file = path.join(dir, `filler-${fillers.length}`);
    try {
      await writeFile(file, 'x'.repeat(4096));
      fillers.push(file);
    } catch (error) {
      if ((error as { code?: string }).code !== 'ENOSPC') throw error;
      break;
    }
  }
  for (const file of fillers.slice(0, freePages)) await rm(file);
}
