import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { open, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Checkout, FileRead } from '../shared/checkout.js';
import { repositoryOf } from './git-files.js';
import { remoteProject } from './git-remote.js';

/**
 * A git checkout on this machine, as anchors are captured from and checked against (core/anchors/, through shared/checkout.ts):
 * the work tree holding `folder`, its `origin` (canonical, so that two clones of one repository agree)
 * and its HEAD. Reading is bounded and cached: a file past MAX_FILE_BYTES, a binary file, anything
 * outside the work tree (a symlink out of it included) is unreadable, never read wholesale; lines are
 * kept by the file's identity, size and mtime, so a warm check reads no file that did not change. Where
 * a cited symbol went is asked of git's index (`git grep`), never by walking the tree.
 */

/** The largest file an anchor reads. */
export const MAX_FILE_BYTES = 2 * 1024 * 1024;
/** Files whose lines are cached. */
const CACHED_FILES = 2_000;
const GIT_TIMEOUT_MS = 5_000;
const run = promisify(execFile);

/** The top of the git work tree holding `folder`, or undefined. */
export function workTreeOf(folder: string): string | undefined {
  let dir = path.resolve(folder);
  for (;;) {
    if (existsSync(path.join(dir, '.git'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

async function git(top: string, args: string[]): Promise<string | undefined> {
  try {
    const { stdout } = await run('git', args, { cwd: top, timeout: GIT_TIMEOUT_MS, maxBuffer: 1024 * 1024 });
    return stdout;
  } catch {
    return undefined; // no git on this machine, or not a repository it accepts: what needs it is unverifiable
  }
}

/** The checkout of the work tree holding `folder`; undefined when `folder` is in none. */
export async function gitCheckout(folder: string): Promise<Checkout | undefined> {
  const top = workTreeOf(folder);
  if (!top) return undefined;
  const realTop = await realpath(top);
  const repository = repositoryOf(top);
  const origin = 'origin' in repository ? repository.origin : undefined;
  const repo = origin ? remoteProject(origin, top)?.canonical : undefined;
  const cache = new Map<string, { size: number; mtimeMs: number; ino: number; lines: readonly string[] }>();

  const read = async (relative: string): Promise<FileRead> => {
    const absolute = path.resolve(realTop, relative);
    if (!absolute.startsWith(realTop + path.sep)) return { unreadable: 'outside the checkout' };
    let real: string;
    try {
      real = await realpath(absolute);
    } catch {
      return { missing: true };
    }
    if (!real.startsWith(realTop + path.sep)) return { unreadable: 'a link out of the checkout' };
    const info = await stat(real);
    if (!info.isFile()) return { unreadable: 'not a file' };
    if (info.size > MAX_FILE_BYTES) return { unreadable: `larger than ${MAX_FILE_BYTES / 1024 / 1024} MiB: not read` };
    const cached = cache.get(real);
    if (cached && cached.size === info.size && cached.mtimeMs === info.mtimeMs && cached.ino === info.ino) return { lines: cached.lines };
    const handle = await open(real, 'r');
    let body: Buffer;
    try {
      body = Buffer.alloc(info.size);
      await handle.read(body, 0, info.size, 0);
    } finally {
      await handle.close();
    }
    if (body.subarray(0, 8_000).includes(0)) return { unreadable: 'a binary file' };
    const lines = body.toString('utf8').replace(/\r\n?/g, '\n').split('\n');
    if (cache.size >= CACHED_FILES) cache.delete(cache.keys().next().value as string);
    cache.set(real, { size: info.size, mtimeMs: info.mtimeMs, ino: info.ino, lines });
    return { lines };
  };

  return {
    ...(repo ? { repo } : {}),
    commit: async () => (await git(top, ['rev-parse', 'HEAD']))?.trim() || undefined,
    read,
    find: async (word) => {
      const out = await git(top, ['grep', '-l', '-w', '-F', '-I', '--max-count=1', '-e', word]);
      return (out ?? '').split('\n').filter(Boolean).slice(0, 50);
    },
  };
}
