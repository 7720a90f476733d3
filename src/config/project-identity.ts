import { readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * A project's identity: the space its agents share when none is named. It must come out the same
 * for every agent of one project, whatever folder a client starts the server in and whatever the
 * clone is called on each machine, so it is the repository's name from its `origin` remote when
 * there is one (`acme/webapp` cloned as `wa-clone` is still `webapp`), else the top folder of the
 * git work tree, else the folder itself. The git files are read here (no git binary needed).
 */
export interface ProjectIdentity {
  /** The space id. */
  space_id: string;
  /** What it was read from, for people (`space_source_detail`): a remote (credentials left out), a work tree or a folder. */
  from: string;
}

/** Why a folder is no project, for people (`space_source_detail`). */
export interface NoProject {
  none: string;
}

/**
 * The project `dir` belongs to, for a server whose home folder is `home`. The file system root and
 * the home folder are no project: a client started there (Claude Desktop in `/`, a desktop app in
 * `$HOME`) says nothing about the project its agent works on. A home folder kept in git (dotfiles)
 * is no project either: the walk up for `.git` stops below it, so a plain folder under it is its
 * own project, not the dotfiles.
 */
export function projectIdentity(dir: string, home: string | undefined): ProjectIdentity | NoProject {
  const folder = path.resolve(dir);
  if (path.dirname(folder) === folder) return { none: `${folder} is the root of the file system, no project` };
  if (isHome(folder, home)) return { none: `${folder} is the home folder, no project` };
  const top = workTreeTop(folder, home);
  if (top !== undefined) {
    const origin = originOf(top);
    const name = origin === undefined ? '' : toSpaceId(repositoryName(origin) ?? '');
    if (origin !== undefined && name) return { space_id: name, from: `the origin remote ${withoutCredentials(origin)} of the git repository ${top}` };
    const topName = toSpaceId(path.basename(top));
    if (topName) return { space_id: topName, from: `the git work tree ${top} (no origin remote)` };
  }
  const own = toSpaceId(path.basename(folder));
  return own ? { space_id: own, from: `the folder ${folder} (no git repository)` } : { none: `the name of ${folder} makes no space id` };
}

/** The home folder, also through a symbolic link. */
function isHome(folder: string, home: string | undefined): boolean {
  return home !== undefined && home !== '' && sameFolder(folder, path.resolve(home));
}

function sameFolder(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}

/** The nearest folder from `folder` up holding `.git` (a folder, or a worktree's or submodule's file), below the home folder and the root. */
function workTreeTop(folder: string, home: string | undefined): string | undefined {
  for (let at = folder; path.dirname(at) !== at && !isHome(at, home); at = path.dirname(at)) {
    if (exists(path.join(at, '.git'))) return at;
  }
  return undefined;
}

function exists(file: string): boolean {
  try {
    statSync(file);
    return true;
  } catch {
    return false;
  }
}

/**
 * The `origin` URL of the repository whose work tree is `top`. Its `.git` is a folder, or a file
 * (`gitdir: …`) for a linked worktree or a submodule; a worktree's git folder names the shared one
 * in `commondir`, which holds the config. Anything unreadable means no origin.
 */
function originOf(top: string): string | undefined {
  try {
    const dotGit = path.join(top, '.git');
    let gitDir = dotGit;
    if (statSync(dotGit).isFile()) {
      const pointer = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(dotGit, 'utf8'));
      if (!pointer?.[1]) return undefined;
      gitDir = path.resolve(top, pointer[1]);
    }
    let commonDir = gitDir;
    try {
      commonDir = path.resolve(gitDir, readFileSync(path.join(gitDir, 'commondir'), 'utf8').trim());
    } catch {
      // No commondir: the git folder is the repository's own (a clone, a submodule).
    }
    return originUrl(readFileSync(path.join(commonDir, 'config'), 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * The first `url` of `[remote "origin"]` (or the old `[remote.origin]`) in a git config's text:
 * section names and keys are case-insensitive, a subsection is not; values may be quoted, and
 * `#` or `;` outside quotes starts a comment.
 */
export function originUrl(config: string): string | undefined {
  let inOrigin = false;
  for (const raw of config.split(/\r?\n/)) {
    let line = raw.trim();
    const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\](.*)$/.exec(line);
    if (header) {
      const section = (header[1] ?? '').toLowerCase();
      inOrigin = header[2] === undefined ? section === 'remote.origin' : section === 'remote' && header[2].replace(/\\(.)/g, '$1') === 'origin';
      line = (header[3] ?? '').trim();
    }
    if (!inOrigin) continue;
    const entry = /^url\s*=(.*)$/i.exec(line);
    if (entry) {
      const value = configValue(entry[1] ?? '');
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

/**
 * The repository's name in a remote URL of any form git takes: `https://host/owner/name.git`,
 * `ssh://user@host:port/owner/name`, scp-like `user@host:owner/name.git`, `file:///srv/name.git`,
 * a local path (`/srv/git/name`, `../name/.git`, `C:\repos\name`). Undefined when it names none.
 */
export function repositoryName(remote: string): string | undefined {
  let rest = remote.trim();
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(rest);
  if (scheme) {
    // The host (and user, port) up to the first slash; a query or fragment is no part of the path.
    rest = rest
      .slice(scheme[0].length)
      .replace(/[?#].*$/, '')
      .replace(/^[^/]*/, '');
  } else if (/^[^/\\:]+:/.test(rest) && !/^[A-Za-z]:[\\/]/.test(rest)) {
    // scp-like `host:path` (no slash before the colon), not a Windows drive.
    rest = rest.slice(rest.indexOf(':') + 1);
  }
  const parts = rest.split(/[\\/]+/).filter((part) => part !== '');
  let name = parts.pop();
  if (name === '.git') name = parts.pop();
  name = name?.replace(/\.git$/i, '');
  return name && name !== '.' && name !== '..' ? name : undefined;
}

/** A URL as it may be shown: no user or password (a token pasted into an https remote stays out of results and logs). */
function withoutCredentials(url: string): string {
  return url.replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^@/]*@/, '$1');
}

/**
 * A name as a space id: letters, digits, _ and -, starting with a letter or digit, at most 64;
 * '' when nothing usable is left (a name of symbols only), which is no identity rather than a
 * catch-all space.
 */
export function toSpaceId(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9_-]+/g, '-')
    .replace(/^[_-]+/, '')
    .slice(0, 64)
    .replace(/[_-]+$/, '');
}
