import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** A fresh temp folder and its remover. */
export async function tempDir(label = 'live-mem-test'): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), `${label}-`));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}
