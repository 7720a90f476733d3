import { createHash } from 'node:crypto';
import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { repositoryOf } from './git-files.js';
import { remoteProject, repositoryName, withoutCredentials } from './git-remote.js';

/**
 * A project's identity: the space its agents share when none is named. It must come out the same
 * for every agent of one project, whatever folder a client starts the server in and whatever the
 * clone is called on each machine, and never the same for two projects. So a git project's space
 * comes from its `origin` remote's host, owner path and repository (`git@github.com:acme/webapp.git`
 * is `acme-webapp-<hash>`, and `evil.example.org/mallory/webapp` another space), else the top folder
 * of the git work tree, else the folder itself: those two stay on one machine, where a folder's name
 * is the person's own choice. The git files are read here (no git binary needed).
 */
export interface ProjectIdentity {
  /** The space id. */
  space_id: string;
  /** What it was read from, for people (`space_source_detail`): a remote (credentials left out), a work tree or a folder. */
  from: string;
  /**
   * The project a space made for it records (`project` in its meta): a remote's canonical form
   * (`github.com/acme/webapp`), a local repository's path, or a long folder name in full.
   */
  project?: string;
  /** The id the rule before gave this project (`webapp`), whose space may hold its older notes (core/space/project-space.ts). */
  legacy_id?: string;
  /** The folder on this machine it was read from (not for a remote alone): its checkout holds the code notes cite (core/anchors/). */
  folder?: string;
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
 * own project, not the dotfiles. A `.git` file that does not vouch for its folder
 * (config/git-files.ts) makes no repository: the folder is taken as one without git.
 */
export function projectIdentity(dir: string, home: string | undefined): ProjectIdentity | NoProject {
  const found = identityOf(path.resolve(dir), home);
  return 'space_id' in found ? { ...found, folder: path.resolve(dir) } : found;
}

function identityOf(folder: string, home: string | undefined): ProjectIdentity | NoProject {
  if (path.dirname(folder) === folder) return { none: `${folder} is the root of the file system, no project` };
  if (isHome(folder, home)) return { none: `${folder} is the home folder, no project` };
  const top = workTreeTop(folder, home);
  let refused = '';
  if (top !== undefined) {
    const repository = repositoryOf(top);
    if ('origin' in repository) {
      const remote =
        repository.origin === undefined
          ? undefined
          : remoteIdentity(repository.origin, top, { named: 'the origin remote', of: ` of the git repository ${top}` });
      if (remote) return remote;
      const named = namedBy(path.basename(top), `the git work tree ${top} (no origin remote)`);
      if (named) return named;
    } else refused = `, whose git work tree ${top} has no usable repository: ${repository.refused}`;
  }
  return namedBy(path.basename(folder), `the folder ${folder} (no git repository${refused})`) ?? { none: `the name of ${folder} makes no space id` };
}

/**
 * The project of a remote: `owner-repo-<hash>`, the hash of the whole canonical form. A clone's
 * origin and a call's project argument (config/project-argument.ts) meet here, so one remote is one
 * space whichever way it reached the server. `base`: where a local path is resolved from; `said`:
 * how `from` names the remote, and what follows it.
 */
export function remoteIdentity(origin: string, base: string, said: { named: string; of?: string }): ProjectIdentity | undefined {
  const project = remoteProject(origin, base);
  if (!project) return undefined;
  const legacy = toSpaceId(repositoryName(origin) ?? '');
  return {
    space_id: hashedSpaceId(project.readable, project.canonical),
    from: `${said.named} ${withoutCredentials(origin)} (project ${project.canonical})${said.of ?? ''}`,
    project: project.canonical,
    ...(legacy ? { legacy_id: legacy } : {}),
  };
}

/**
 * A folder's name as its project: the name made a space id; a name too long for one keeps its
 * first words and a hash of the whole, so two long names that differ only at the end stay apart.
 */
function namedBy(name: string, from: string): ProjectIdentity | undefined {
  const full = spaceIdChars(name);
  if (!full) return undefined;
  if (full.length <= MAX_SPACE_ID) return { space_id: full, from };
  return { space_id: hashedSpaceId(full, name), from, project: `folder ${name}`, legacy_id: toSpaceId(name) };
}

const MAX_SPACE_ID = 64;
/** Characters of the hash in an id: 50 bits, which no one makes collide by trying host names. */
const HASH_CHARS = 10;

/** `readable` cut so that `-` and the hash of `identity` fit in a space id; the hash alone when nothing is readable. */
export function hashedSpaceId(readable: string, identity: string): string {
  const hash = base32(createHash('sha256').update(identity).digest()).slice(0, HASH_CHARS);
  const head = spaceIdChars(readable)
    .slice(0, MAX_SPACE_ID - 1 - HASH_CHARS)
    .replace(/[_-]+$/, '');
  return head ? `${head}-${hash}` : hash;
}

/** RFC 4648 base32, lowercase, no padding: letters and digits only, as a space id wants. */
function base32(bytes: Buffer): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  return out;
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
export function workTreeTop(folder: string, home: string | undefined): string | undefined {
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
 * A name as a space id: letters, digits, _ and -, starting with a letter or digit, at most 64;
 * '' when nothing usable is left (a name of symbols only), which is no identity rather than a
 * catch-all space.
 */
export function toSpaceId(name: string): string {
  return spaceIdChars(name)
    .slice(0, MAX_SPACE_ID)
    .replace(/[_-]+$/, '');
}

/** A name in the characters of a space id, not yet cut to its length. */
function spaceIdChars(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9_-]+/g, '-')
    .replace(/^[_-]+/, '')
    .replace(/[_-]+$/, '');
}
