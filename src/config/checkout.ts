import { execFile } from 'node:child_process';
import { open, readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Checkout, FileRead } from '../shared/checkout.js';
import { commonDirOf, gitDirOf, repositoryOf } from './git-files.js';
import { workTreeTop } from './project-identity.js';
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

async function git(top: string, args: string[]): Promise<string | undefined> {
  try {
    const { stdout } = await run('git', args, { cwd: top, timeout: GIT_TIMEOUT_MS, maxBuffer: 1024 * 1024 });
    return stdout;
  } catch {
    return undefined; // no git on this machine, or not a repository it accepts: what needs it is unverifiable
  }
}

/**
 * The commit `top`'s HEAD names, read from git's files (no process: a note's write asks it): HEAD, then
 * its ref, loose or packed, in the common folder of a linked work tree. Undefined when any of it is
 * not as expected (the caller asks git then).
 */
async function headOf(top: string): Promise<string | undefined> {
  const gitDir = gitDirOf(top);
  if (typeof gitDir !== 'string') return undefined;
  try {
    const head = (await readFile(path.join(gitDir, 'HEAD'), 'utf8')).trim();
    if (/^[0-9a-f]{40,64}$/.test(head)) return head;
    const ref = /^ref: (refs\/[^\s]+)$/.exec(head)?.[1];
    if (!ref || ref.includes('..')) return undefined;
    const common = commonDirOf(gitDir);
    for (const dir of new Set([gitDir, common])) {
      const loose = await readFile(path.join(dir, ref), 'utf8').catch(() => undefined);
      if (loose && /^[0-9a-f]{40,64}\s*$/.test(loose)) return loose.trim();
    }
    const packed = await readFile(path.join(common, 'packed-refs'), 'utf8').catch(() => '');
    return new RegExp(`^([0-9a-f]{40,64}) ${ref.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm').exec(packed)?.[1];
  } catch {
    return undefined;
  }
}

/** The checkout of the work tree holding `folder`; undefined when `folder` is in none. */
export async function gitCheckout(folder: string): Promise<Checkout | undefined> {
  // The home folder is not passed: a checkout is wherever git says the work tree is (config/project-identity.ts).
  const top = workTreeTop(path.resolve(folder), undefined);
  if (!top) return undefined;
  const realTop = await realpath(top);
  const repository = repositoryOf(top);
  const origin = 'origin' in repository ? repository.origin : undefined;
  const repo = origin ? remoteProject(origin, top)?.canonical : undefined;
  const cache = new Map<string, { version: string; lines: readonly string[] }>();

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
    const version = `${info.ino}:${info.size}:${info.mtimeMs}`;
    const cached = cache.get(real);
    if (cached && cached.version === version) return { lines: cached.lines, version };
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
    cache.set(real, { version, lines });
    return { lines, version };
  };

  return {
    ...(repo ? { repo } : {}),
    commit: async () => (await headOf(top)) ?? ((await git(top, ['rev-parse', 'HEAD']))?.trim() || undefined),
    read,
    find: async (word) => {
      const out = await git(top, ['grep', '-l', '-w', '-F', '-I', '--max-count=1', '-e', word]);
      return (out ?? '').split('\n').filter(Boolean).slice(0, 50);
    },
  };
}
