import { readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * A work tree's repository, read from git's own files (no git binary needed), trusting a `.git`
 * *file* only as far as git's layout vouches for it. A `.git` file (`gitdir: …`) can name any git
 * folder on the machine, so one dropped in a folder could borrow another repository's origin, and
 * with it another project's space. It is followed only when the git folder it names points back at
 * this work tree, as git's own layouts do (gitrepository-layout, git-worktree, gitsubmodules):
 * - a linked worktree's folder (`<common>/worktrees/<id>/`) holds `gitdir`, the path of the `.git`
 *   file that points to it, and `commondir`, the shared repository whose config holds the remotes;
 * - a submodule's folder (`<super>/.git/modules/<name>/`) sets `core.worktree` in its config to the
 *   submodule's work tree (relative to that folder).
 * A `.git` file made by `--separate-git-dir` names no way back: it is not followed either.
 */

/** The repository of a work tree: its `origin` URL, if any. */
export type WorkTreeRepository = { origin: string | undefined } | { refused: string };

/** The repository whose work tree is `top` (which holds `.git`), or why it is not used. */
export function repositoryOf(top: string): WorkTreeRepository {
  const gitDir = gitDirOf(top);
  if (gitDir === undefined) return { origin: undefined };
  return typeof gitDir === 'string' ? { origin: originOf(gitDir) } : gitDir;
}

/** The git folder of the work tree `top`: its `.git` folder, or the one its `.git` file names if that points back; undefined without `.git`. */
export function gitDirOf(top: string): string | { refused: string } | undefined {
  const dotGit = path.join(top, '.git');
  try {
    if (!statSync(dotGit).isFile()) return dotGit;
    const pointer = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(dotGit, 'utf8'))?.[1];
    if (!pointer) return { refused: `its .git file names no git folder` };
    const gitDir = path.resolve(top, pointer);
    return pointsBack(gitDir, top) ? gitDir : { refused: `its .git file points to ${gitDir}, which does not point back to ${top}` };
  } catch {
    return undefined;
  }
}

/** The repository's common folder (a linked worktree's `commondir`; else the git folder itself): where its config and shared refs are. */
export function commonDirOf(gitDir: string): string {
  const common = readText(path.join(gitDir, 'commondir'));
  return common === undefined ? gitDir : path.resolve(gitDir, common.trim());
}

/** Whether the git folder `gitDir` names `top` as its work tree: a linked worktree's `gitdir`, or a `core.worktree`. */
function pointsBack(gitDir: string, top: string): boolean {
  const back = readText(path.join(gitDir, 'gitdir'));
  if (back !== undefined) return sameFile(path.resolve(gitDir, back.trim()), path.join(top, '.git'));
  const config = readText(path.join(gitDir, 'config'));
  const worktree = config === undefined ? undefined : configEntry(config, 'core', undefined, 'worktree');
  return worktree !== undefined && sameFile(path.resolve(gitDir, worktree), top);
}

/** The origin URL in the config of the repository whose git folder is `gitDir` (a worktree's: its `commondir`'s). */
function originOf(gitDir: string): string | undefined {
  const config = readText(path.join(commonDirOf(gitDir), 'config'));
  return config === undefined ? undefined : originUrl(config);
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

function sameFile(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}

/**
 * The first `url` of `[remote "origin"]` (or the old `[remote.origin]`) in a git config's text:
 * section names and keys are case-insensitive, a subsection is not; values may be quoted, and
 * `#` or `;` outside quotes starts a comment.
 */
export function originUrl(config: string): string | undefined {
  return configEntry(config, 'remote', 'origin', 'url');
}

/** The first non-empty value of `key` in `[section "subsection"]` (or `[section.subsection]`, or `[section]`). */
function configEntry(config: string, section: string, subsection: string | undefined, key: string): string | undefined {
  const dotted = subsection === undefined ? section : `${section}.${subsection}`.toLowerCase();
  let inside = false;
  for (const raw of config.split(/\r?\n/)) {
    let line = raw.trim();
    const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\](.*)$/.exec(line);
    if (header) {
      const name = (header[1] ?? '').toLowerCase();
      inside = header[2] === undefined ? name === dotted : name === section && header[2].replace(/\\(.)/g, '$1') === subsection;
      line = (header[3] ?? '').trim();
    }
    if (!inside) continue;
    const entry = /^([A-Za-z][A-Za-z0-9-]*)\s*=(.*)$/.exec(line);
    if (entry && (entry[1] as string).toLowerCase() === key) {
      const value = configValue(entry[2] ?? '');
      if (value) return value;
    }
  }
  return undefined;
}

/** A git config value: quotes removed, escapes resolved, a trailing comment and outer blanks dropped. */
function configValue(text: string): string {
  let value = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i] as string;
    if (char === '\\' && i + 1 < text.length) {
      const next = text[++i] as string;
      value += next === 'n' ? '\n' : next === 't' ? '\t' : next;
    } else if (char === '"') quoted = !quoted;
    else if (!quoted && (char === '#' || char === ';')) break;
    else value += char;
  }
  return value.trim();
}
