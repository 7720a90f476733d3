import { mkdir, readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { invalid } from '../../shared/errors.js';
import { createExclusive, replaceFile } from '../../shared/private-file.js';

/**
 * How setup writes a file it merged (a client's configuration, a rules file, Claude Code's settings,
 * live-mem.yaml): every new text is computed before anything is written, so a file that cannot be
 * merged stops the command with nothing changed; an existing file is copied beside itself first; the
 * new text lands through a temporary file and a rename, so a crash leaves the old file or the new one.
 * Both are created as shared/private-file.ts creates files: never through a name another user made
 * first (a file of theirs, a link), with their mode from the start.
 */

export interface FileChange {
  kind: 'config' | 'rules' | 'hooks' | 'settings';
  file: string;
  /** created, updated, unchanged; with --print, the text it would hold is in `content` instead. */
  action: 'created' | 'updated' | 'unchanged' | 'not written (--print)';
  backup?: string;
  content?: string;
  /** The file holds a secret (a token, an API key): written, and kept, readable by its owner only. */
  secret?: boolean;
}

/** A file to merge: where it is shown, where it really is (a link's target), its text now and the text it should hold. */
export interface Planned {
  kind: FileChange['kind'];
  shown: string;
  target: string;
  old: string | undefined;
  /** undefined: it already holds what it should. */
  next: string | undefined;
  secret?: boolean;
}

/** Reads a file to merge (undefined when absent), through a link kept as it is (dotfiles). */
export async function plan(kind: FileChange['kind'], shown: string, merge: (old: string | undefined) => string | undefined, secret = false): Promise<Planned> {
  const target = await resolveLink(shown);
  const old = await readIfExists(target);
  return { kind, shown, target, old, next: merge(old), ...(secret ? { secret } : {}) };
}

/** Writes one planned file: a copy of the old one beside it first, then the new text through a temporary file and a rename. */
export async function apply(file: Planned, stamp: string): Promise<FileChange> {
  const { kind, shown, target, old, next, secret } = file;
  const marked = secret ? { secret } : {};
  if (next === undefined) return { kind, file: shown, action: 'unchanged', ...marked };
  await mkdir(path.dirname(target), { recursive: true });
  let backup: string | undefined;
  let mode: number | undefined;
  if (old !== undefined) {
    backup = `${target}.bak-${stamp}`;
    // Readable by its owner only, whatever the file's mode: the old text may hold a token the new one no longer does.
    await createExclusive(backup, await readFile(target), { mode: 0o600 });
    mode = (await stat(target)).mode & 0o777;
  }
  // A secret is never left readable by others, whatever the file's mode was; other files keep theirs.
  const wanted = secret ? (mode ?? 0o600) & 0o700 : (mode ?? 0o644);
  await replaceFile(target, next, { mode: wanted });
  return { kind, file: shown, action: old === undefined ? 'created' : 'updated', ...(backup ? { backup } : {}), ...marked };
}

export async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** A configuration file kept as a link (dotfiles): written where it points, the link left as it is. */
async function resolveLink(file: string): Promise<string> {
  try {
    return await realpath(file);
  } catch {
    return file;
  }
}

export async function isFolder(file: string): Promise<boolean> {
  try {
    return (await stat(file)).isDirectory();
  } catch {
    return false;
  }
}

/** The stamp of this run's backups (`<file>.bak-<stamp>`). */
export const backupStamp = (now: Date): string => now.toISOString().replace(/[:.]/g, '-');

/** A secret from a file (a token, an API key): its content, trimmed of the newline `echo` leaves. */
export async function secretFrom(file: string, flag: string): Promise<string> {
  let text: string;
  try {
    text = (await readFile(file, 'utf8')).trim();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw invalid(`${flag} ${file}: ${code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (error as Error).message}`);
  }
  if (text === '') throw invalid(`${flag} ${file} is empty`);
  if (/\s/.test(text)) throw invalid(`${flag} ${file} holds more than one word: it should hold the secret alone`);
  return text;
}
